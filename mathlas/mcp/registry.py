"""How each tool looks to an MCP client: title, hints, precise argument schemas, compact schemas.

The tools are plain typed functions (``mathlas.tools``); their signatures give the SDK the argument
types and their docstrings the descriptions. What a signature cannot say lives here, in one table
(``FACTS``) that ``mathlas.mcp.server`` applies when it registers the tools:

* a ``title`` for people, and the MCP annotations: ``readOnlyHint`` for every tool that only reads
  (clients may then call it without asking the user), ``idempotentHint``, ``destructiveHint``;
  ``openWorldHint`` is false everywhere, since no tool reaches beyond the machine;
* ``long``: the tool may run for minutes, so the server sends progress notifications while it
  runs and stops its worker process when the client cancels the call (``mathlas.progress``);
* ``needs_formal_bundle``: the tool searches a formal (Lean) bundle, so ``tools/list`` leaves it out
  while none is named or installed (mathlas ships none; docs/mcp.md, "Which tools are listed");
* ``args``: JSON-schema keywords merged into an argument's schema: bounds (``k`` is at most
  ``request.SURFACE_MAX_K`` here, though the library allows ``request.MAX_K``), enums for closed sets, the keys
  of ``source_filter`` and ``paper_filter``, so a client can validate a call before making it.

``compact`` shrinks the schemas pydantic derives (no auto titles, ``anyOf`` with null folded, no
prose in output schemas): every client pays for ``tools/list`` at the start of every session.
Importing this module imports neither ``mcp`` nor any tool.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any, Literal, get_type_hints

from mathlas.hit import Hit, HitSummary, LeanHitSummary
from mathlas.request import MAX_K, SURFACE_MAX_K
from mathlas.service import FormalSearchResult, SearchResult

Detail = Literal["summary", "full"]
DETAIL_DOC = "summary: id, kind, heading, snippet, score; full: the whole hit"


@dataclass(frozen=True)
class ToolFacts:
    """What an MCP client learns about a tool beyond its signature and docstring."""

    title: str
    read_only: bool = True
    idempotent: bool = True
    destructive: bool = False
    long: bool = False
    needs_formal_bundle: bool = False
    args: dict[str, dict[str, Any]] = field(default_factory=dict)


_STRINGS = {"type": "array", "items": {"type": "string"}}
_TEXT = {"minLength": 1}
SOURCE_FILTER = {"type": "object", "additionalProperties": False,
                 "properties": {"include": _STRINGS, "exclude": _STRINGS}}
PAPER_FILTER = {"type": "object", "additionalProperties": False,
                "properties": {"authors": _STRINGS, "categories": _STRINGS,
                               "year_min": {"type": "integer"}, "year_max": {"type": "integer"},
                               "citations_min": {"type": "integer"}, "citations_max": {"type": "integer"},
                               "journal_published": {"type": "boolean"}}}
WEIGHTS = {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}
PRIORS = {"type": "object", "additionalProperties": {"type": "number"}}
K = {"minimum": 1, "maximum": SURFACE_MAX_K}
OFFSET = {"minimum": 0, "maximum": MAX_K - 1}
DIGITS = {"minimum": 1, "maximum": 1000}           # tools.numeric.identify.MAX_DIGITS
SECONDS = {"exclusiveMinimum": 0, "maximum": 600}  # tools.numeric.timebound.check_timeout
LEAN_SECONDS = {"minimum": 1, "maximum": 600}      # tools.lean_check.MAX_TIMEOUT_S, funsearch's timeout_s
SEARCH = {"query": _TEXT, "k": K, "offset": OFFSET}  # the query's length: one line from the request (tools/list budget)

FACTS: dict[str, ToolFacts] = {
    "search_existing_math": ToolFacts("Search known mathematics", args={
        **SEARCH, "source_filter": SOURCE_FILTER, "source_weights": WEIGHTS, "kinds": _STRINGS, "kind_weights": WEIGHTS,
        "paper_filter": PAPER_FILTER, "priors": PRIORS}),
    "get_by_id": ToolFacts("Whole document by id", args={"id": _TEXT}),
    "get_statement": ToolFacts("Statement by id", args={"id": _TEXT}),
    "search_formal_math": ToolFacts("Search Lean declarations", needs_formal_bundle=True, args={
        **SEARCH, "modules": _STRINGS, "kinds": _STRINGS, "prior_weight": {"minimum": -1000, "maximum": 1000}}),
    "get_dependencies": ToolFacts("Lean dependencies", needs_formal_bundle=True, args={
        "id": _TEXT, "depth": {"minimum": 1, "maximum": 5}, "limit": {"minimum": 1, "maximum": 5000}}),
    "identify_constant": ToolFacts("Identify a constant", long=True, args={
        "digits": DIGITS, "basis": {"minItems": 1, "maxItems": 12}, "timeout": SECONDS}),
    "verify_numeric": ToolFacts("Verify a numeric claim", long=True, args={"digits": DIGITS, "timeout": SECONDS}),
    "conjecture_relation": ToolFacts("Conjecture a relation", long=True, args={
        "digits": DIGITS, "max_terms": {"minimum": 3, "maximum": 8}, "cf_depth": {"minimum": 50, "maximum": 2000},
        "timeout": SECONDS}),
    "applicability_checklist": ToolFacts("Applicability checklist", args={"statement": _TEXT}),
    "mapping_scaffold": ToolFacts("Problem-to-result mapping", args={"problem": _TEXT, "candidate": _TEXT}),
    "search_directive": ToolFacts("Literature search plan", args={"problem": _TEXT, "k": K}),
    "identify_sequence": ToolFacts("Identify an integer sequence", args={
        "terms": {"minItems": 2}, "max_results": {"minimum": 1, "maximum": 1000}}),
    # register appends to the archive on disk: a write, not idempotent; the sandbox runs programs
    "funsearch": ToolFacts("FunSearch harness", read_only=False, idempotent=False, long=True, args={
        "problem": {"enum": ["cap_set", "bin_packing"]}, "top_k": {"minimum": 1, "maximum": 50},
        "timeout_s": LEAN_SECONDS}),
    # the same statement is stored once, so adding it again changes nothing
    "add_finding": ToolFacts("Save a finding", read_only=False, args={
        "statement": {"minLength": 1, "maxLength": 20_000}, "source_url": {"pattern": "^https?://"}}),
    "verify_formal": ToolFacts("Check Lean 4", long=True, args={"timeout_s": LEAN_SECONDS}),
}


def facts(name: str) -> ToolFacts:
    """The facts of tool ``name`` (a tool missing from ``FACTS`` reads as a read-only tool named by its name)."""
    return FACTS.get(name) or ToolFacts(name.replace("_", " ").capitalize())


# ------------------------------------------------------------------------------ the search answers over MCP

# A search tool answers with the library's result (``mathlas.service``), field for field and in its
# order, but for its hits, summaries unless detail="full", and the fields named here, which say again
# what another field says (every field costs each session its tools/list).
# "expanded" says what the query was searched as, in one line; where a long query was cut (a pasted page:
# rare), the listing's first line says in words (mathlas.render.search_notes)
MCP_LEAVES_OUT = ("searched_for", "cut")


def _answer(result: type, name: str, summary: type, doc: str) -> type:
    """The dataclass ``name``: ``result``'s fields but ``MCP_LEAVES_OUT``, hits typed ``summary | Hit``."""
    types = get_type_hints(result)
    spec = [(f.name, list[summary | Hit] if f.name == "hits" else types[f.name],
             field(default=f.default, default_factory=f.default_factory))
            for f in fields(result) if f.name not in MCP_LEAVES_OUT]
    cls = make_dataclass(name, spec)
    cls.__module__, cls.__doc__ = __name__, doc
    return cls


