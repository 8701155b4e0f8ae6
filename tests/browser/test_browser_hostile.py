"""Hostile links and tokens stay text in a real Chromium (explorer/quoting.py): a link whose values break
out of a code span and an uploaded TSV of markup tokens leave no outside link or image in the DOM, no
Plotly markup from a token in the SVG, and no request to the outside host."""

from urllib.parse import quote, urlparse

import pytest

from explorer.config import ModelConfig
from explorer.model import build_model
from explorer.store import runs
from explorer.tasks import make_task
from explorer.tasks.own_data import pairs_config
from explorer.train_config import TrainConfig
from tests.browser.helpers import WIDTH, wait_rendered
from tests.hostile import HOST, tsv
from ui import models, owner

pytestmark = pytest.mark.browser

TOKEN = "hostile-visitors-token-0123456789"   # this browser's owner cookie: the private run is its own
# Markup a token would draw in Plotly's SVG: <i> is an italic tspan, <b> a bold one.
MARKUP = """() => [...document.querySelectorAll('.main-svg tspan, .main-svg text')]
  .filter(t => /italic|bold/.test(t.getAttribute('style') || '')).map(t => t.textContent)"""
SVG_TEXT = "() => [...document.querySelectorAll('.main-svg text')].map(t => t.textContent).join(' ')"


def outside(page) -> dict:
    return page.evaluate(f"""() => ({{
        links: [...document.querySelectorAll('a[href*="{HOST}"]')].map(a => a.outerHTML),
        images: [...document.querySelectorAll('img[src*="{HOST}"], image[href*="{HOST}"]')].map(i => i.outerHTML)}})""")


def test_hostile_link_and_tokens_render_as_text(chromium, server, server_dir, monkeypatch):
    monkeypatch.setenv("EXPLORER_RUNS_DIR", str(server_dir / "runs"))
    task = make_task(pairs_config(tsv()))
    cfg = task.model_config(ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32))
    name = runs.save_run("hostile-tokens", build_model(cfg, seed=0), task.cfg, TrainConfig(steps=1), [],
                         owner=owner.id_of(TOKEN)).name
    context = chromium.new_context(viewport={"width": WIDTH, "height": 1000})
    context.add_cookies([{"name": owner.COOKIE, "value": TOKEN, "url": server}])
    fetched = []
    context.on("request", lambda r: fetched.append(r.url) if (urlparse(r.url).hostname or "").endswith(HOST) else None)
    try:
        page = context.new_page()
        link = quote(f"1` [click](https://{HOST}) `")
        page.goto(f"{server}/attention?cfg_d_model={link}&{models.SOURCE}={quote('Trained run')}"
                  f"&{models.RUN}={name}")
        wait_rendered(page)
        assert page.locator("text=Part of this link was not used").count() == 1
        assert page.locator(f"[data-testid=stSidebar] >> text={name}").count() >= 1   # the tokens' model
        svg = page.evaluate(SVG_TEXT)
        assert "<br>" in svg and "![i](https://ex…" in svg     # the tokens drawn as written, long ones shortened
        assert page.evaluate(MARKUP) == []
        assert outside(page) == {"links": [], "images": []}

        page.goto(f"{server}/search?search_space_lr={quote(f'1e-4:1e-2:log` ![i](https://{HOST}/p.png)')}")
        wait_rendered(page)
        assert page.locator("text=This search does not work").count() == 1
        assert outside(page) == {"links": [], "images": []}
        page.wait_for_timeout(500)
        assert fetched == []
    finally:
        context.close()
