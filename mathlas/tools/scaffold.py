"""Applicability scaffolds: ``applicability_checklist`` and ``mapping_scaffold``.

Both turn text into structure for an agent to fill in; neither judges anything. Splitting a statement
(math protected, lists, sentences and cues, conjunctions) is ``mathlas.tools.latex_split``, splitting a
formal bundle's Lean declaration (binders, premises, target) ``mathlas.tools.lean_split``, and picking a
problem's key terms is ``mathlas.tools.key_phrases``; this module reads the tools' arguments, fetches a
statement by its id, and builds the checklist, the problem's signature and the mapping questions.

Input is bounded (``MAX_CHARS``); longer text is cut at that bound and reported as ``truncated``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mathlas.errors import UsageError
from mathlas.tools.key_phrases import STOP_WORDS, key_phrases
from mathlas.tools.latex_split import (MATH_SPAN, MAX_ITEMS, RELATION, SUBJECT_CUES, ChecklistPart, Precondition,
                                       analyse_statement, clean_statement, complete_clause, protected_mask,
                                       split_problem, split_statement, subject_object, tidy)
from mathlas.tools.lean_split import split_declaration

# the splitter's entry points are part of this module's interface (tests and callers import them here)
__all__ = ["MAX_CHARS", "Checklist", "ChecklistPart", "MappingScaffold", "NameLookup", "Precondition",
           "applicability_checklist", "is_stable_id", "mapping_scaffold", "names_a_result",
           "problem_objects", "protected_mask", "split_problem", "split_statement", "words"]

MAX_CHARS = 20_000          # statement or problem text read; the rest is cut and reported
NOTATIONS_SHOWN = 10        # a statement's notations and definitions named in its note

# Stable id prefixes (DESIGN.md): a statement argument that is exactly "<prefix>:<key>" is fetched.
ID_PREFIXES = ("stacks", "planetmath", "hott", "openlogic", "napkin", "proofnet", "proofwiki",
               "metamath", "lean", "arxiv", "finding")
_ID_RE = re.compile(r"^(?:" + "|".join(ID_PREFIXES) + r"):\S+$")

# A candidate that names a result instead of stating it ("Nakayama's lemma", "the snake lemma",
# "fundamental theorem of algebra"): at most NAME_WORDS words, no math, and a name's shape, a
# possessive (Nakayama's, Gauss') or a word results are named by
NAME_WORDS = 8
_POSSESSIVE = re.compile(r"(?<![\w-])[A-Z][\w-]*(?:['’]s|s['’])(?![\w])")
_RESULT_NOUN = re.compile(r"(?<![\w-])(?:theorems?|lemmas?|lemmata|propositions?|corollar(?:y|ies)|conjectures?|"
                          r"principles?|inequalit(?:y|ies)|identit(?:y|ies)|formulae?|formulas|criteri(?:on|a)|laws?|"
                          r"axioms?|hypothesis|paradox|rules?|tricks?|tests?)(?![\w-])", re.I)
_MATH_MARK = re.compile(r"[$\\^_{}=<>]")
NAME_SEARCH_K = 3  # hits a name is looked up with; the first is used, all are named when none is

CHECKLIST_INSTRUCTIONS = (
    "For each precondition, decide whether the problem provides it: set `satisfied` to true (the "
    "problem states it or it follows directly from what the problem states), false (the problem "
    "contradicts it or lacks it and it cannot be derived), and put in `evidence` the sentence of the "
    "problem or the short derivation you used. Leave null what you cannot decide and say why in "
    "`evidence`. Map the statement's symbols to the problem's objects first; a precondition marked "
    "`nested` comes from inside the conclusion (A implies (B implies C)): it is needed to get the "
    "conclusion, not to apply the statement. The statement applies only if every precondition is "
    "true; then check that `conclusion` (after the symbol mapping) gives the problem's goal."
)


# ------------------------------------------------------------------------------ results

@dataclass
class NameLookup:
    """A candidate given by its name ("Nakayama's lemma"), not its statement: the name, the document
    used for it (the bundle search's first hit, taken only when the search's match is strong), that
    document's name in the bundle, and the match."""

    name: str
    id: str
    title: str
    match: str


