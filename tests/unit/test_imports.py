"""No import cycle in explorer/, and the CLI (explorer/cli/) on top of it. The graph is read from the source
with `ast`; nothing is imported.

What is an edge (module A -> module B, both in explorer/):
- every `import` and `from ... import` in A, at module level or inside a function, class or `if` (an import
  deferred into a function still closes a cycle when it runs); relative imports are resolved;
- `from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg` (a name defined there);
- importing `a.b.c` runs the `__init__` of `a` and `a.b` first, so it is also an edge to each of those packages,
  except the packages A itself is inside: a module inside a package is reached through it, so its parent's
  `__init__` importing it back (a package re-exporting its own submodules) is no cycle. A module inside a
  package that names the package explicitly (`from . import NAME`, `from explorer.pkg import NAME`) does make
  an edge to it: the package's `__init__` importing that module back is a cycle like any other.
Not counted: `importlib.import_module` with a computed name (explorer.search's lazy names, its own submodules).

A cycle is a strongly connected component of more than one module; the failure lists each with one chain
of imports round it (`a -> b -> c -> a`) and the line of each import. On top: only explorer/__main__.py
imports explorer.cli, never the rest of the library, app.py, ui/ or pages/.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "explorer"


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted name -> file of every module under root/package (a package is its __init__.py)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of `from <level dots><module> import ...` in `importer`."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _targets(importer: str, is_package: bool, node: ast.AST, known: dict) -> list[str]:
    """The modules one import statement names (`from pkg import a, b`: pkg.a and pkg.b where they are modules,
    pkg for the rest); only those of `known` count."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    source = _resolve(importer, is_package, node.level, node.module)
    named = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in known]
    return named + ([source] if len(named) < len(node.names) else [])


def imports(path: Path, name: str, known: dict) -> dict[str, int]:
    """The modules of `known` the file at `path` (module `name`) imports, as the docstring defines an edge,
    each with the line of its first import."""
    is_package = path.name == "__init__.py"
    inside = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)} | {name}
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for target in _targets(name, is_package, node, known):
            parts = target.split(".")
            reached = [".".join(parts[:k]) for k in range(1, len(parts))]   # the packages it runs first
            for t in [target] + [p for p in reached if p not in inside]:
                while t not in known and "." in t:   # a name in a module: the module
                    t = t.rsplit(".", 1)[0]
                if t in known and t != name:
                    out[t] = min(out.get(t, node.lineno), node.lineno)
    return out


def graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, dict[str, int]]:
    """importer -> {imported module: line of the first such import}, every module of the package."""
    known = modules(root, package)
    return {name: imports(path, name, known) for name, path in known.items()}


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def chain(edges: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """One shortest way round the component from its first module back to it (breadth first, inside it)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"{component} is not a cycle")


def describe(edges: dict[str, dict[str, int]], component: list[str]) -> str:
    way = chain(edges, component)
    steps = " -> ".join(f"{a} (line {edges[a][b]})" for a, b in zip(way, way[1:])) + f" -> {way[-1]}"
    return f"{len(component)} modules: {', '.join(component)}\n    {steps}"


def test_explorer_has_no_import_cycle():
    edges = graph()
    found = cycles(edges)
    assert not found, "import cycles in explorer/:\n" + "\n".join(describe(edges, c) for c in found)


def test_only_the_entry_points_import_the_cli():
    """The CLI sits on top: no module of the library but explorer/__main__.py imports explorer.cli, and neither
    does the app (app.py, ui/, pages/): what a page needs from a command lives in the library."""
    known = modules()
    cli = {name for name in known if name == "explorer.cli" or name.startswith("explorer.cli.")}
    app = [ROOT / "app.py", *sorted((ROOT / "ui").rglob("*.py")), *sorted((ROOT / "pages").rglob("*.py"))]
    files = {**{name: path for name, path in known.items() if name not in cli and name != "explorer.__main__"},
             **{".".join(p.relative_to(ROOT).with_suffix("").parts): p for p in app}}
    offenders = [f"{name} (line {line}) imports {target}" for name, path in files.items()
                 for target, line in imports(path, name, known).items() if target in cli]
    assert cli and not offenders, "\n".join(offenders)


def test_the_graph_sees_what_the_docstring_says(tmp_path):
    """A function-level import closes a cycle; `from pkg import module` is an edge to the module; a package
    re-exporting its own submodule is none, but that submodule naming the package back is one."""
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from .sub import b\n",
        "sub/__init__.py": "from . import b\nfrom .b import thing\n",
        "sub/b.py": "def thing():\n    from ..c import x\n",
        "c.py": "import demo.a\nx = 1\n",
        "d.py": "from demo import c\n",
        "p/__init__.py": "from .q import y\n",
        "p/q.py": "from . import z\ny = 1\n",
        "p/z.py": "",
    }
    (pkg / "p").mkdir()
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    edges = graph(tmp_path, "demo")
    assert edges["demo.a"] == {"demo.sub.b": 1, "demo.sub": 1}
    assert edges["demo.sub"] == {"demo.sub.b": 1}          # re-exports: no edge back from b to its package
    assert edges["demo.sub.b"] == {"demo.c": 2}
    assert edges["demo.d"] == {"demo.c": 1}
    assert edges["demo.p.q"] == {"demo.p.z": 1}            # `from . import z`: the module, not the package
    assert cycles(edges) == [["demo.a", "demo.c", "demo.sub", "demo.sub.b"]]
    (pkg / "p/z.py").write_text("from demo.p import y\n")  # names its package, whose __init__ imports q -> z
    assert cycles(graph(tmp_path, "demo"))[-1] == ["demo.p", "demo.p.q", "demo.p.z"]


def packages_of(edges: dict[str, dict[str, int]], package: str = PACKAGE) -> dict[str, dict[str, str]]:
    """subpackage -> {subpackage it imports: one module-level import that does it}, between the subpackages of
    `package` (explorer/'s flat modules are the core every subpackage may use, so they are no node)."""
    def sub(name: str) -> str | None:
        parts = name.split(".")
        return parts[1] if len(parts) > 2 or (len(parts) == 2 and f"{name}.__init__" in subpackage_inits) else None

    subpackage_inits = {f"{n}.__init__" for n, p in modules(ROOT, package).items() if p.name == "__init__.py"}
    out: dict[str, dict[str, str]] = {}
    for a, targets in edges.items():
        pa = sub(a)
        if pa is None:
            continue
        out.setdefault(pa, {})
        for b, line in targets.items():
            pb = sub(b)
            if pb is not None and pb != pa:
                out[pa].setdefault(pb, f"{a} (line {line}) imports {b}")
    return out


def test_no_subpackage_imports_one_that_imports_it_back():
    by_package = packages_of(graph())
    found = cycles({p: dict.fromkeys(targets, 0) for p, targets in by_package.items()})
    assert len(by_package) >= 10
    assert not found, "subpackages of explorer/ that import each other round:\n" + "\n".join(
        "  " + ", ".join(c) + ": " + "; ".join(by_package[a][b] for a in c for b in c if b in by_package[a])
        for c in found)


def test_no_module_imports_a_name_private_to_another():
    """`from explorer.x import _name` reaches into x's insides: a name another module needs is public."""
    offenders = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PACKAGE)):
                offenders += [f"{name} (line {node.lineno}) imports {a.name} from {node.module}"
                              for a in node.names if a.name.startswith("_")]
    assert not offenders, "\n".join(offenders)


def test_explorer_keeps_at_most_15_files_flat():
    """Everything else lives in the subpackage of its responsibility (CONTRIBUTING.md, "The tree")."""
    flat = sorted(p.name for p in (ROOT / PACKAGE).glob("*.py"))
    assert len(flat) <= 15, flat


def test_no_test_module_imports_another():
    """What tests share lives in non-test modules (tests/<tier>/helpers.py, a folder's samples.py, conftest
    fixtures): a test module imported by another would run its tests' imports and couple the two."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names] if \
                isinstance(node, ast.ImportFrom) else []
            if any(part.startswith("test_") for name in names for part in name.split(".")):
                offenders.append(f"{path.relative_to(ROOT)} (line {node.lineno}) imports {', '.join(names)}")
    assert not offenders, "\n".join(offenders)
