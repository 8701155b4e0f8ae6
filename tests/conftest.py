"""Shared test setup: the repository root on sys.path, so `explorer` and `pages` import the same
way under `pytest` as under `python -m pytest` and `streamlit run`."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
