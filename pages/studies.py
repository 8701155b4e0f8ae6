"""Studies: every Optuna study kept here (the command line's and the Search page's), this visitor's first;
open one to see all of Optuna's plots of it, click a trial to select it and open its run, compare two side
by side, export a study's trials as CSV, delete one's own."""

import pandas as pd
import streamlit as st

from explorer.figures import studies as plots
from explorer.quoting import md, md_text
from explorer.search import studies
from ui import frame, widgets
from ui import studies as glue

frame.require_app()  # a deep link on a fresh server: rerun through app.py
glue.open_pending()  # "Open its run" was clicked: the sidebar has picked it, Attention shows it

TABS = {"history": "History", "intermediate": "Learning curves", "timeline": "Timeline", "slice": "Slice",
        "contour": "Contour", "edf": "EDF", "parallel": "Parallel coordinates", "importances": "Importance",
        "pareto": "Pareto front"}


def draw(name: str, kind: str, build, key_prefix: str = "studies") -> None:
    """One plot, or in words why it has nothing to show yet; a click on a trial selects it."""
    key = f"{key_prefix}_{kind}"
    try:
        fig = build()
    except (ValueError, RuntimeError) as err:
        st.caption(md_text(f"No {TABS[kind].lower()} yet: {err}."))
        return
    glue.keep_figure(key, fig)
    widgets.chart(fig, key=key, on_select=lambda: glue.on_chart_select(name, key), selection_mode="points")


def contour(study, name: str, names: list[str]) -> None:
    params = plots.parameters(study)
    if len(params) < 2:
        st.caption("No contour: the study searches one parameter; the slice shows it.")
        return
    left, right = st.columns(2)
    x = left.selectbox("Contour: across", params, index=0, key=f"studies_contour_x-{name}")
    y = right.selectbox("and up", params, index=1, key=f"studies_contour_y-{name}")
    draw(name, "contour", lambda: plots.contour(study, names, x, y))


def all_plots(study, name: str) -> None:
    names = studies.metric_names(study)
    multi = len(study.directions) > 1
    kinds = [k for k in TABS if k != ("pareto" if not multi else "intermediate")]
    tabs = dict(zip(kinds, st.tabs([TABS[k] for k in kinds])))
    builders = {"history": lambda: plots.history(study, names),
                "intermediate": lambda: plots.intermediate(study, names),
                "timeline": lambda: plots.timeline(study), "slice": lambda: plots.slice_plot(study, names),
                "edf": lambda: plots.edf(study, names), "parallel": lambda: plots.parallel(study, names),
                "importances": lambda: plots.importances(study, names), "pareto": lambda: plots.pareto(study, names)}
    for kind, tab in tabs.items():
        with tab:
            if kind == "contour":
                contour(study, name, names)
            else:
                draw(name, kind, builders[kind])


def trial_box(name: str, rows: list[dict]) -> None:
    """The selected trial: its state, values and settings, and the way to its run."""
    number = glue.selected(name)
    row = next((r for r in rows if r["number"] == number), None)
    if row is None:
        st.caption(":material/touch_app: Click a trial in a plot (or tick a row of the table) to select it.")
        return
    with st.container(border=True, key="studies_selected"):
        settings = ", ".join(f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}"
                             for k, v in row.items() if k not in ("number", "state", "seconds", "run", "started",
                                                                   "completed") and v is not None)
        st.markdown(f":material/target: **Trial {number}** ({row['state'].lower()}): {md(settings, None)}")
        if glue.can_open(row["run"]):
            st.button(f"Open its run {row['run']}", key="studies_open_run", icon=":material/open_in_new:",
                      on_click=glue.on_open_run, args=(row["run"],),
                      help="Pick this trial's run in the sidebar and look inside it on the Attention page.")
        else:
            st.caption("This trial saved no run that can be opened here (pruned before a run, deleted, or private).")