@dataclass
class Checklist:
    """A statement split into preconditions and conclusion, ready to be marked against a problem.

    ``source`` is "text" or the stable id the statement was fetched by. ``parts`` is non-empty when
    the statement lists several results; each has its own preconditions on top of the shared ones.
    With a problem, ``problem_hypotheses`` and ``problem_goal`` are the problem split the same way,
    for side-by-side reading. What the statement only names or defines ("Let $n_p$ be the number of
    Sylow $p$-subgroups") is neither a precondition nor the conclusion: a note lists it."""

    source: str
    statement: str
    preconditions: list[Precondition]
    conclusion: str
    parts: list[ChecklistPart]
    instructions: str
    problem: str | None = None
    problem_hypotheses: list[str] = field(default_factory=list)
    problem_goal: str = ""
    truncated: bool = False
    notes: list[str] = field(default_factory=list)
    # set when the statement was a result's name, looked up in the bundle (None: a statement or an id)
    by_name: NameLookup | None = None


@dataclass
class MathObject:
    """A mathematical object a problem names: its symbol (LaTeX or a letter of prose; empty for an object
    the problem speaks of without naming it, "every group of order 15") and what it is."""

    symbol: str
    description: str


@dataclass
class ProblemSignature:
    """What a problem gives and asks: objects named, hypotheses, goal, and its key terms (its noun phrases,
    then its content words: ``mathlas.tools.key_phrases``, the same rule as search_directive's key terms)."""

    objects: list[MathObject]
    hypotheses: list[str]
    goal: str
    terms: list[str]


@dataclass
class MappingQuestion:
    """One question the agent must answer: a candidate precondition (or its conclusion) against
    the problem. ``likely_matches`` are the problem's hypotheses sharing the most whole words with it
    (a hint, ranked, possibly empty)."""

    id: str
    kind: str                 # "precondition" | "conclusion" | "objects"
    candidate_side: str
    problem_side: str
    question: str
    likely_matches: list[str] = field(default_factory=list)


@dataclass
class MappingScaffold:
    """The needs<->guarantees structure between a problem and a candidate result, and a JSON
    answer template to fill in (every value null until the agent decides it)."""

    problem_signature: ProblemSignature
    candidate: Checklist
    questions: list[MappingQuestion]
    answer_template: dict[str, Any]
    instructions: str


# ------------------------------------------------------------------------------ tools

def _text_arg(value: Any, what: str) -> tuple[str, bool]:
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string (LaTeX or prose), got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise UsageError(f"{what} is empty: pass a theorem statement (LaTeX or prose) or a stable id like stacks:00DV")
    if len(text) > MAX_CHARS:
        return text[:MAX_CHARS], True
    return text, False


def is_stable_id(text: str) -> bool:
    """Whether ``text`` is a stable document id like ``stacks:00DV`` rather than a statement."""
    return bool(_ID_RE.match(text.strip()))


def names_a_result(text: str) -> bool:
    """Whether ``text`` names a result ("Nakayama's lemma", "the snake lemma") rather than states one:
    not a stable id, no math, at most ``NAME_WORDS`` words, nothing the splitter reads as a hypothesis
    or as a claim (no cue, no verb: its conclusion is the text itself), and a name's shape (a
    possessive, or theorem, lemma, inequality... among its words). Strict, for a tool that must tell a
    name from a statement; the search's ``mathlas.ranking.named.reads_as_name`` asks only whether a
    query could be a name at all."""
    text = text.strip().rstrip(".")
    if not text or is_stable_id(text) or _MATH_MARK.search(text) or len(text.split()) > NAME_WORDS:
        return False
    pre, conclusion, parts = split_statement(text)
    if pre or parts or " ".join(conclusion.rstrip(".").split()) != " ".join(text.split()) or complete_clause(text):
        return False
    return bool(_POSSESSIVE.search(text) or _RESULT_NOUN.search(text))


