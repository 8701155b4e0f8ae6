"""The notebooks in notebooks/ run top to bottom on the library and are kept without stored outputs
(a notebook in git holds code and text; its figures are drawn when it runs). They run as Jupyter opens
them: the kernel in the notebook's own folder, `explorer` imported as installed by requirements-dev."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"


def test_the_tour_and_the_exercises_are_there():
    assert {p.name for p in NOTEBOOKS} >= {"tour.ipynb", "exercises.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_stored_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    stored = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert stored == [], f"{path.name}: cells {stored} keep outputs; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom_with_the_library_figures_inline(path):
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EXPLORER_PRETRAINED_DIR")}
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})   # Jupyter's working directory
    client.execute(env=env)   # a cell's error raises, with its traceback (no explorer: see README, "The library")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if PLOTLY in o.get("data", {})]
    tagged = [c for c in nb.cells if "figure" in c.metadata.get("tags", [])]   # cells that end in a figure
    assert len(figures) == len(tagged) >= 3
    assert all(PLOTLY in o.get("data", {}) for c in tagged for o in c.outputs[-1:])
