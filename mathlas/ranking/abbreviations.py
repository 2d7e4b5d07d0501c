"""Query-time expansion of common mathematical abbreviations: "FTA over C" also searches for "fundamental
theorem of algebra" and "fundamental theorem of arithmetic", which is how the sources name it; and the
other way for the terms the sources write abbreviated (``CONTRACTED``): "unique factorization
domains" also searches for "UFD".

``ABBREVIATIONS`` is checked by hand; an abbreviation is in it only when its meanings in mathematics are
few and all listed (FTA, IFT and FLT have two each, and both are searched). Letter pairs that are as
often a product of matrices or a pair of points (``AB``, ``PA``, ``GL``) and abbreviations with many
readings (``CW``, ``UMP``, ``LU``, ``QR``, ``WLOG``) are left out.

A token expands only when it is a whole word in exactly the table's case ("ac" and "Ac" never expand),
outside code and formulas (backticks, ``$...$``, ``\\(...\\)``, ``\\[...\\]``, a dotted name such as
``Nat.GCD``) and not next to an operator (``AC = CA`` is a product of matrices). Only the first 1,000
characters of a query are scanned. Pure: no I/O.
"""
from __future__ import annotations

import re

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    # named theorems
    "FTA": ("fundamental theorem of algebra", "fundamental theorem of arithmetic"),
    "FTC": ("fundamental theorem of calculus",),
    "CRT": ("Chinese remainder theorem",),
    "PNT": ("prime number theorem",),
    "MVT": ("mean value theorem",),
    "IVT": ("intermediate value theorem",),
    "IFT": ("implicit function theorem", "inverse function theorem"),
    "FLT": ("Fermat's last theorem", "Fermat's little theorem"),
    "DCT": ("dominated convergence theorem",),
    "MCT": ("monotone convergence theorem",),
    "BCT": ("Baire category theorem",),
    "CLT": ("central limit theorem",),
    "LLN": ("law of large numbers",),
    "SLLN": ("strong law of large numbers",),
    "WLLN": ("weak law of large numbers",),
    "LTE": ("lifting the exponent lemma",),
    "AM-GM": ("arithmetic mean geometric mean inequality",),
    # foundations
    "AC": ("axiom of choice",),
    "ZF": ("Zermelo Fraenkel set theory",),
    "ZFC": ("Zermelo Fraenkel set theory with choice",),
    "LEM": ("law of excluded middle",),
    "CH": ("continuum hypothesis",),
    "GCH": ("generalized continuum hypothesis",),
    "RH": ("Riemann hypothesis",),
    "GRH": ("generalized Riemann hypothesis",),
    "TFAE": ("the following are equivalent",),
    # algebra and number theory
    "PID": ("principal ideal domain",),
    "UFD": ("unique factorization domain",),
    "DVR": ("discrete valuation ring",),
    "GCD": ("greatest common divisor",),
    "LCM": ("least common multiple",),
    "LUB": ("least upper bound",),
    "GLB": ("greatest lower bound",),
    # analysis, probability, linear algebra
    "ODE": ("ordinary differential equation",),
    "PDE": ("partial differential equation",),
    "SVD": ("singular value decomposition",),
    "FFT": ("fast Fourier transform",),
    "PMF": ("probability mass function",),
    "CDF": ("cumulative distribution function",),
}

# The other way: a query that says the phrase also searches the abbreviation, for the terms the sources
# write abbreviated about as often as in full ("A regular local ring is a UFD": asked as "... are unique
# factorization domains", BM25 saw no word of it). Counted in the default bundle's texts (abbreviation /
# phrase): PID 71/62, UFD 65/32, GCD 38/412, LCM 30/120, ODE 26/133, GCH 31/68, LUB 12/88, DVR 8/147, PDE
# 7/69, GLB 5/46, SVD 3/9; ZFC 394 (the phrase, never written so). Not AC or CH (a product of
# matrices, a hyperbolic cosine), not the named theorems (the sources name them in full).
CONTRACTED = ("PID", "UFD", "DVR", "GCD", "LCM", "LUB", "GLB", "ODE", "PDE", "SVD", "ZFC", "GCH")
# per contracted abbreviation: its phrase (lower case, spaces or hyphens, a plural) and the abbreviation as typed
_PHRASES = [(key, re.compile(r"(?<![\w-])" + r"[\s-]+".join(map(re.escape, ABBREVIATIONS[key][0].lower().split()))
                             + r"s?(?![\w-])"), re.compile(rf"(?<![\w.]){key}(?!\w)")) for key in CONTRACTED]