def look_up_name(name: str, bundle: str | None, what: str = "candidate") -> NameLookup:
    """The document a result's name stands for: the first hit of the bundle's search
    (``mathlas.service``, as every surface searches) when the match is strong; otherwise
    ``UsageError`` in one line naming the ids found and what to pass instead (``what``: the
    argument's name in that line)."""
    from mathlas.request import SearchRequest
    from mathlas.service import search

    res = search(SearchRequest.make(name, NAME_SEARCH_K), bundle)
    if res.hits and res.match == "strong":
        h = res.hits[0]
        return NameLookup(name=name, id=h.id, title=h.name or h.title, match=res.match)
    found = ", ".join(f"{h.id} ({h.name or h.title})" for h in res.hits) or "none"
    raise UsageError(f"the {what} {name!r} reads as a result's name, not a statement, and the bundle's search "
                     f"finds no strong match for it (match {res.match}): pass the statement itself or a stable id; "
                     f"top ids found: {found}")


def _resolve(statement: str, bundle: str | None) -> tuple[str, str, str, Any]:
    """(source label, statement text, kind, the document or None): a stable id is fetched from the
    bundle (lazily)."""
    if is_stable_id(statement):
        from mathlas.tools.informal import get_by_id

        doc = get_by_id(statement.strip(), bundle=bundle)
        return doc.id, doc.body or doc.text, doc.kind or "", doc
    return "text", statement, "", None


def _lean_checklist(doc: Any) -> tuple[str, list[Precondition], str, list[MathObject], list[str]] | None:
    """A formal bundle's declaration read by ``mathlas.tools.lean_split`` from its signature: (the
    statement shown, preconditions, conclusion, its variables as objects, notes); None for any other
    document (its text is LaTeX or prose, for the LaTeX splitter)."""
    signature = doc.fields.get("signature") if doc is not None and doc.source == "lean" else None
    if signature is None:
        return None
    signature = " ".join(signature.split())[:MAX_CHARS]
    kind = doc.kind or "declaration"
    split = split_declaration(kind, signature)
    objects: dict[str, MathObject] = {}
    for name, type_ in split.variables:
        objects.setdefault(name, MathObject(symbol=name, description=type_))
    notes = []
    if split.definition:
        notes.append(f"{doc.id} is a {kind}, a definition: it states no result, so there is no conclusion to check"
                     + ("; its binders are listed as preconditions" if split.preconditions else ""))
    elif not signature:
        made, origin = doc.fields.get("generated"), doc.fields.get("generated_from")
        notes.append(f"the bundle holds no signature for {doc.id}: nothing to split"
                     + (f"; @[{made}] makes it from lean:{origin}" if made and origin else ""))
    elif not split.conclusion:
        notes.append(f"{doc.id}'s signature has no type after its binders: no conclusion to check")
    statement = f"{kind} {doc.name} {signature}".strip() if signature else (doc.body or doc.text)
    return statement, split.preconditions, split.conclusion, list(objects.values()), notes


def applicability_checklist(statement: str, problem: str | None = None, bundle: str | None = None) -> Checklist:
    """Split a theorem's statement into atomic preconditions and its conclusion: a checklist to mark
    against your problem (`satisfied`, `evidence` left null). mathlas only structures the text; it
    judges nothing.

    Args:
        statement: LaTeX, prose, a stable id ("stacks:00DV", "lean:mul_comm") or a name.
        problem: optional; split likewise, side by side.
    """
    return _checklist(statement, problem, bundle)[0]


