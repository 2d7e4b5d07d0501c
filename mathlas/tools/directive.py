"""``search_directive``: a structured plan for searching the literature, made offline.

No web call is made. The plan is built from the problem's own words and from a search of the
bundle (``search_existing_math``): the hits give the named results worth checking, and their
sources and titles give the sub-fields. Sub-fields become arXiv categories through ``MSC_ARXIV``,
the MSC 2020 top-level classes mapped to the arXiv category that takes most papers of that class
(the mapping the arXiv category descriptions themselves state, e.g. math.AC "Commutative rings,
modules, ideals, homological algebra, computational aspects, invariant theory, connections to
algebraic geometry and combinatorics" = MSC 13). Titles that carry no MSC class (Stacks chapters,
Napkin and HoTT chapters) are matched to a class by whole words of the class names, then by
``TITLE_WORDS``; a source with no informative title falls back to ``SOURCE_CLASSES``.
"""
from __future__ import annotations

import os
import re
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from mathlas.checks import integer
from mathlas.errors import UsageError
from mathlas.tools.key_phrases import key_phrases
from mathlas.request import MAX_QUERY_CHARS
from mathlas.tools.scaffold import MAX_CHARS, words

# MSC 2020 top-level class -> (name as PlanetMath spells its folders, arXiv categories, best first)
MSC_ARXIV: dict[str, tuple[str, tuple[str, ...]]] = {
    "00": ("General", ("math.GM",)),
    "01": ("History and biography", ("math.HO",)),
    "03": ("Mathematical logic and foundations", ("math.LO", "cs.LO")),
    "05": ("Combinatorics", ("math.CO",)),
    "06": ("Order lattices ordered algebraic structures", ("math.RA", "math.CO")),
    "08": ("General algebraic systems", ("math.RA",)),
    "11": ("Number theory", ("math.NT",)),
    "12": ("Field theory and polynomials", ("math.AC", "math.NT")),
    "13": ("Commutative rings and algebras", ("math.AC",)),
    "14": ("Algebraic geometry", ("math.AG",)),
    "15": ("Linear and multilinear algebra matrix theory", ("math.RA",)),
    "16": ("Associative rings and algebras", ("math.RA",)),
    "17": ("Nonassociative rings and algebras", ("math.RA", "math.QA")),
    "18": ("Category theory homological algebra", ("math.CT",)),
    "19": ("K-theory", ("math.KT",)),
    "20": ("Group theory and generalizations", ("math.GR",)),
    "22": ("Topological groups Lie groups", ("math.GR", "math.RT")),
    "26": ("Real functions", ("math.CA",)),
    "28": ("Measure and integration", ("math.CA", "math.FA")),
    "30": ("Functions of a complex variable", ("math.CV",)),
    "31": ("Potential theory", ("math.AP", "math.CV")),
    "32": ("Several complex variables and analytic spaces", ("math.CV",)),
    "33": ("Special functions", ("math.CA",)),
    "34": ("Ordinary differential equations", ("math.CA", "math.DS")),
    "35": ("Partial differential equations", ("math.AP",)),
    "37": ("Dynamical systems and ergodic theory", ("math.DS",)),
    "39": ("Difference and functional equations", ("math.CA",)),
    "40": ("Sequences series summability", ("math.CA",)),
    "41": ("Approximations and expansions", ("math.CA", "math.NA")),
    "42": ("Fourier analysis", ("math.CA",)),
    "43": ("Abstract harmonic analysis", ("math.FA",)),
    "44": ("Integral transforms operational calculus", ("math.CA",)),
    "45": ("Integral equations", ("math.CA", "math.FA")),
    "46": ("Functional analysis", ("math.FA",)),
    "47": ("Operator theory", ("math.FA", "math.SP")),
    "49": ("Calculus of variations and optimal control optimization", ("math.OC",)),
    "51": ("Geometry", ("math.MG",)),
    "52": ("Convex and discrete geometry", ("math.MG", "math.CO")),
    "53": ("Differential geometry", ("math.DG",)),
    "54": ("General topology", ("math.GN",)),
    "55": ("Algebraic topology", ("math.AT",)),
    "57": ("Manifolds and cell complexes", ("math.GT",)),
    "58": ("Global analysis analysis on manifolds", ("math.DG", "math.GT")),
    "60": ("Probability theory and stochastic processes", ("math.PR",)),
    "62": ("Statistics", ("math.ST",)),
    "65": ("Numerical analysis", ("math.NA",)),
    "68": ("Computer science", ("cs.DM", "cs.LO")),
    "70": ("Mechanics of particles and systems", ("math-ph",)),
    "74": ("Mechanics of deformable solids", ("math-ph",)),
    "76": ("Fluid mechanics", ("physics.flu-dyn",)),
    "78": ("Optics electromagnetic theory", ("math-ph",)),
    "80": ("Classical thermodynamics heat transfer", ("math-ph",)),
    "81": ("Quantum theory", ("math-ph", "quant-ph")),
    "82": ("Statistical mechanics structure of matter", ("math-ph", "cond-mat.stat-mech")),
    "83": ("Relativity and gravitational theory", ("gr-qc",)),
    "85": ("Astronomy and astrophysics", ("astro-ph",)),
    "86": ("Geophysics", ("physics.geo-ph",)),
    "90": ("Operations research mathematical programming", ("math.OC",)),
    "91": ("Game theory economics social and behavioral sciences", ("econ.TH", "cs.GT")),
    "92": ("Biology and other natural sciences", ("q-bio",)),
    "93": ("Systems theory control", ("math.OC", "eess.SY")),
    "94": ("Information and communication circuits", ("cs.IT",)),
    "97": ("Mathematics education", ("math.HO",)),
}