MAX_SCAN = 1_000

# code and formulas, blanked out before scanning
_MASK = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
# an upper-case word (AM-GM counts as one), not part of a dotted or underscored name
_TOKEN = re.compile(r"(?<![\w.])[A-Z][A-Z0-9]*(?:-[A-Z][A-Z0-9]*)?(?!\w|\.\w)")
_OPERATORS = set("=+*/^<>≤≥≠·∘⁻∣")


def _near_operator(text: str, start: int, end: int) -> bool:
    before = text[:start].rstrip()[-1:]
    after = text[end:].lstrip()[:1]
    return before in _OPERATORS or after in _OPERATORS


def expand(query: str, contract: bool = True) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The query with the expansions of its abbreviations appended once at the end, and the
    abbreviations used with their expansions (the query unchanged and ``{}`` when none); with
    ``contract``, the ``CONTRACTED`` phrases' abbreviations too (``expand_for`` says where).

    >>> expand("FTA over C")[0]
    'FTA over C fundamental theorem of algebra fundamental theorem of arithmetic'
    """
    head = query[:MAX_SCAN]
    scan = _MASK.sub(lambda m: " " * len(m.group()), head)
    used: dict[str, tuple[str, ...]] = {}
    contracted = _contracted(scan) if contract else {}
    for m in _TOKEN.finditer(scan):
        if _near_operator(scan, m.start(), m.end()):
            continue
        token = m.group()
        for key in [token] if token in ABBREVIATIONS else token.split("-"):  # IVT-MVT is two
            if key in ABBREVIATIONS and key not in used:
                used[key] = ABBREVIATIONS[key]
    if not used and not contracted:
        return query, {}
    lowered = query.lower()
    added: list[str] = []
    for phrases in used.values():
        for phrase in phrases:  # a phrase the query already says is not said twice
            if phrase.lower() not in lowered and phrase not in added:
                added.append(phrase)
    for phrase, key in contracted.items():  # never an abbreviation the query typed (_contracted)
        used[phrase] = (key,)
        added.append(key)
    if not added:
        return query, used
    return f"{query.rstrip()} {' '.join(added)}", used


def _contracted(scan: str) -> dict[str, str]:
    """The ``CONTRACTED`` phrases ``scan`` says (any case, hyphens or spaces, a plural) -> their
    abbreviations, where it does not also say the abbreviation."""
    if not any(c.isspace() or c == "-" for c in scan):
        return {}
    low = scan.lower()
    return {ABBREVIATIONS[key][0]: key for key, phrase, typed in _PHRASES
            if phrase.search(low) and not typed.search(scan)}


def expand_for(bundle, query: str) -> tuple[str, dict[str, tuple[str, ...]]]:
    """``expand`` as a search of ``bundle`` does it (``mathlas.ranking.plan``, and the learned stage's
    training pools): phrases contracted on informal bundles only; not on a formal one (a ``module``
    column), where "Greatest Common Divisor Algorithm", a title its answer's alias holds word for word,
    fell to tenth searched with "GCD" (docs/benchmarks.md)."""
    return expand(query, contract="module" not in bundle.table.column_names)


def describe(used: dict[str, tuple[str, ...]]) -> str:
    """One line for the answer: ``expanded FTA: fundamental theorem of algebra / fundamental theorem of
    arithmetic; IVT: intermediate value theorem`` ("" when nothing was expanded); a phrase searched
    with its abbreviation too: ``expanded unique factorization domain: UFD``."""
    if not used:
        return ""
    return "expanded " + "; ".join(f"{key}: {' / '.join(phrases)}" for key, phrases in used.items())
