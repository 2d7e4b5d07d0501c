"""MCP, mathlas's surface for AI agents: the server (``server``), what each tool tells a client
beyond its signature (``registry``) and the text block of each answer (``text``).

``mathlas.mcp.server`` (and the HTTP app that mounts it) alone import the ``mcp`` SDK; ``registry`` and ``text``
import neither the SDK nor any tool. ``python -m mathlas.mcp`` serves over stdio (= ``mathlas mcp``).
"""
