"""`pip install .` makes the library a package another project can depend on: `import explorer` and the
`explorer` command work outside the checkout (into a fresh venv that borrows the machine's torch, so
nothing is downloaded)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "requirements.txt", "README.md", "explorer")


def _run(cmd, cwd, env=None, timeout=300):
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EXPLORER_PRETRAINED_DIR")}
    return subprocess.run(cmd, cwd=cwd, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=timeout)


def test_pip_install_gives_the_package_and_the_explorer_command(tmp_path):
    src = tmp_path / "src"  # a copy: building in the checkout would leave build/ and *.egg-info behind
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO / name, src / name)
    venv = tmp_path / "venv"
    # No pip of its own: ensurepip's old setuptools would shadow the machine's; the machine's pip installs into it.
    assert _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                tmp_path).returncode == 0
    python, command = venv / "bin" / "python", venv / "bin" / "explorer"
    done = _run([str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                 str(src)], tmp_path)
    assert done.returncode == 0, done.stderr
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    where = _run([str(python), "-c", "import explorer, importlib.util as u; print(explorer.__file__); "
                  "print(u.find_spec('ui'), u.find_spec('pages'), u.find_spec('tests'))"], elsewhere)
    assert where.returncode == 0, where.stderr
    lines = where.stdout.splitlines()
    assert Path(lines[0]).is_relative_to(venv) and lines[1] == "None None None"   # the library only
    bad = _run([str(command), "figure", "bogus", "--model", "x", "--out", "a.png"], elsewhere)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and bad.stderr.startswith("explorer figure: error: "
                                                                                         "unknown figure kind")
    no_models = _run([str(command), "report", "copy", "--out", "r.html"], elsewhere)
    assert no_models.returncode == 2 and "EXPLORER_PRETRAINED_DIR" in no_models.stderr
    shipped = _run([str(command), "report", "copy", "--out", "r.html"], elsewhere,
                   env={"EXPLORER_PRETRAINED_DIR": str(REPO / "pretrained")})
    assert shipped.returncode == 0, shipped.stderr
    assert (elsewhere / "r.html").read_text(encoding="utf-8").count('class="figure"') >= 5
    assert not list(venv.glob("lib/python*/site-packages/runs"))     # an installed explorer keeps runs in ./runs
