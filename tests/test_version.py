"""The version is written once, in ``mathlas/__init__.py``: the package metadata, ``mathlas --version``,
the MCP server and the builder's manifests all read it from there."""
from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import mathlas

REPO = Path(__file__).resolve().parents[1]


def test_pyproject_reads_the_version_from_the_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "mathlas.__version__"}


def test_the_version_is_written_once_and_installed_as_written():
    written = re.findall(r'^__version__ = "([^"]+)"', (REPO / "mathlas" / "__init__.py").read_text(), re.M)
    assert written == [mathlas.__version__]
    assert importlib.metadata.version("mathlas") == mathlas.__version__


def test_every_package_of_the_code_is_in_the_wheel():
    """pyproject.toml lists the packages by hand: a new folder of code missing there works in a
    checkout (editable install) and is absent from a wheel (mathlas.ranking was)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = set(project["tool"]["setuptools"]["packages"])
    folders = {p.parent for root in (REPO / "mathlas", REPO / "build" / "mathlas_build") for p in root.rglob("*.py")
               if "__pycache__" not in p.parts}
    names = {".".join(f.relative_to(REPO / ("build" if "mathlas_build" in f.parts else "")).parts) for f in folders}
    assert names - listed == set()
