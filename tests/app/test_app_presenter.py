"""Presenter view and dark theme (ui/presenter.py): the URL and the toggles turn them on and follow each
other, the CSS is injected and the charts come restyled. AppTest cannot measure CSS: the browser tier
(tests/browser/test_browser_presenter.py) does."""

from explorer.figures.projector import DARK_BG, TICK_PX
from tests.app.helpers import assert_ok, figures, open_app
from ui import presenter

ATTENTION = "pages/attention.py"


def css(at) -> str:
    return "".join(h.proto.body for h in at.get("html") if presenter.CSS_MARK in h.proto.body)


def test_off_by_default_the_toggles_sit_in_the_sidebar():
    at = open_app(ATTENTION)
    assert at.session_state[presenter.PRESENT_ON] is False and at.session_state[presenter.DARK_ON] is False
    assert [t.key for t in at.sidebar.toggle] == [presenter.PRESENT_TOGGLE, presenter.DARK_TOGGLE]
    assert "display: none" not in css(at) and "invert" not in css(at)
    assert all(f["layout"]["paper_bgcolor"] == "white" for f in figures(at))  # the figures as built
    chart = at.get("plotly_chart")[0].proto
    assert '"displayModeBar": false' not in chart.config


def test_the_link_turns_presenter_mode_on_and_the_toggle_shows_it():
    at = open_app(ATTENTION, query={presenter.PRESENT: "1"})
    assert at.session_state[presenter.PRESENT_ON] is True
    assert at.toggle(key=presenter.PRESENT_TOGGLE).value is True
    assert not at.sidebar.toggle  # the sidebar is hidden: the toggles move to the page's corner menu
    assert "[data-testid=stSidebar]" in css(at) and "font-size: 20px" in css(at)
    assert at.query_params[presenter.PRESENT] in ("1", ["1"])
    for fig in figures(at):
        assert fig["layout"]["xaxis"]["tickfont"]["size"] >= TICK_PX
        assert fig["layout"]["yaxis"]["tickfont"]["size"] >= TICK_PX
    assert all('"displayModeBar":false' in el.proto.config.replace(" ", "") for el in at.get("plotly_chart"))
    at.toggle(key=presenter.PRESENT_TOGGLE).set_value(False).run()  # the way out
    assert_ok(at)
    assert at.session_state[presenter.PRESENT_ON] is False and presenter.PRESENT not in at.query_params
    assert "font-size: 20px" not in css(at)


def test_the_toggles_set_the_link_and_outlast_a_page_switch():
    at = open_app(ATTENTION)
    at.toggle(key=presenter.PRESENT_TOGGLE).set_value(True).run()
    at.toggle(key=presenter.DARK_TOGGLE).set_value(True).run()
    assert_ok(at)
    assert at.session_state[presenter.PRESENT_ON] and at.session_state[presenter.DARK_ON]
    assert at.query_params[presenter.PRESENT] in ("1", ["1"]) and at.query_params[presenter.DARK] in ("1", ["1"])
    assert "invert(1)" in css(at)
    assert all(f["layout"]["paper_bgcolor"] == DARK_BG for f in figures(at))
    at.switch_page("pages/positional.py").run()
    assert_ok(at)
    assert at.toggle(key=presenter.PRESENT_TOGGLE).value and at.toggle(key=presenter.DARK_TOGGLE).value
    assert "invert(1)" in css(at) and all(f["layout"]["paper_bgcolor"] == DARK_BG for f in figures(at))


def test_dark_alone_keeps_the_sidebar_and_the_sizes():
    at = open_app("pages/positional.py", query={presenter.DARK: "1"})
    assert at.session_state[presenter.DARK_ON] and not at.session_state[presenter.PRESENT_ON]
    assert at.sidebar.toggle(key=presenter.DARK_TOGGLE).value is True
    assert "invert(1)" in css(at) and "font-size: 20px" not in css(at)
    assert all(f["layout"]["paper_bgcolor"] == DARK_BG for f in figures(at))


def test_present_zero_in_the_link_turns_it_off():
    at = open_app(ATTENTION, query={presenter.PRESENT: "0"})
    assert at.session_state[presenter.PRESENT_ON] is False


def test_a_step_drawn_on_the_projector_leaves_the_view_every_student_shares_as_built():
    """pages/lessons.py shares a step's view between sessions unpickled (st.cache_resource): restyling it
    for one tab's projector must not restyle it for the next tab."""
    from tests.app.helpers import open_lesson
    step = {"lesson": "module6", "step": "2"}   # a heatmap with a colorbar: the projector restyles both
    plain = figures(open_lesson(step))
    projected = figures(open_lesson({**step, presenter.PRESENT: "1", presenter.DARK: "1"}))
    assert projected[0]["layout"]["paper_bgcolor"] == DARK_BG != plain[0]["layout"]["paper_bgcolor"]
    assert figures(open_lesson(step)) == plain
