"""The shape of the code, read from its imports: no import circle among mathlas' modules (lazy
imports inside functions count, and so do imports for type checking only), the layers import
downwards only (surfaces -> service -> ranking -> storage; ``mathlas.service`` nothing of
``mathlas.tools``, the ranking nothing of the surfaces or of ``mathlas.engine``), the format module is
a leaf, and the build pipeline imports only what the written build/runtime contract allows
(docs/bundle-format.md, "Build and runtime")."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# What build/ may import from mathlas: the format, the encoder a bundle carries (the build embeds
# with the same code the runtime encodes queries with), the errors, and the version string.
# mathlas.lean_gloss: the notation table documents are indexed with and queries searched with (as
# mathlas.bundle's symbol_words), so both sides read the one table; a leaf like the format module.
# mathlas.atomic: a file written to a temporary name and renamed (the manifest's own write), a leaf
BUILD_MAY_IMPORT = {"mathlas", "mathlas.atomic", "mathlas.bundle", "mathlas.encoder", "mathlas.errors",
                    "mathlas.lean_gloss"}
from conftest import TRAINING_FILES, TRAINING_MAY_IMPORT  # noqa: E402



def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, package: str, type_checking: bool = False) -> set[str]:
    """Every ``mathlas...`` module ``path`` imports, at any depth; those under ``if TYPE_CHECKING``
    only with ``type_checking`` (a circle through a type annotation is still a circle to a reader)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if not type_checking and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for b in node.body for n in ast.walk(b))
    me = package.split(".")
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "mathlas")
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing package
                base = me[: len(me) - node.level + 1] if path.name == "__init__.py" else me[: len(me) - node.level]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "mathlas":
                continue
            out.add(mod)
            for a in node.names:  # `from mathlas.cli import search` imports the module mathlas.cli.search
                if f"{mod}.{a.name}" in MODULES:
                    out.add(f"{mod}.{a.name}")
    return out


MODULES = {_module_name(p, REPO): p for p in (REPO / "mathlas").rglob("*.py")}


def _graph(type_checking: bool = False) -> dict[str, set[str]]:
    files = MODULES
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {m for m in _imports(path, package, type_checking) if m in files and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


@pytest.mark.slow
def test_no_import_circle_in_mathlas():
    graph = _graph(type_checking=True)
    # a package's __init__ is imported with any of its modules; an edge from a module back to its
    # own package's __init__ is a circle only when that __init__ imports modules (mathlas.cli's
    # does not; mathlas/__init__ imports only leaves)
    assert len(graph) > 60
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_format_module_is_a_leaf():
    assert _imports(REPO / "mathlas" / "bundle.py", "mathlas") == {"mathlas.errors", "mathlas.atomic"}
    assert _imports(REPO / "mathlas" / "lean_gloss.py", "mathlas") == set()
    assert _imports(REPO / "mathlas" / "atomic.py", "mathlas") == set()


def test_build_imports_only_the_contract():
    offenders = []
    for path in sorted((REPO / "build" / "mathlas_build").rglob("*.py")):
        package = "mathlas_build"
        for mod in _imports(path, package):
            # `from mathlas import __version__` names mathlas.__version__, which is the package
            name = "mathlas" if mod == "mathlas.__version__" else mod
            rel = path.relative_to(REPO).as_posix()
            if name not in BUILD_MAY_IMPORT and not (rel in TRAINING_FILES and name in TRAINING_MAY_IMPORT):
                offenders.append(f"{rel}: {mod}")
    assert not offenders, "build/ imports outside the contract:\n" + "\n".join(offenders)


@pytest.mark.slow
def test_the_graph_reader_sees_lazy_imports():
    # the checks above are only as good as the reader: a lazy import inside a function is an edge
    graph = _graph()
    assert "mathlas.releases.install" in graph["mathlas.engine"]  # imported inside OpenBundles.get
    assert "mathlas.ranking.pipeline" in graph["mathlas.engine"]  # imported inside Bundle.search
    # an import for type checking only is an edge of the stricter graph the circle test reads
    assert "mathlas.ranking.plan" not in graph["mathlas.ranking.stages"]
    assert "mathlas.ranking.plan" in _graph(type_checking=True)["mathlas.ranking.stages"]


def test_the_reader_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for m in graph[todo.pop()] - seen:
            seen.add(m)
            todo.append(m)
    return seen


@pytest.mark.slow
def test_layers_import_downwards_only():
    graph = _graph(type_checking=True)
    # the seam (service) sits below the tools that call it: NextStep is the service's
    assert not {m for m in graph["mathlas.service"] if m.startswith("mathlas.tools")}
    # the ranking imports no surface, no tool and not the storage's module (it reads a bundle it is given)
    ranking = [m for m in graph if m.startswith("mathlas.ranking")]
    assert len(ranking) >= 10
    above = ("mathlas.service", "mathlas.tools", "mathlas.cli", "mathlas.mcp", "mathlas.web", "mathlas.engine",
             "mathlas.render")
    for m in ranking:
        bad = sorted(x for x in graph[m] if x.startswith(above))
        assert not bad, f"{m} imports {bad}"
    # the saved findings' search reads the store, never the engine
    assert "mathlas.engine" not in _reaches(graph, "mathlas.findings.search")


def test_the_bundle_class_stores_and_stays_small():
    """Issue 29: ``Bundle`` is storage (files, table, ids, documents, hits, lazy parts) in at most 300
    lines; what the manifest declares for the ranking is read by ``mathlas.ranking.settings``, and the
    storage module says nothing of saved findings."""
    tree = ast.parse((REPO / "mathlas" / "engine.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Bundle")
    assert cls.end_lineno - cls.lineno + 1 <= 300
    assert "finding" not in (REPO / "mathlas" / "engine.py").read_text(encoding="utf-8").lower()


def test_python_dash_m_mathlas():
    proc = subprocess.run([sys.executable, "-m", "mathlas", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "usage: mathlas" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "mathlas", "search", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "-q, --quiet" in proc.stdout
