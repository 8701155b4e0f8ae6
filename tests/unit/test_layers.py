"""The library never depends on the UI, and a Ray run's worker imports only what it trains with."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "explorer").rglob("*.py"))  # subpackages too, e.g. explorer/tasks/


def module_name(path: pathlib.Path) -> str:
    """explorer/tasks/base.py -> explorer.tasks.base; a package's __init__.py -> the package."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_module_names_follow_subpackages():
    names = {module_name(p) for p in SOURCES}
    assert {"explorer", "explorer.config", "explorer.tasks", "explorer.tasks.base"} <= names
    assert not any(n.endswith("__init__") for n in names)


def test_explorer_never_imports_streamlit():
    modules = sorted(module_name(p) for p in SOURCES)
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for path in SOURCES:
        assert "import streamlit" not in path.read_text(), path


def test_a_ray_run_s_worker_imports_neither_optuna_nor_pandas():
    """A new actor imports what it trains with: optuna and pandas cost it seconds before its first step
    (bench/README.md, "Training on a Ray cluster")."""
    code = "import sys, explorer.jobs.ray_actor; print(sorted({'optuna', 'pandas', 'ray'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