SearchAnswer = _answer(SearchResult, "SearchAnswer", HitSummary,
                       """search_existing_math over MCP: hits are summaries unless detail="full".""")
FormalSearchAnswer = _answer(FormalSearchResult, "FormalSearchAnswer", LeanHitSummary,
                             """search_formal_math over MCP: hits are summaries (with aliases) unless detail="full".""")


ANSWERS = {"search_existing_math": SearchAnswer, "search_formal_math": FormalSearchAnswer}


# ------------------------------------------------------------------------------ compact schemas

_NODE_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_NODE_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def compact(schema: Any, *, output: bool = False) -> Any:
    """A smaller equivalent of a pydantic JSON schema: no auto ``title``s; ``anyOf`` of plain types
    folded into one ``type`` list; a ``null`` branch dropped from optional arguments (leaving an
    argument out means null) and their ``default: null``. Output schemas also lose ``default``s and
    descriptions (the tool's description says what comes back; clients only validate), and are cut
    to one level (``shallow``)."""
    if output:
        return shallow(_compact(schema, output=True))
    return _compact(schema, output=False)


def shallow(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` cut to one level: every field of the answer keeps its type, but a nested object
    is only ``{"type": "object"}``, a list only ``{"type": "array"}``, and there is no ``required``
    list (an answer always carries every field: the results are dataclasses). Nested shapes (a hit,
    a Lean message) and the required lists made half of tools/list; what the nested objects hold,
    the tool descriptions and docs/mcp.md say."""
    def cut(node: Any) -> Any:
        if isinstance(node, list):
            return [cut(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return {"type": "object"}
        out = {}
        for key, value in node.items():
            if key in ("$defs", "required"):
                continue
            out[key] = {name: cut(sub) for name, sub in value.items()} if key == "properties" else cut(value)
        if out.get("type") == "array":
            out.pop("items", None)  # a list is a list; what it holds, the description says
        if isinstance(out.get("anyOf"), list):  # e.g. [object, object] after the cut, or [object, null]
            kinds = list(dict.fromkeys(json_type(b) for b in out["anyOf"]))
            if None not in kinds:
                del out["anyOf"]
                out["type"] = kinds[0] if len(kinds) == 1 else kinds
        return out

    return cut(schema)


def json_type(node: Any) -> str | None:
    """The one JSON type a plain ``{"type": T}`` node allows, else None."""
    if isinstance(node, dict) and set(node) == {"type"} and isinstance(node["type"], str):
        return node["type"]
    return None


def _compact(schema: Any, *, output: bool) -> Any:
    if isinstance(schema, list):
        return [_compact(s, output=output) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (output and key in ("description", "default")):
            continue
        if key in _NODE_MAPS and isinstance(value, dict):
            out[key] = {name: _compact(sub, output=output) for name, sub in value.items()}
        elif key in _NODE_LISTS or key in ("items", "additionalProperties", "not"):
            out[key] = _compact(value, output=output)
        else:
            out[key] = value
    if out.get("additionalProperties") is True:
        del out["additionalProperties"]
    branches = out.get("anyOf")
    if isinstance(branches, list):
        if not output and out.get("default", 0) is None:  # an optional argument: null is "not given"
            out.pop("default")
            branches = [b for b in branches if b != {"type": "null"}]
        if all(json_type(b) for b in branches):
            types = list(dict.fromkeys(json_type(b) for b in branches))
            if "number" in types and "integer" in types:
                types.remove("integer")
            del out["anyOf"]
            out["type"] = types[0] if len(types) == 1 else types
        elif len(branches) == 1:
            del out["anyOf"]
            out = {**branches[0], **out}
        else:
            out["anyOf"] = branches
    return out


# What an argument several tools share means, for a tool whose docstring does not say (the scaffold
# tools' ``bundle``, the problem of mapping_scaffold and search_directive): every argument a client
# sees is described (tests/test_mcp.py)
SHARED_ARGS = {"bundle": "default: $MATHLAS_BUNDLE or the default bundle.", "problem": "words or LaTeX."}


def argument_schema(tool: str, parameters: dict[str, Any], descriptions: dict[str, str]) -> dict[str, Any]:
    """The input schema clients see: compacted, each argument described by its docstring line (else
    by ``SHARED_ARGS``) and refined by ``FACTS[tool].args``."""
    schema = compact(parameters)
    props = schema.get("properties", {})
    for name, extra in facts(tool).args.items():
        if name in props:
            props[name] = {**props[name], **extra}
    for name, text in {**SHARED_ARGS, **{k: v for k, v in descriptions.items() if v}}.items():
        if name in props:
            props[name].setdefault("description", text)
    return schema


def search_answer(tool: str, result: Any, detail: str) -> Any:
    """A search tool's result as MCP answers it. ``summary``: every hit through ``hit.summarize``
    and one get_by_id suggestion (for the best hit) instead of one per top hit, since the ids are
    all there; ``full``: the result unchanged."""
    from mathlas.hit import summarize

    cls = ANSWERS[tool]
    data = {f.name: getattr(result, f.name) for f in fields(cls)}
    if detail == "summary":
        data["hits"] = [summarize(h) for h in result.hits]
        getters = [s for s in result.next if s.tool == "get_by_id"][:1]
        data["next"] = [s for s in result.next if s.tool != "get_by_id" or s in getters]
    return cls(**data)