def _checklist(statement: str, problem: str | None, bundle: str | None) -> tuple[Checklist, list[MathObject] | None]:
    """The checklist, and for a Lean declaration its variables as the objects to map (None otherwise:
    the objects are read off the statement's text)."""
    text, truncated = _text_arg(statement, "statement")
    lookup = look_up_name(text, bundle, "statement") if names_a_result(text) else None
    source, body, kind, doc = _resolve(lookup.id if lookup else text, bundle)
    notes = []
    if source != "text":
        notes.append(f"statement fetched from the bundle by id {source}")
    lean = _lean_checklist(doc)
    objects = None
    if lean is not None:
        shown, pre, conclusion, objects, lean_notes = lean
        parts: list[ChecklistPart] = []
        notes += lean_notes
    else:
        if kind == "proof":
            notes.append(f"{source} is a proof, not a statement: what it splits into are steps of the proof; "
                         "check the statement it proves instead (search for its title)")
        if len(body) > MAX_CHARS:
            body, truncated = body[:MAX_CHARS], True
        if truncated:
            notes.append(f"input cut at {MAX_CHARS} characters")
        split = analyse_statement(body)
        pre, conclusion, parts = split.preconditions, split.conclusion, split.parts
        shown = clean_statement(body)
        if split.notations:
            shown_notations = [f"'{n[:300]}{' …' if len(n) > 300 else ''}'" for n in split.notations[:NOTATIONS_SHOWN]]
            more = len(split.notations) - NOTATIONS_SHOWN
            notes.append("not preconditions, what the statement names or defines (map its symbols, nothing to "
                         "check): " + "; ".join(shown_notations) + (f" (+{more} more)" if more > 0 else ""))
        if not conclusion:
            notes.append("no conclusion found: the statement may be a definition or only hypotheses")
        if not pre and not parts and kind != "proof" and not split.notations:
            notes.append("no explicit hypotheses (no let/if/assume...): they may sit in the subject's noun "
                         "phrase, e.g. 'A uniformly continuous map on a compact space ...'; read them off it")
        elif len(pre) == 1 and pre[0].cue in SUBJECT_CUES:
            notes.append(f"no let/if/assume: P1 is the sentence's subject ('{pre[0].text}'); each property in it "
                         "(an adjective, an 'of'/'on'/'over'/'with' phrase) is a hypothesis to check on its own")
    out = Checklist(source=source, statement=shown, preconditions=pre, conclusion=conclusion,
                    parts=parts, instructions=CHECKLIST_INSTRUCTIONS, truncated=truncated, notes=notes,
                    by_name=lookup)
    if problem is not None:
        ptext, ptrunc = _text_arg(problem, "problem")
        out.problem = ptext
        out.problem_hypotheses, out.problem_goal = split_problem(ptext)
        if ptrunc:
            out.truncated = True
            notes.append(f"problem cut at {MAX_CHARS} characters")
    return out, objects


# ------------------------------------------------------------------------------ mapping

_WORD = re.compile(r"(?<![\w\\])[A-Za-z][A-Za-z'-]*[A-Za-z]|(?<![\w\\])[A-Za-z](?![\w])")
_OBJ_BE = re.compile(r"(\$[^$]{1,60}\$(?:\s*(?:,|and)\s*\$[^$]{1,60}\$)*)\s+(?:be|is|are|denotes?)\s+"
                     r"(?:an?|the|two|three|some)\s+([^.;,$]{2,80}?(?:\$[^$]{1,40}\$[^.;,$]{0,40}?)?)"
                     r"(?=[.;,]|\s+(?:and|such|with|if|then|where|satisfying|which|that)\b|$)", re.I)
_OBJ_NOUN = re.compile(r"(?<![\w-])(?:an?|the|every|each|any|some)\s+((?:[A-Za-z-]+\s+){0,3}?[A-Za-z-]+)\s+"
                       r"(\$[^$]{1,40}\$)", re.I)
# the same without math delimiters, as prose writes a symbol: "G is a group of order 15", "Let p be a prime"
_OBJ_BE_PLAIN = re.compile(r"(?<![\w$\\{^_'-])([A-Za-z](?:_\{[^{}$\s]{1,10}\}|_[A-Za-z0-9]{1,4})?)\s+"
                           r"(?:be|is|denotes?)\s+(?:an?|the|some)\s+([^.;,:?!$]{2,80}?(?:\$[^$]{1,40}\$[^.;,:?!$]{0,40}?)?)"
                           r"(?=[.;,:?!]|\s+(?:and|such|with|if|then|where|satisfying|which|that)\b|$)")
