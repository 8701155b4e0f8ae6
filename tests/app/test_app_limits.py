"""The app holds its pages to the limits every path shares (explorer/limits.py): the widgets' ranges are the
caps, and the Search page refuses a space over the caps, over its work or whose largest trial is over the
budget, before any trial (no study is opened, no job started)."""

import pytest

from explorer.jobs.search import SearchJob
from explorer.limits import CAPS
from tests.app.helpers import assert_ok, open_app
from ui import model_config, search_params, train_settings

PAGE = "pages/search.py"


def test_the_widgets_ranges_are_the_caps():
    assert {f: top for f, (_, top) in model_config.RANGES.items() if f != "dropout"} == \
        {f: CAPS[f] for f in ("d_model", "n_heads", "n_encoder_layers", "n_decoder_layers", "max_len")}
    assert max(model_config.D_FF_OPTIONS) == CAPS["d_ff"]
    assert train_settings.NUMBERS[train_settings.TRAIN_STEPS][1] == CAPS["steps"]
    assert train_settings.NUMBERS[train_settings.TRAIN_BATCH][1] == CAPS["batch_size"]


@pytest.fixture
def opened(monkeypatch):
    """Every SearchJob the page made (none should be)."""
    made = []
    init = SearchJob.__init__

    def recording(self, *args, **kw):
        made.append(self)
        init(self, *args, **kw)

    monkeypatch.setattr(SearchJob, "__init__", recording)
    return made


def _space(at, **specs):
    at.multiselect(key=search_params.SEARCH_FIELDS).set_value(list(specs)).run()
    for name, text in specs.items():
        at.text_input(key=f"{search_params.SEARCH_SPACE}_{name}").set_value(text).run()
    return at


@pytest.mark.parametrize(("specs", "says"), [
    ({"steps": "50000:100000", "d_model": "1024"}, "d_model=1,024 is over the limit of this machine"),
    ({"steps": "50000:100000", "d_model": "16, 32"}, "8 trials x 100,000 steps is more than one search may take"),
], ids=["d_model over its cap", "steps over the work"])
def test_a_space_over_the_caps_is_refused_before_start(opened, specs, says):
    at = _space(open_app(PAGE), **specs)
    assert_ok(at)
    assert any(says in e.value for e in at.error), [e.value for e in at.error]
    assert at.button(key="search_start").disabled and not opened


def test_a_space_whose_largest_trial_is_over_the_budget_is_refused_at_start(opened):
    at = _space(open_app(PAGE), d_model="64, 512", n_layers="1, 12")
    at.number_input(key=search_params.SEARCH_STEPS).set_value(2000).run()
    assert not at.error and not at.button(key="search_start").disabled   # within the caps and the work
    at.button(key="search_start").click().run()
    assert_ok(at)
    assert any("the largest trial this search can make (d_model=512, n_layers=12) is refused" in e.value
               and "over the 10 min limit" in e.value for e in at.error), [e.value for e in at.error]
    assert len(opened) == 1 and not hasattr(opened[0], "study")   # refused before its study was opened
