"""The library never depends on the UI."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_explorer_never_imports_streamlit():
    modules = sorted(p.stem for p in (ROOT / "explorer").glob("*.py") if not p.stem.startswith("__"))
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module('explorer.' + m)\n"
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for path in (ROOT / "explorer").glob("*.py"):
        assert "import streamlit" not in path.read_text(), path
