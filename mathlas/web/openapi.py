"""``GET /openapi.json``: an OpenAPI 3.1 document for every endpoint of ``mathlas serve``.

The result schemas are generated from the library's own result dataclasses (``api.RESULT_TYPES``)
with pydantic, so the document cannot drift from what the endpoints return; the TheoremSearch
shapes are written out here, field by field, as TheoremSearch publishes them.
"""
from __future__ import annotations

import functools
from typing import Any, Protocol

from mathlas.request import MAX_K, SURFACE_MAX_K
from mathlas.web import api, theoremsearch

REF = "#/components/schemas/{model}"


def _q(name: str, schema: dict, description: str, *, required: bool = False, many: bool = False) -> dict:
    if many:
        schema = {"type": "array", "items": schema}
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema,
            **({"style": "form", "explode": True} if many else {})}


def _path(name: str, description: str) -> dict:
    return {"name": name, "in": "path", "required": True, "description": description, "schema": {"type": "string"}}


STR, INT, NUM = {"type": "string"}, {"type": "integer"}, {"type": "number"}
MODE = {"type": "string", "enum": list(theoremsearch.MODES), "default": "hybrid"}
ERRORS = {str(code): {"description": what, "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}}
          for code, what in ((400, "the body is not JSON"), (401, "missing or wrong token (servers started with --token)"),
                             (404, "unknown document, endpoint or bundle"), (413, "request body over the limit"),
                             (422, "a parameter the library refuses, with its message"),
                             (504, "the request took longer than the server's --timeout"))}


# /mcp's refusals (mathlas.web.guard.error, the SDK's own for a body that is not JSON or another method), their
# body a JSON-RPC error with the same line
MCP_ERRORS = {str(code): {"description": what, "content": {"application/json": {"schema": {"$ref": REF.format(model="JsonRpcError")}}}}
              for code, what in ((400, "the body is not JSON-RPC"), (401, "missing or wrong token (servers started with --token)"),
                                 (403, "the Origin is not allowed"), (405, "a method /mcp does not take"),
                                 (413, "request body over the limit"), (421, "the Host is not this server"),
                                 (422, "a request the server refuses, with its message"), (500, "the server failed"),
                                 (504, "the request took longer than the server's --timeout"))}


def _ok(model: str, description: str) -> dict:
    return {"200": {"description": description, "content": {"application/json": {"schema": {"$ref": REF.format(model=model)}}}},
            **ERRORS}


def _ts_schemas() -> dict[str, Any]:
    s = {"type": "string"}
    nullable = lambda t: {"type": [t, "null"]}  # noqa: E731
    strings = {"type": "array", "items": s}
    paper = {"type": "object", "required": ["paper_id", "source", "title", "authors", "link"], "properties": {
        "paper_id": s, "source": s, "title": s, "authors": strings, "link": s, "summary": nullable("string"),
        "journal_ref": nullable("string"), "primary_category": nullable("string"), "categories": strings,
        "citations": nullable("integer"), "year": nullable("integer"), "journal_published": nullable("boolean")}}
    theorem = {"type": "object", "required": ["theorem_id", "name", "body", "slogan", "theorem_type", "paper",
                                              "similarity", "score", "has_metadata"], "properties": {
        "slogan_id": {"type": "string", "description": "the mathlas id (one slogan per theorem)"},
        "theorem_id": {"type": "string", "description": "the mathlas stable id, e.g. stacks:00DV"},
        "name": s, "body": {"type": "string", "description": "the statement as its source writes it (LaTeX)"},
        "slogan": {"type": "string", "description": "the source's slogan, else the start of the retrieval text"},
        "theorem_type": s, "label": nullable("string"), "link": nullable("string"),
        "paper": {"$ref": REF.format(model="TheoremSearchPaper")},
        "similarity": {"type": ["number", "null"], "description": "exact dense cosine (null in lexical mode)"},
        "score": {"type": "number", "description": "the fused score the hits are ranked by"},
        "has_metadata": {"type": "boolean", "description": "the hit has paper metadata"},
        "ranks": {"type": "object", "additionalProperties": {"type": ["integer", "null"]},
                  "description": "mathlas: each channel's 1-based rank"}}}
    request = {"type": "object", "required": ["query"], "properties": {
        "query": s, "n_results": {"type": "integer", "minimum": 1, "maximum": SURFACE_MAX_K, "default": 10},
        "limit": {"type": "integer", "description": "alias of n_results"},
        "sources": {**strings, "description": "TheoremSearch source names (\"Stacks Project\", \"arXiv\"...) or mathlas ones (stacks)"},
        "authors": strings, "types": strings, "tags": {**strings, "description": "arXiv categories"},
        "categories": {**strings, "description": "alias of tags"},
        "paper_filter": {"type": ["string", "null"], "description": "part of the paper title"},
        "year_range": {"type": ["array", "null"], "items": nullable("integer"), "minItems": 2, "maxItems": 2},
        "citation_range": {"type": ["array", "null"], "items": nullable("integer"), "minItems": 2, "maxItems": 2},
        "citation_weight": {"type": "number", "default": 0.0},
        "include_unknown_citations": {"type": "boolean", "default": True},
        "prompt": {"type": ["string", "null"], "description": "accepted, ignored (reported)"},
        "db_top_k": {"type": ["integer", "null"], "description": "accepted, ignored (reported)"},
        "mode": {**MODE, "description": "mathlas extension"}, "bundle": {"type": "string", "description": "mathlas extension: a served bundle"}}}
    response = {"type": "object", "required": ["theorems"], "properties": {
        "theorems": {"type": "array", "items": {"$ref": REF.format(model="TheoremSearchTheorem")}},
        "mathlas": {"type": "object", "properties": {"bundle": s, "mode": s, "notes": strings,
                                                      "match": {"enum": ["strong", "weak", "none", None]},
                                                      "confidence": {"type": ["number", "null"]},
                                                      "ignored": {"type": "object", "additionalProperties": s}}}}}
    error = {"type": "object", "required": ["error", "status"], "properties": {"error": s, "status": {"type": "integer"}}}
    rpc_error = {"type": "object", "required": ["jsonrpc", "id", "error"], "properties": {
        "jsonrpc": {"const": "2.0"}, "id": {"type": "null"},
        "error": {"type": "object", "required": ["code", "message"], "properties": {
            "code": {"type": "integer", "description": "a JSON-RPC error code: -32600, or -32603 for a 5xx, from "
                                                        "mathlas; the SDK's own (-32700) for a body that is not JSON"},
            "message": s,
            "data": {"type": "object", "properties": {"status": {"type": "integer"}}}}}}}
    return {"TheoremSearchRequest": request, "TheoremSearchResponse": response, "TheoremSearchTheorem": theorem,
            "TheoremSearchPaper": paper, "Error": error, "JsonRpcError": rpc_error}


@functools.lru_cache(maxsize=1)
def _schemas() -> dict[str, Any]:
    from pydantic import TypeAdapter

    out: dict[str, Any] = {}
    for name, cls in api.RESULT_TYPES.items():
        schema = TypeAdapter(cls).json_schema(ref_template=REF, mode="serialization")
        out.update(schema.pop("$defs", {}))
        out[name] = schema
    # what the REST searches add to each step they can make themselves (api.with_hrefs)
    out["NextStep"]["properties"]["href"] = {"type": "string", "description": "this API's GET that makes the step "
                                             "(absent where there is none, e.g. identify_constant)"}
    out.update(_ts_schemas())
    return out


class TokenConfig(Protocol):
    """What the document needs of the server's configuration (``app.ServeConfig`` has it; this module
    does not import the app, which imports it)."""

    token: str | None


def openapi_document(config: TokenConfig) -> dict[str, Any]:
    """The whole document; ``security`` says Bearer when the server has a token."""
    search_params = [
        _q("q", STR, "the query: words, a claim or a formula (LaTeX welcome); `query` is an alias", required=True),
        _q("k", {"type": "integer", "minimum": 1, "maximum": SURFACE_MAX_K, "default": 10}, "number of hits"),
        _q("offset", {"type": "integer", "minimum": 0, "maximum": MAX_K - 1, "default": 0},
           f"skip this many of the best hits (next page: offset + k; offset + k is at most {MAX_K})"),
        _q("mode", MODE, "hybrid, lexical (BM25) or dense"),
        _q("source", STR, "only these sources", many=True), _q("exclude_source", STR, "drop these sources", many=True),
        _q("kind", STR, "only these kinds, e.g. theorem", many=True),
        _q("author", STR, "paper bundles: an author, whole words", many=True),
        _q("category", STR, "paper bundles: arXiv category or archive", many=True),
        _q("year_min", INT, "paper bundles"), _q("year_max", INT, "paper bundles"),
        _q("citations_min", INT, "paper bundles"), _q("citations_max", INT, "paper bundles"),
        _q("journal", {"type": "string", "enum": ["yes", "no"]}, "paper bundles: with or without a journal reference"),
        _q("prior", STR, "NAME=WEIGHT of a document prior the bundle declares", many=True),
        _q("kind_weight", STR, "KIND=WEIGHT: factor on a kind's scores, e.g. proof=0.5; 0 drops the kind", many=True),
        _q("rerank", {"type": "boolean"}, "rescore the best hits with the bundle's reranker; default: the bundle's choice"),
        _q("all_copies", {"type": "boolean", "default": False},
           "show every copy of a theorem; default: once, its other sources listed in each hit's also_in"),
        _q("bundle", STR, "one of the served bundles (GET /api/bundles); default: the first"),
    ]
    paths: dict[str, Any] = {
        "/search": {"post": {
            "summary": "TheoremSearch-compatible search", "operationId": "theoremsearch_search",
            "description": "The request and response of TheoremSearch's POST /search; fields a bundle has no data for "
                           "are listed in mathlas.ignored and the X-Mathlas-Ignored header.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": REF.format(model="TheoremSearchRequest")}}}},
            "responses": _ok("TheoremSearchResponse", "ranked theorems")}},
        "/api/search": {"get": {"summary": "search a bundle (= mathlas search --json)", "operationId": "search",
                                "parameters": search_params, "responses": _ok("SearchResult", "ranked hits")}},
        "/api/doc/{id}": {"get": {"summary": "one document (= mathlas show --json)", "operationId": "document",
                                  "parameters": [_path("id", "a stable id, e.g. stacks:00DV or lean:Nat.Prime.two_le"),
                                                 _q("bundle", STR, "one of the served bundles")],
                                  "responses": _ok("Document", "the whole document")}},
        "/api/lean/search": {"get": {"summary": "search Lean declarations (= mathlas lean search --json)",
                                     "operationId": "lean_search", "parameters": [
            _q("q", STR, "words, a name fragment or Lean notation", required=True),
            _q("k", {"type": "integer", "minimum": 1, "maximum": SURFACE_MAX_K, "default": 10}, "number of hits"),
            _q("mode", MODE, "hybrid, lexical or dense"), _q("module", STR, "only these modules or below", many=True),
            _q("kind", STR, "only these kinds", many=True), _q("prior_weight", NUM, "PageRank prior weight"),
            _q("deprecated", {"type": "boolean", "default": True}, "false leaves deprecated declarations out"),
            _q("all_copies", {"type": "boolean", "default": False},
               "show a Lean alias and the declaration it stands for apart; default: one rank, the other in also_in"),
            _q("bundle", STR, "the served formal bundle")],
            "responses": _ok("FormalSearchResult", "ranked declarations (404 saying what the server's operator can do when it has no formal bundle)")}},
        "/api/lean/deps/{id}": {"get": {"summary": "what a declaration uses or is used by (= mathlas lean deps --json)",
                                        "operationId": "lean_deps", "parameters": [
            _path("id", "e.g. lean:Nat.Prime.two_le"),
            _q("direction", {"type": "string", "enum": ["uses", "used_by"], "default": "uses"}, "uses or used_by"),
            _q("depth", {"type": "integer", "minimum": 1, "maximum": 5, "default": 1}, "steps"),
            _q("limit", {"type": "integer", "minimum": 1, "maximum": 5000, "default": 100}, "at most this many"),
            _q("bundle", STR, "the served formal bundle")],
            "responses": _ok("DependencyResult", "declarations, nearest first")}},
        "/api/bundles": {"get": {"summary": "served and installed bundles", "operationId": "bundles",
                                 "responses": {"200": {"description": "manifest facts; opens no bundle"}, **ERRORS}}},
        "/health": {"get": {"summary": "liveness (no token needed)", "operationId": "health", "security": [],
                            "responses": {"200": {"description": "status, version, bundles open"}}}},
        "/openapi.json": {"get": {"summary": "this document", "operationId": "openapi",
                                  "responses": {"200": {"description": "OpenAPI 3.1"}}}},
        "/mcp": {"post": {"summary": "MCP over streamable HTTP (JSON-RPC; stateless, JSON responses)",
                          "operationId": "mcp", "description": "The tools of `mathlas mcp`; add_finding only on servers with a token.",
                          "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                          "responses": {"200": {"description": "a JSON-RPC response"}, **MCP_ERRORS}}},
        "/": {"get": {"summary": "the search page (HTML; no token needed)", "operationId": "page", "security": [],
                      "parameters": [_q("q", STR, "a query to run on load")],
                      "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}},
        "/doc/{id}": {"get": {"summary": "a document's page (HTML; no token needed)", "operationId": "doc_page",
                              "security": [], "parameters": [_path("id", "a stable id")],
                              "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}},
    }
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "mathlas", "version": api.VERSION, "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
                 "description": "Offline math search: a TheoremSearch-compatible POST /search, mathlas's own JSON API, "
                                "MCP at /mcp and a search page at /. No LLM is ever called."},
        "paths": paths,
        "components": {"schemas": _schemas()},
    }
    if config.token:
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        doc["security"] = [{"bearer": []}]
    return doc