def trials_table(name: str, rows: list[dict], names: list[str]) -> None:
    numbers = [r["number"] for r in rows]
    number = glue.selected(name)
    table = pd.DataFrame([{**r, "run": glue.run_url(r["run"])} for r in rows])
    key = f"studies_trials-{number}"   # a new selection is a new table, its row ticked
    default = {"selection": {"rows": [numbers.index(number)]}} if number in numbers else None
    st.dataframe(table, key=key, hide_index=True, on_select=lambda: glue.on_row_select(name, key, numbers),
                 selection_mode="single-row", selection_default=default, width="stretch",
                 column_config={"run": st.column_config.LinkColumn("run", display_text=r"model_run=(.*)$"),
                                "seconds": st.column_config.NumberColumn("seconds", format="%.1f"),
                                **{m: st.column_config.NumberColumn(m, format="%.4g") for m in names}})


def open_study(summary) -> None:
    name = summary.name
    st.subheader(f"Study {md_text(name)}", anchor=False)
    st.caption(glue.facts(summary))
    study = studies.load(name)
    rows = studies.trial_table(study)
    actions = st.container(horizontal=True)
    actions.download_button("Trials (CSV)", lambda: studies.trials_csv(study), file_name=glue.file_name(name),
                            mime="text/csv", key="studies_csv", icon=":material/download:", on_click="ignore")
    refusal = glue.delete_refusal(summary)
    actions.button("Delete…", key="studies_delete", icon=":material/delete:", on_click=glue.ask_delete, args=(name,),
                   disabled=refusal is not None, help=refusal or "Delete this study: only its owner can.")
    if refusal:
        actions.caption(f":material/lock: {refusal}")
    trial_box(name, rows)
    all_plots(study, name)
    st.markdown("**Trials**")
    trials_table(name, rows, studies.metric_names(study))


def cell(value) -> str:
    """A setting or value as the comparison shows it: a float in 4 figures, a number as it is, none as —."""
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def compare(first, second) -> None:
    st.subheader("Compare", anchor=False)
    loaded = [studies.load(s.name) for s in (first, second)]
    columns = st.columns(2)
    for col, summary, study in zip(columns, (first, second), loaded):
        with col:
            st.markdown(f"**{md(summary.name, None)}**")
            st.caption(glue.facts(summary))
            draw(summary.name, "history", lambda study=study: plots.history(study, studies.metric_names(study)),
                 key_prefix=f"studies_compare_{'ab'[columns.index(col)]}")
    best = {s.name: studies.best_config(study) for s, study in zip((first, second), loaded)}
    settings = list(dict.fromkeys(k for b in best.values() for k in b))
    table = pd.DataFrame({n: [cell(b.get(k)) for k in settings] for n, b in best.items()}, index=settings)
    st.markdown("**Best configurations**")
    st.dataframe(table, width="stretch", column_config={"_index": st.column_config.TextColumn("setting")})


# ------------------------------------------------------------------------------------- page
st.title("Studies")
st.markdown("Every Optuna study kept on this server, made on the command line (`python -m explorer search`) or "
            "on the Search page; yours first. Open one for Optuna's plots of it (a click on a trial selects it "
            "and opens its run), compare two side by side, export its trials as CSV, delete your own.")
glue.confirm_delete()
items = glue.summaries()
if not items:
    st.info("No study yet: start one on the **Search** page, or from a terminal with `python -m explorer search`.",
            icon=":material/travel_explore:")
    st.stop()
st.dataframe(glue.list_table(items), hide_index=True, width="stretch", key="studies_list",
             column_config={"Whose": st.column_config.TextColumn(help=glue.WHOSE_HELP),
                            "Space": st.column_config.TextColumn(width="medium")})
by_name = {s.name: s for s in items}
names = list(by_name)
left, right = st.columns(2)
chosen = left.selectbox("Open a study", names, key=glue.STUDY, bind="query-params")
others = [n for n in names if n != chosen]
other = right.selectbox("Compare with", others, index=None, key=glue.COMPARE, bind="query-params",
                        placeholder="another study", disabled=not others)
if chosen in by_name:
    if other in by_name:
        compare(by_name[chosen], by_name[other])
    open_study(by_name[chosen])
