"""The tools mathlas offers agents: plain typed functions that return dataclasses.

The MCP server (``mathlas.mcp.server``) is only an adapter over them, and the Python API calls the very
same functions::

    from mathlas.tools.informal import search_existing_math, get_by_id

Each tool module is listed in ``TOOL_MODULES`` with the names of its tools. Tool modules stay light
at import time (numpy, pyarrow, onnxruntime, sympy load inside the calls), so a server lists its
tools without loading any model. A tool suggests the next call as a ``mathlas.service.NextStep``.
"""
from __future__ import annotations

import importlib
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

# module -> the tool functions it exports, in the order clients see them
TOOL_MODULES: dict[str, tuple[str, ...]] = {
    "mathlas.tools.informal": ("search_existing_math", "get_by_id", "get_statement"),
    "mathlas.tools.lean_search": ("search_formal_math", "get_dependencies"),
    "mathlas.tools.numeric": ("identify_constant", "verify_numeric", "conjecture_relation"),
    "mathlas.tools.scaffold": ("applicability_checklist", "mapping_scaffold"),
    "mathlas.tools.directive": ("search_directive",),
    "mathlas.tools.oeis": ("identify_sequence",),
    "mathlas.tools.funsearch": ("funsearch",),
    "mathlas.tools.findings": ("add_finding",),
    "mathlas.tools.lean_check": ("verify_formal",),
}


def available_tool_names() -> list[str]:
    """Names of every tool, without importing any of them."""
    return [name for names in TOOL_MODULES.values() for name in names]


def load_tools() -> list[Callable]:
    """Every available tool function, in ``TOOL_MODULES`` order.

    A module that fails to import (a broken dependency) is skipped with a logged warning, so the
    other tools keep working.
    """
    tools: list[Callable] = []
    for module, names in TOOL_MODULES.items():
        try:
            mod = importlib.import_module(module)
        except Exception as e:  # noqa: BLE001 - one broken tool module must not take the others down
            log.warning("mathlas: tools of %s unavailable: %s: %s", module, type(e).__name__, e)
            continue
        for name in names:
            fn = getattr(mod, name, None)
            if callable(fn):
                tools.append(fn)
            else:
                log.warning("mathlas: %s has no tool %s", module, name)
    return tools
