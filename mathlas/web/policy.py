"""What an HTTP client may name as a bundle in an MCP tool call: a bundle this server serves, or a
bundle installed in the data directory, by name; never a path.

Over stdio the client is the user's own agent and ``bundle`` may be any directory, as on the command
line. Over HTTP anyone who can reach the port (on loopback: any local program, without a token) sends
it, and a path there would tell whether ``/etc`` or ``/root`` exist, read sizes of files outside a
bundle through a manifest that lists them, and keep every directory named open. So ``/mcp`` checks
every tool's ``bundle`` argument with ``HttpBundlePolicy`` (the MCP server's ``bundle_policy`` hook)
before the tool runs: the value is compared with names only, nothing is opened or even looked up
on disk for it, and a refusal is one line.
"""
from __future__ import annotations

import re
from typing import Any

from mathlas.web import api

FORMAL_TOOLS = frozenset({"search_formal_math", "get_dependencies"})
DOCUMENT_TOOLS = frozenset({"get_by_id", "get_statement"})  # a lean: id is read from the formal bundle
# an installed bundle's name, ``name-version`` or ``name@version``: no separators, no leading dot
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+@-]{0,127}")


class HttpBundlePolicy:
    """``policy(tool, value) -> spec``: ``value`` (the client's ``bundle``) as the spec to open, or
    ``UsageError``. ``None`` or empty: the server's default (the first served bundle, or the formal
    one for the Lean tools). Otherwise one of the names ``Served`` knows for a served bundle, or an
    installed bundle's ``name`` / ``name-version`` / ``name@version``, mapped to its directory."""

    def __init__(self, served: api.Served):
        self.served = served

    def __call__(self, tool: str, value: Any, arguments: dict | None = None) -> str | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            lean_id = tool in DOCUMENT_TOOLS and str((arguments or {}).get("id") or "").strip().startswith("lean:")
            return self.served.formal if tool in FORMAL_TOOLS or lean_id else self.served.specs[0]
        if not isinstance(value, str) or _NAME.fullmatch(value.strip()) is None or ".." in value:
            raise self._refuse(value)
        value = value.strip()
        try:
            if tool in FORMAL_TOOLS:
                return self.served.pick_formal(value)
            return self.served.pick(value)
        except api.UsageError:
            pass
        hits = [b for b in api.installed() if value in (b.name, f"{b.name}-{b.version}", f"{b.name}@{b.version}")]
        if hits:
            return str(hits[-1].path)  # installed() sorts by version: a bare name is the newest
        raise self._refuse(value)

    def _refuse(self, value: Any) -> api.UsageError:
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        names = ", ".join(self.served.labels()) or "the default bundle"
        return api.UsageError(f"bundle {shown} is not a bundle this server offers: over HTTP name one it serves "
                              f"({names}) or an installed one (GET /api/bundles lists them); paths are for the "
                              "local command line and stdio")
