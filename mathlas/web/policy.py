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
    installed bundle's ``name`` / ``name-version`` / ``name@version``, mapped to its directory (for
    the Lean tools, a formal one). A Lean tool (or a ``lean:`` id) on a server without a formal bundle
    gets ``BundleNotFoundError`` saying what the server's operator can do (``Served.need_formal``):
    the library's own advice, ``bundle=PATH``, is one this policy refuses."""

    def __init__(self, served: api.Served):
        self.served = served

    def __call__(self, tool: str, value: Any, arguments: dict | None = None) -> str | None:
        if value is None or (isinstance(value, str) and not value.strip()):
            lean_id = tool in DOCUMENT_TOOLS and str((arguments or {}).get("id") or "").strip().startswith("lean:")
            if tool in FORMAL_TOOLS or lean_id:
                self.served.need_formal()  # none served: what the server's operator can do, not `bundle=PATH`
                return self.served.formal
            return self.served.specs[0]
        if not isinstance(value, str) or _NAME.fullmatch(value.strip()) is None or ".." in value:
            raise self._refuse(tool, value, path=True)
        value = value.strip()
        try:
            if tool in FORMAL_TOOLS:
                return self.served.pick_formal(value)
            return self.served.pick(value)
        except (api.UsageError, api.BundleNotFoundError):  # not served here: an installed one may be named
            pass
        hits = [b for b in api.installed() if value in (b.name, f"{b.name}-{b.version}", f"{b.name}@{b.version}")
                and (tool not in FORMAL_TOOLS or (b.manifest is not None and "lean" in b.manifest.sources))]
        if hits:
            return str(hits[-1].path)  # installed() sorts by version: a bare name is the newest
        raise self._refuse(tool, value)

    def _refuse(self, tool: str, value: Any, path: bool = False) -> api.MathlasError:
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        if tool in FORMAL_TOOLS:  # the formal bundle it serves, or, when it has none, what its operator can do
            problem = self.served.formal_problem()
            if problem is not None:
                why = " (over HTTP a request names a bundle, never a path)" if path else ""
                return api.BundleNotFoundError(f"bundle {shown} is not a bundle this server offers{why}; "
                                               f"{'; '.join(problem)}")
            known = sorted(self.served.names(self.served.formal, formal=True))
            names = next((n for n in known if "-" in n and "/" not in n), "its formal bundle")  # name-version
        else:
            names = ", ".join(self.served.labels()) or "the default bundle"
        return api.UsageError(f"bundle {shown} is not a bundle this server offers: over HTTP name one it serves "
                              f"({names}) or an installed one (GET /api/bundles lists them); paths are for the "
                              "local command line and stdio")
