"""``mathlas serve``: mathlas over HTTP.

One ASGI app (starlette, served by uvicorn) with four faces:

* ``POST /search``: TheoremSearch's REST API, so a program written against it works against a local
  mathlas by changing only the base URL (``theoremsearch.py``);
* ``/api/...``: mathlas's own JSON API, the same JSON as ``mathlas search --json`` / ``show --json``
  and the formal tools (``app.py``);
* ``/mcp``: the MCP tools of ``mathlas mcp`` over the SDK's streamable-HTTP transport;
* ``/``: a search page for people, with KaTeX vendored under ``static/katex`` (no CDN).

Every call into the library goes through ``api.py``. Importing this package loads nothing heavy.
"""