# a quantified object the problem does not name ("every group of order 15 is cyclic"), read off the
# sentence it is the subject of; at most MAX_ITEMS looked at
_QUANTIFIER = re.compile(r"(?<![\w-])(?:every|each|any|all)\s+", re.I)
_GOAL_SUBJECT = re.compile(r"(?<![\w-])(?:prove|show|verify|deduce|conclude|establish)(?:\s+that)?\s+(?=an?\s)", re.I)


def words(text: str) -> list[str]:
    """Lower-case whole words outside math (word boundaries only: "string" never yields "ring")."""
    plain = MATH_SPAN.sub(" ", text)
    plain = re.sub(r"\\[A-Za-z]+", " ", plain)
    return [w.lower() for w in _WORD.findall(plain)]


_PREPOSITION = re.compile(r"(?<![\w-])(of|in|on|at|to|by|with|from|over|under|for|into|than)(?![\w-])", re.I)


def problem_objects(text: str, unnamed: bool = False) -> list[MathObject]:
    """Objects a problem names: "$G$ be a finite group" and "a finite group $G$" patterns, with or without
    math delimiters ("G is a group of order 15"); with ``unnamed``, also the objects it quantifies over
    without a name ("Show every group of order 15 is cyclic": symbol "", "group of order 15")."""
    out: list[MathObject] = []
    seen: set[str] = set()
    for m in _OBJ_BE.finditer(text):
        for sym in re.findall(r"\$([^$]+)\$", m.group(1)):
            if sym not in seen and RELATION.search(sym) is None:
                seen.add(sym)
                out.append(MathObject(symbol=sym.strip(), description=tidy(m.group(2))))
    for m in _OBJ_NOUN.finditer(text):
        sym = m.group(2)[1:-1].strip()
        if _PREPOSITION.search(m.group(1)):
            continue  # "a group of order $p^2$": $p^2$ is not the group
        if sym not in seen and RELATION.search(sym) is None:
            seen.add(sym)
            out.append(MathObject(symbol=sym, description=tidy(m.group(1))))
    spans = [m.span() for m in MATH_SPAN.finditer(text)]
    for m in _OBJ_BE_PLAIN.finditer(text):
        sym = m.group(1)
        if sym not in seen and not any(a <= m.start() < b for a, b in spans):
            seen.add(sym)
            out.append(MathObject(symbol=sym, description=tidy(m.group(2))))
    if unnamed:
        starts = [m.start() for m in _QUANTIFIER.finditer(text)] + [m.end() for m in _GOAL_SUBJECT.finditer(text)]
        for start in sorted(starts)[:MAX_ITEMS]:
            if any(a <= start < b for a, b in spans):
                continue
            sentence = re.split(r"(?<=[.;?!])\s", text[start:start + 400], maxsplit=1)[0]
            read = subject_object(sentence)
            if read is not None and read[1] not in seen and (read[0] == "" or read[0] not in seen):
                seen.update(read)
                out.append(MathObject(symbol=read[0], description=tidy(read[1])))
    return out[:MAX_ITEMS]


def _overlap(a: str, b: str) -> int:
    wa = {w for w in words(a) if w not in STOP_WORDS and len(w) > 2}
    return len(wa & {w for w in words(b) if w not in STOP_WORDS and len(w) > 2})


def _likely(text: str, hyps: list[str]) -> list[str]:
    scored = sorted(((_overlap(text, h), i) for i, h in enumerate(hyps)), key=lambda x: (-x[0], x[1]))
    return [hyps[i] for s, i in scored if s > 0][:3]