# Words of chapter titles that name no MSC class outright -> the class they belong to. Stacks
# chapter titles ("Schemes", "Étale Cohomology", "Derived Categories") are the main users.
TITLE_WORDS: dict[str, str] = {
    "scheme": "14", "schemes": "14", "stacks": "14", "varieties": "14", "curves": "14", "divisors": "14",
    "sheaves": "14", "cohomology": "14", "etale": "14", "étale": "14", "morphisms": "14", "spaces": "14",
    "descent": "14", "deformation": "14", "algebraic": "14", "moduli": "14", "intersection": "14",
    "algebra": "13", "commutative": "13", "rings": "13", "ring": "13", "modules": "13", "ideals": "13",
    "categories": "18", "category": "18", "derived": "18", "homological": "18", "simplicial": "18",
    "functors": "18", "limits": "18", "topos": "18", "topoi": "18", "sites": "18",
    "groups": "20", "group": "20", "groupoids": "18",
    "topology": "54", "compactness": "54", "connectedness": "54", "homotopy": "55", "homology": "55",
    "fundamental": "55", "manifolds": "57",
    "logic": "03", "sets": "03", "set": "03", "computability": "03", "incompleteness": "03",
    "types": "03", "type": "03", "univalent": "03", "univalence": "03", "induction": "03", "proofs": "03",
    "integrals": "26", "integration": "28", "measure": "28", "derivatives": "26", "calculus": "26",
    "sequences": "40", "series": "40", "limits of sequences": "40", "real": "26", "reals": "26",
    "complex": "30", "holomorphic": "30", "analytic": "30",
    "number": "11", "primes": "11", "quadratic": "11", "reciprocity": "11", "arithmetic": "11",
    "linear": "15", "matrices": "15", "vector": "15", "eigenvalues": "15",
    "combinatorics": "05", "graphs": "05", "graph": "05",
    "probability": "60", "representation": "22", "representations": "22", "lie": "22",
    "fields": "12", "galois": "12", "polynomials": "12",
}

