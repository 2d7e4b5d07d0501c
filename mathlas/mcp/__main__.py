"""``python -m mathlas.mcp``: the MCP stdio server (= ``mathlas mcp``, its options and its bundle check)."""
import sys

from mathlas.extras import exit_unless

exit_unless("mcp", "python -m mathlas.mcp")

from mathlas.cli.mcp import main  # noqa: E402 - only once the extra is known to be there

sys.exit(main())