MAPPING_INSTRUCTIONS = (
    "Answer every question, then fill `answer_template` (JSON): map each candidate symbol to a problem "
    "object in `object_mapping`; for each precondition set `satisfied` (true/false/null), `evidence`, and "
    "`problem_hypothesis` (the problem sentence that provides it, or the derivation); say whether the "
    "candidate's conclusion, after the mapping, gives the goal (`conclusion_gives_goal`) and what is missing "
    "if not (`gap`). `verdict` is \"applies\" only if every precondition is true and the conclusion gives "
    "the goal; \"applies_after_work\" if the gaps are steps you can prove; otherwise \"does_not_apply\" "
    "or \"unknown\"."
)


def _shown(o: MathObject, lean: bool) -> str:
    """An object as the objects question lists it: ``$M$: finite module`` from LaTeX, ``p : ℕ`` from Lean."""
    if lean:
        return f"{o.symbol} : {o.description}" if o.description else o.symbol
    return f"${o.symbol}$: {o.description}" if o.symbol else o.description


def mapping_scaffold(problem: str, candidate: str, bundle: str | None = None) -> MappingScaffold:
    """What a candidate result needs against what a problem gives: the problem's objects, hypotheses
    and goal, the candidate's checklist, a question per precondition and for the conclusion, and an
    answer template.

    Args:
        candidate: its statement, a stable id ("stacks:00DV") or a name.
    """
    ptext, _ = _text_arg(problem, "problem")
    ctext, _ = _text_arg(candidate, "candidate")
    lookup = look_up_name(ctext, bundle) if names_a_result(ctext) else None
    checklist, lean_objects = _checklist(lookup.id if lookup else candidate, ptext, bundle)
    checklist.by_name = lookup   # the candidate's own lookup (the checklist was given the id it found)
    hyps, goal = checklist.problem_hypotheses, checklist.problem_goal
    sig = ProblemSignature(objects=problem_objects(clean_statement(ptext), unnamed=True), hypotheses=hyps,
                           goal=goal, terms=key_phrases(ptext))
    # a Lean declaration's objects are its variables, written as Lean writes them (p : ℕ)
    cand_objs = problem_objects(checklist.statement) if lean_objects is None else lean_objects
    questions: list[MappingQuestion] = []
    if cand_objs or sig.objects:
        questions.append(MappingQuestion(
            id="objects", kind="objects",
            candidate_side="; ".join(_shown(o, lean_objects is not None) for o in cand_objs),
            problem_side="; ".join(_shown(o, False) for o in sig.objects),
            question="Which object of the problem plays the role of each symbol of the candidate?"))
    all_pre = list(checklist.preconditions) + [q for part in checklist.parts for q in part.preconditions]
    for i, p in enumerate(all_pre):
        questions.append(MappingQuestion(
            id=f"P{i + 1}", kind="precondition", candidate_side=p.text,
            problem_side="; ".join(hyps),
            question=(f"The candidate needs: \"{p.text}\". Does the problem provide this (after mapping the "
                      f"symbols), follow from its hypotheses, or fail?"
                      + (" (nested: needed for the conclusion, not to apply the result)" if p.nested else "")),
            likely_matches=_likely(p.text, hyps)))
    questions.append(MappingQuestion(
        id="C", kind="conclusion", candidate_side=checklist.conclusion, problem_side=goal,
        question="Does the candidate's conclusion, after mapping the symbols, give the problem's goal? "
                 "If only partly, what remains to be shown?",
        likely_matches=[goal] if goal and _overlap(checklist.conclusion, goal) else []))
    template = {
        "candidate": checklist.source if checklist.source != "text" else None,
        "object_mapping": {o.symbol: None for o in cand_objs},
        "preconditions": [{"id": f"P{i + 1}", "text": p.text, "satisfied": None, "evidence": None,
                           "problem_hypothesis": None} for i, p in enumerate(all_pre)],
        "conclusion_gives_goal": None,
        "gap": None,
        "verdict": None,
        "verdict_choices": ["applies", "applies_after_work", "does_not_apply", "unknown"],
    }
    return MappingScaffold(problem_signature=sig, candidate=checklist, questions=questions,
                           answer_template=template, instructions=MAPPING_INSTRUCTIONS)
