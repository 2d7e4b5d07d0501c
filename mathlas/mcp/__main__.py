"""``python -m mathlas.mcp``: the MCP stdio server (= ``mathlas mcp``)."""
import sys

from mathlas.mcp.server import main

sys.exit(main())