# Last resort for a source whose titles say nothing: what the source is mostly about.
SOURCE_CLASSES: dict[str, str] = {"stacks": "14", "hott": "03", "openlogic": "03", "metamath": "03",
                                  "lean": "03", "proofnet": "00", "napkin": "00", "proofwiki": "00"}


@dataclass
class SubField:
    """A sub-field the search hits point to: MSC class, its name, arXiv categories, and evidence."""

    msc: str
    name: str
    arxiv_categories: list[str]
    weight: float
    evidence: list[str]          # ids of the hits that point here


@dataclass
class ArxivQuery:
    """An arXiv API search query (``search_query`` syntax: ti:, abs:, all:, cat:) and its URL."""

    query: str
    url: str
    why: str


@dataclass
class NamedResult:
    """A result from the bundle worth checking against the problem."""

    id: str
    name: str
    kind: str
    source: str
    title: str
    link: str
    score: float


@dataclass
class ToolStep:
    """A mathlas tool worth running next, with its arguments ready to send."""

    tool: str
    arguments: dict[str, Any]
    why: str


@dataclass
class SearchDirective:
    """A search plan: key terms, arXiv queries, sub-fields with arXiv categories, named results
    from the bundle, and the mathlas tools to run next. Nothing was fetched from the web."""

    problem: str
    bundle: str
    key_terms: list[str]
    arxiv_queries: list[ArxivQuery]
    subfields: list[SubField]
    arxiv_categories: list[str]
    named_results: list[NamedResult]
    next_tools: list[ToolStep]
    notes: list[str] = field(default_factory=list)


_NAME_WORDS = {w.lower(): code for code, (name, _) in MSC_ARXIV.items() for w in name.split() if len(w) > 3}
_GENERIC = {"theory", "general", "other", "analysis", "systems", "equations", "functions", "theorem",
            "mathematical", "principles", "introduction", "elements", "basic"}
_STATEMENT_KINDS = ("theorem", "lemma", "proposition", "corollary", "definition", "axiom", "result")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+\.\d{4,}(?![\w.])")
_INT_LIST = re.compile(r"(?<![\w.])-?\d+(?:\s*,\s*-?\d+){4,}")


def msc_for(source: str, title: str) -> str | None:
    """The MSC class a hit's source and title point to (None: nothing to go on)."""
    if source == "planetmath":
        key = title.strip().lower()
        for code, (name, _) in MSC_ARXIV.items():
            if name.lower() == key.replace(",", "").replace("-", " ").replace("  ", " "):
                return code
    chapter = title.split(">")[0]
    votes: dict[str, int] = defaultdict(int)
    for w in words(chapter):
        if w in TITLE_WORDS:
            votes[TITLE_WORDS[w]] += 2
        elif w in _NAME_WORDS and w not in _GENERIC:
            votes[_NAME_WORDS[w]] += 1
    if votes:
        return max(votes, key=lambda c: (votes[c], -int(c)))
    return SOURCE_CLASSES.get(source)


def _arxiv_url(query: str) -> str:
    return "https://export.arxiv.org/api/query?" + urllib.parse.urlencode(
        {"search_query": query, "max_results": 25, "sortBy": "relevance"})


def _quoted(term: str) -> str:
    return f'"{term}"' if " " in term else term


# math a problem may be made of without a word: LaTeX, a digit, an operator or relation, a Greek letter,
# ℕ ℤ ℚ ℝ ℂ and the like (Unicode's math symbols, category Sm, are checked apart)
_MATH_CHAR = re.compile(r"[$\\0-9=<>+*/^_|∣Α-Ωα-ωϑϕϵℂℕℙℚℝℤℵ]")


def has_math(text: str) -> bool:
    """Whether ``text`` holds math to search for without words (``$x^2+y^2=z^2$``, ``1, 1, 2, 3, 5``,
    ``π``, ``∫ f``): LaTeX, a digit, an operator, a Greek or a blackboard letter, a math symbol."""
    import unicodedata

    return bool(_MATH_CHAR.search(text)) or any(unicodedata.category(c) == "Sm" for c in text)


