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
