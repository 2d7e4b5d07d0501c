"""The core install and its extras (pyproject.toml, mathlas/extras.py), in the form a person meets
them: real ``mathlas`` subprocesses in which the extras' modules cannot be imported.

A ``sitecustomize`` on ``PYTHONPATH`` puts a finder in front of ``sys.meta_path`` that refuses the
blocked modules, as if they had never been installed: the core commands must still work, and each
command of an extra must say in one line which extra to install, and exit 2.
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from mathlas.extras import COMMANDS, EXTRAS

REPO = Path(__file__).resolve().parents[1]

BLOCKER = '''
import sys

BLOCKED = set({blocked!r})


class _NotInstalled:
    """Refuse the blocked modules as if they had never been installed."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''

# every module of every extra
ALL_EXTRAS = sorted({m for modules in EXTRAS.values() for m in modules} | {"httptools", "uvloop"})


def blocked_env(tmp_path: Path, blocked: list[str]) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(blocked)), encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def mathlas(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=120)


def test_the_blocker_blocks(tmp_path):
    """The fixture itself: with the blocker, importing an extra's module fails as if not installed."""
    env = blocked_env(tmp_path, ALL_EXTRAS)
    p = subprocess.run([sys.executable, "-c", "import sympy"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 1 and "ModuleNotFoundError: No module named 'sympy'" in p.stderr


COMMAND_ARGS = {
    "mcp": [],
    "serve": ["--port", "0"],
    "constant": ["1.6449340668482264364724151666460251892189499012068"],
    "verify-numeric": ["sum_{n>=1} 1/n^2 = pi^2/6"],
    "conjecture": ["1.4142135623730950488016887242096980785696718753769"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_command_of_a_missing_extra_says_which_to_install(tmp_path, command):
    extra = COMMANDS[command]
    p = mathlas(command, *COMMAND_ARGS[command], env=blocked_env(tmp_path, list(EXTRAS[extra])))
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    assert p.stderr == f"mathlas: mathlas {command} needs the {extra} extra: pip install 'mathlas[{extra}]'\n"


def test_every_command_of_an_extra_is_tested():
    assert set(COMMAND_ARGS) == set(COMMANDS)


@pytest.mark.slow
def test_core_commands_work_without_any_extra(tmp_path, tiny_bundle_dir):
    env = blocked_env(tmp_path, ALL_EXTRAS)
    p = mathlas("--help", env=env)
    assert p.returncode == 0, p.stderr
    assert "search" in p.stdout and "serve" in p.stdout  # the extras' commands are listed all the same

    p = mathlas("search", "finitely generated module", "-k", "3", "--bundle", str(tiny_bundle_dir), env=env)
    assert p.returncode == 0, p.stderr
    assert " 1. " in p.stdout and ("[lexical #" in p.stdout or "[dense #" in p.stdout)
    assert "Traceback" not in p.stderr

    p = mathlas("search", "ring", "--json", "--bundle", str(tiny_bundle_dir), env=env)
    assert p.returncode == 0 and '"hits"' in p.stdout, p.stderr
    first = p.stdout.split('"id": "', 1)[1].split('"', 1)[0]
    p = mathlas("show", first, "--bundle", str(tiny_bundle_dir), env=env)
    assert p.returncode == 0 and first in p.stdout, p.stderr

    p = mathlas("index", "info", str(tiny_bundle_dir), env=env)
    assert p.returncode == 0 and "tiny" in p.stdout, p.stderr


@pytest.mark.slow
def test_lean_commands_work_without_any_extra(tmp_path, formal_bundle_dir):
    env = blocked_env(tmp_path, ALL_EXTRAS)
    p = mathlas("lean", "search", "prime numbers are at least two", "-k", "3", "--bundle", str(formal_bundle_dir), env=env)
    assert p.returncode == 0, p.stderr
    assert " 1. lean:" in p.stdout and "Traceback" not in p.stderr
    first = p.stdout.split(" 1. ", 1)[1].split()[0]
    p = mathlas("lean", "deps", first, "--bundle", str(formal_bundle_dir), "--json", env=env)
    assert p.returncode == 0 and first in p.stdout, p.stderr


def test_library_import_of_the_numeric_tools_names_the_extra(tmp_path):
    code = ("from mathlas.extras import MissingExtra\n"
            "try:\n"
            "    import mathlas.tools.numeric\n"
            "except ImportError as e:\n"
            "    print(type(e).__name__, e.name, e, sep='|')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=blocked_env(tmp_path, ["sympy"]), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "MissingExtra|sympy|mathlas.tools.numeric needs the numeric extra: pip install 'mathlas[numeric]'\n"


@pytest.mark.slow
def test_mcp_server_without_the_numeric_extra_lists_the_other_tools(tmp_path):
    """The MCP server with the mcp extra but not the numeric one: the numeric tools are not listed,
    every other tool is, and stderr says which extra would add them."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from mathlas.mcp.registry import FACTS
    from mathlas.tools import TOOL_MODULES

    params = StdioServerParameters(command=sys.executable, args=["-m", "mathlas", "mcp"],
                                   env=blocked_env(tmp_path, ["mpmath", "sympy"]))
    errlog = (tmp_path / "stderr.txt").open("w+", encoding="utf-8")

    async def names() -> list[str]:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [t.name for t in (await session.list_tools()).tools]

    listed = asyncio.run(asyncio.wait_for(names(), 120))
    numeric = set(TOOL_MODULES["mathlas.tools.numeric"])
    formal = {name for name, f in FACTS.items() if f.needs_formal_bundle}  # listed only with a formal bundle
    others = [n for names in TOOL_MODULES.values() for n in names if n not in numeric | formal]
    assert not numeric & set(listed)
    assert set(others) <= set(listed)
    errlog.seek(0)
    assert "needs the numeric extra: pip install 'mathlas[numeric]'" in errlog.read()


def _extra_requirements(project: dict, extra: str) -> set[str]:
    """Distribution names an extra brings, following ``mathlas[other]`` references."""
    names: set[str] = set()
    for spec in project["optional-dependencies"][extra]:
        req = Requirement(spec)
        if req.name == "mathlas":
            for other in req.extras:
                names |= _extra_requirements(project, other)
        else:
            names.add(req.name)
    return names


# modules of an extra that come with another of its distributions (the mcp SDK brings both)
BROUGHT_BY = {"anyio": "mcp", "pydantic": "mcp"}


def test_core_dependencies_leave_the_extras_out():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {Requirement(s).name for s in project["dependencies"]}
    for extra, modules in EXTRAS.items():
        brought = _extra_requirements(project, extra)
        for module in modules:
            assert BROUGHT_BY.get(module, module) in brought, f"the {extra} extra does not bring {module}"
            assert module not in core and BROUGHT_BY.get(module, module) not in core, f"{module} is a core dependency"
    everything = _extra_requirements(project, "all")
    assert {"mcp", "starlette", "uvicorn", "mpmath", "sympy", "httptools"} <= everything
    assert not core & everything
    # CI tests everything the runtime can use, and lints
    assert everything | {"pytest", "ruff", "torch", "playwright", "ray"} <= _extra_requirements(project, "test")


def test_format_critical_dependencies_are_bounded():
    """A bundle's bm25/ is tantivy's on-disk index and its vectors usearch's file: both pinned below
    the next release that may change those formats."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = {Requirement(s).name: Requirement(s).specifier for s in project["dependencies"]}
    from importlib.metadata import version

    for name in ("tantivy", "usearch"):
        assert any(s.operator == "<" for s in specs[name]), f"{name} has no upper bound"
        assert specs[name].contains(version(name)), f"the installed {name} {version(name)} is outside {specs[name]}"
