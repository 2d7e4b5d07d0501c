"""``python -m mathlas.mcp``: the MCP stdio server (= ``mathlas mcp``)."""
import sys

from mathlas.extras import MissingExtra, require

try:
    require("mcp", "python -m mathlas.mcp")
except MissingExtra as e:
    print(f"mathlas: {e}", file=sys.stderr)
    sys.exit(2)

from mathlas.mcp.server import main  # noqa: E402 - only once the extra is known to be there

sys.exit(main())