def _looks_named(name: str) -> bool:
    """Whether a hit's name reads as a result's name: a possessive in any case ("Nakayama's", "nakayama's")
    or one of seven kind words. Not ``mathlas.tools.scaffold.names_a_result``'s shape (a capitalised
    possessive or any of its kind words, laws, rules and tests included): that one tells a name a person
    typed from a statement; this one picks which bundle hits are listed as named results and quoted in a
    ``ti:`` query, and sharing the other's rule would change that choice unmeasured."""
    return bool(re.search(r"[A-Z][a-z]+['’]s\b|\b(theorem|lemma|conjecture|inequality|formula|principle|criterion)\b",
                          name, re.I))


def _words_once(terms: list[str], limit: int = 8) -> str:
    """The words of ``terms`` in order, each once: key terms list a phrase and then its own words
    ("finitely generated module", "finitely", ...), so joining them whole says each word twice."""
    out: list[str] = []
    for t in terms:
        for w in t.split():
            if w not in out and len(out) < limit:
                out.append(w)
    return " ".join(out)


def _formal_available() -> bool:
    """Whether search_formal_math can answer here: a formal (Lean) bundle is installed or named by
    ``$MATHLAS_FORMAL_BUNDLE`` (a wrong one there is that tool's to report, with how to fix it)."""
    from mathlas.releases.formal_specs import FORMAL_ENV, installed_formal

    return bool(os.environ.get(FORMAL_ENV) or installed_formal())


