"""`pip install .` makes the library a package another project can depend on: `import explorer` and the
`explorer` command work outside the checkout (into a fresh venv that borrows the packages of the Python
running the tests, installed by requirements-dev: torch, setuptools; so nothing is downloaded and nothing of
the base interpreter's is used)."""

import os
import shutil
import site
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
    # No pip of its own (ensurepip's setuptools 65 cannot build a wheel); a .pth lends it this Python's packages
    # (its pip, setuptools, torch), after its own site-packages, where the install goes.
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path).returncode == 0
    python, command = venv / "bin" / "python", venv / "bin" / "explorer"
    own = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path)
    Path(own.stdout.strip(), "lent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
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