def search_directive(problem: str, k: int = 15, bundle: str | None = None) -> SearchDirective:
    """An offline plan for a literature search on a problem: arXiv query strings, the sub-fields and
    arXiv categories the bundle's best hits point to, named results worth checking, and the
    tools to run next.

    Args:
        k: bundle hits to draw on.
    """
    from mathlas.tools import available_tool_names
    from mathlas.tools.informal import search_existing_math

    if not isinstance(problem, str) or not problem.strip():
        raise UsageError("problem is empty: pass the problem or question as text (LaTeX welcome)")
    integer(k, "k", 1, 100)
    text = problem.strip()
    notes = []
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS]
        notes.append(f"problem cut at {MAX_CHARS} characters")
    terms = key_phrases(text)
    if not terms and not has_math(text):
        # nothing the search could take hold of: a plan would be the bundle's answer to noise
        raise UsageError("no mathematical terms found in the problem: describe it in words or LaTeX "
                         "(e.g. 'is every finitely generated flat module over a local ring free?')")
    query = text if len(text) <= 2000 else " ".join(terms)
    if len(query) > MAX_QUERY_CHARS:  # a long problem's key terms, cut at a word to what a search takes
        query = query[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]
    res = search_existing_math(query, k=k, bundle=bundle)

    weights: dict[str, float] = defaultdict(float)
    evidence: dict[str, list[str]] = defaultdict(list)
    for rank, h in enumerate(res.hits):
        code = msc_for(h.source, h.title)
        if code is not None:
            weights[code] += 1.0 / (rank + 2)
            evidence[code].append(h.id)
    subfields = [SubField(msc=c, name=MSC_ARXIV[c][0], arxiv_categories=list(MSC_ARXIV[c][1]),
                          weight=round(w, 4), evidence=evidence[c])
                 for c, w in sorted(weights.items(), key=lambda x: -x[1]) if c in MSC_ARXIV][:5]
    categories: list[str] = []
    for s in subfields:
        for cat in s.arxiv_categories:
            if cat not in categories:
                categories.append(cat)

    named = [NamedResult(id=h.id, name=h.name, kind=h.kind, source=h.source, title=h.title, link=h.link,
                         score=h.score)
             for h in res.hits if h.kind in _STATEMENT_KINDS or _looks_named(h.name)][:10]

    phrases = [t for t in terms if " " in t][:3]
    in_phrases = {w for t in phrases[:2] for w in t.split()}
    singles = [t for t in terms if " " not in t and t not in in_phrases][:4] or \
        [t for t in terms if " " not in t][:4]
    queries: list[ArxivQuery] = []
    extra = [t for t in singles if t not in in_phrases]
    core = phrases[:2] + extra[: max(0, 3 - len(phrases[:2]))]
    if core:
        q = " AND ".join(f"abs:{_quoted(t)}" for t in core)
        queries.append(ArxivQuery(q, _arxiv_url(q), "the problem's key phrases in abstracts"))
        if categories:
            cats = " OR ".join(f"cat:{c}" for c in categories[:3])
            q2 = f"({' AND '.join(f'all:{_quoted(t)}' for t in core[:2])}) AND ({cats})"
            queries.append(ArxivQuery(q2, _arxiv_url(q2), "key phrases within the sub-fields the bundle points to"))
    seen_names: set[str] = set()
    for r in named:
        base = re.sub(r"\s*\([^)]*\)", "", r.name)
        base = re.sub(r"^(proof|proofs|counter ?example|example|examples)\s+(of|to)\s+", "", base.strip(), flags=re.I)
        if _looks_named(base) and len(base.split()) <= 5 and base.lower() not in seen_names:
            seen_names.add(base.lower())
            q3 = f"ti:{_quoted(base)} OR abs:{_quoted(base)}"
            if singles:
                q3 = f"({q3}) AND all:{_quoted(singles[0])}"
            queries.append(ArxivQuery(q3, _arxiv_url(q3), f"papers that use or extend {r.name} ({r.id})"))
        if len(queries) >= 5:
            break
    words_all = [t for t in terms if " " not in t][:5]
    if words_all and len(queries) < 6:
        q4 = " AND ".join(f"all:{t}" for t in words_all)
        queries.append(ArxivQuery(q4, _arxiv_url(q4), "broad: the problem's content words anywhere"))

    tools = set(available_tool_names())
    steps: list[ToolStep] = []
    for r in named[:3]:
        if "get_by_id" in tools:
            steps.append(ToolStep("get_by_id", {"id": r.id}, f"the full statement of {r.name or r.id}"))
        if "mapping_scaffold" in tools:
            steps.append(ToolStep("mapping_scaffold", {"problem": text, "candidate": r.id},
                                  f"check whether {r.name or r.id} applies (its preconditions against the problem)"))
    m = _NUMBER.search(text)
    if m and "identify_constant" in tools:
        steps.append(ToolStep("identify_constant", {"value": m.group(0)}, "the problem holds a decimal: look for a closed form"))
    m = _INT_LIST.search(text)
    if m and "identify_sequence" in tools:
        steps.append(ToolStep("identify_sequence", {"terms": [int(x) for x in re.findall(r"-?\d+", m.group(0))]},
                              "the problem holds an integer sequence: look it up in the OEIS"))
    if "search_formal_math" in tools and terms:
        if _formal_available():
            steps.append(ToolStep("search_formal_math", {"query": _words_once(terms)},
                                  "a formal (Lean) version may already exist"))
        else:
            from mathlas.formal import BUILD_HINT

            notes.append(f"no formal (Lean) bundle is installed, so search_formal_math is left out; to add one, "
                         f"{BUILD_HINT}")
    if "search_existing_math" in tools and phrases:
        steps.append(ToolStep("search_existing_math", {"query": _words_once(phrases, 12), "mode": "lexical"},
                              "keyword search on the key phrases alone, for results the full text missed"))
    if not res.hits:
        notes.append("the bundle returned no hits: sub-fields and named results are empty")
    return SearchDirective(problem=text, bundle=res.bundle, key_terms=terms, arxiv_queries=queries[:6],
                           subfields=subfields, arxiv_categories=categories, named_results=named,
                           next_tools=steps, notes=notes)
