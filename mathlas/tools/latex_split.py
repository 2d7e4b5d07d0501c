"""The LaTeX statement splitter behind ``mathlas.tools.scaffold``: a theorem's text in, its
preconditions, conclusion and parts out. Pure text work (no bundle, no I/O) in five passes over the
cleaned text:

1. **Protect.** Every math span (``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``, math environments
   such as ``equation``/``align``) and every *matched* bracket pair (``{}``, ``()``, ``[]``,
   ``\\{ \\}``, hence ``\\left( .. \\right)``) is marked protected: no cue word, comma or period inside
   one ever splits the text, so ``$f: X \\to Y$`` or ``\\{x : x > 0\\}`` stay whole. An unmatched
   bracket protects nothing (one stray ``)`` must not swallow the statement).
2. **Lists.** A top-level ``enumerate``/``itemize``/``description`` is read by its context: after
   "Assume", "Suppose that", "such that", ":"... its items are hypotheses; items that carry their own
   "if/then" become ``parts`` (one checklist each, sharing the preamble's hypotheses); otherwise
   (e.g. "The following are equivalent") they are conclusion pieces.
3. **Sentences and cues.** Sentences end at unprotected ``. ? !`` (not after "i.e.", "e.g."...).
   Cue words are matched case-insensitively on word boundaries, never inside math: hypothesis cues
   (let, suppose, assume, if, when, whenever, provided, where, for all/every/any/each, given, such
   that) and conclusion cues (then, hence, therefore, thus, consequently, it follows that, implies).
   "if and only if", "only if", "even if" are not cues. A conclusion that is itself conditional
   ("if A then (if B then C)") is split again: B becomes a precondition marked ``nested``.
4. **Conjunctions.** A hypothesis clause is split at unprotected ", ", " and ", "; " only where both
   sides are complete claims (a verb such as is/be/has, or a relation such as ``=``, ``\\subset``,
   ``\\to`` in math or ``=``, ``≤``, ``∈`` in prose), so "Let $A$ and $B$ be rings" stays one precondition
   while "Let $R$ be a ring and $M$ a finite $R$-module" becomes two ("Let $M$ be a finite $R$-module" for
   the second). Symbols count with or without math delimiters ("Let G be a finite group and p a prime"). A
   conjunct that leaves out its verb or subject gets them from the clause before it ("Suppose G is a group
   and H a subgroup": "H is a subgroup"; "f is continuous on [a, b] and differentiable on (a, b)": "f is
   differentiable on (a, b)"), but an "and" inside a noun phrase, a disjunction or a range stays ("a compact
   and connected space", "$a$ and $b$ are coprime", "between A and B"). A participle right after the noun
   is a claim of its own ("Let p be a prime dividing |G|": "Let p be a prime", "p divides |G|").
5. **Notation.** "Let $n_p$ be the number of ..." (a definite noun phrase bringing in nothing new) and, between
   a hypothesis and the conclusion, a sentence that defines ("A Sylow $p$-subgroup is ...", "Set $N = ...$",
   "... is called ...") are neither preconditions nor conclusion: ``analyse_statement`` lists them apart.
   A cueless claim about a symbol there ("$M$ is finite.") is a precondition.

In a problem, a declarative part before its question or task is given, the rest asked: "G is a group of
order 15; does it have an element of order 5?", "If $G$ is abelian, is $G$ cyclic?"; a task whose claim
opens with a quantifier is read through its subject ("Show every group of order 15 is cyclic": given "it
is a group of order 15", asked "Show it is cyclic").

The cleaning before them (``clean_statement``) cuts the text where a proof starts, however LaTeX sets
its heading (``\\begin{proof}``, ``{\\bf Proof:\\\\}``, ``\\textit{Proof.}``, "Proof." after a sentence:
``proof_start``), unwraps theorem environments and font switches, and drops bibliographies. After them,
a statement of one sentence with no cue at all is read through its subject ("A finite integral domain
is a field": ``subject_split``).

Every piece is cut at ``MAX_ITEM_CHARS`` and at most ``MAX_ITEMS`` pieces are kept per list; one
hypothesis is tried for a split at its first ``_MAX_CUTS`` commas and "and"s; the caller bounds the input.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_ITEMS = 64              # preconditions / parts kept per checklist
MAX_ITEM_CHARS = 1_000      # characters kept per precondition or conclusion
_MAX_DEPTH = 4              # nesting of conditionals inside conclusions and lists
_MAX_CUTS = 4 * MAX_ITEMS   # places one hypothesis is tried at for a split (", ", " and ", "; ")


# ------------------------------------------------------------------------------ results

@dataclass
class Precondition:
    """One atomic hypothesis of the statement, for the agent to mark against the problem.
    ``cue`` is the word that introduced it; ``nested`` is true when it comes from a conditional
    inside the conclusion."""

    text: str
    satisfied: bool | None = None
    evidence: str | None = None
    cue: str = ""
    nested: bool = False


@dataclass
class ChecklistPart:
    """One item of a statement that lists several results (Stacks' numbered lemma parts)."""

    label: str
    preconditions: list[Precondition]
    conclusion: str


# ------------------------------------------------------------------------------ cleaning

_MATH_ENVS = ("equation", "align", "gather", "multline", "eqnarray", "displaymath", "math", "alignat",
              "flalign", "split", "array", "tikzcd", "xy", "diagram", "CD", "matrix", "pmatrix",
              "bmatrix", "cases", "xymatrix")
_LIST_ENVS = ("enumerate", "itemize", "description")
_DROP_CMDS = ("label", "index", "indexdef", "indexsee", "noindent", "medskip", "smallskip", "bigskip")
_UNWRAP_CMDS = ("emph", "textit", "textbf", "textsl", "textup", "textrm")
_DROP_PARAGRAPH = re.compile(r"^\s*(for instance|for example|example|examples|remark|remarks|note that|"
                             r"this result|this shows|the converse|in other words|proof|\\begin\{proof\}|\\begin\{remark\}|\\begin\{example\})\b", re.I)
_DISPLAY_END = r"(\\\]|\$\$|\\end\{(?:" + "|".join(_MATH_ENVS) + r")\*?\})"
# A theorem environment's body is the statement: unwrapped, else the whole of it is one protected span.
_THEOREM_ENV = re.compile(r"\\(?:begin|end)\{(?:thm|theorem|thmplain|lem|lemma|prop|proposition|cor|coro|corollary|"
                          r"claim|conjecture)\*?\}(?:\[[^\]]{0,80}\])?")
# "Theorem." / "Lemma 2:" / "Theorem (Nicomachus)." opening the text: a heading, not a sentence of it
_HEADING = re.compile(r"^(?:Theorem|Lemma|Proposition|Corollary|Claim)(?:\s+\d+(?:\.\d+)*)?(?:\s*\([^()]{0,80}\))?"
                      r"\s*[.:]\s+(?=\S)")
# Where a proof starts in the text of an entry that carries one (PlanetMath), as LaTeX writes it:
# \begin{proof}; "Proof" set in a font (\textbf{Proof.}, {\bf Proof:\\}, {\em Proof.}, \emph{Proof}, also
# "First proof", "Proof of Lemma 2", "Proof (sketch)", "Proof 1") ending in "." ":" "-" or followed by
# what starts a sentence; a bare "Proof." or "Proof:". Only at a boundary (_PROOF_AFTER): "a \emph{proof}
# of $A$" and "the film {\it Proof}, starring" are prose.
_FONT = (r"(?:\{\s*\\(?:bf|it|em|sl|sc|bfseries|itshape|scshape)(?![A-Za-z])\s*"
         r"|\\(?:textbf|textit|emph|textsl|textsc|underline)\s*\{\s*)")
_PROOF_NAME = (r"(?i:(?:(?:first|second|third|alternative|alternate|another|short|direct)\s+)?proof)"
               r"(?:\s+(?:of|that|using|by|for)\b(?:[^{}]|\{[^{}]*\}){0,80}?|\s*\d+|\s*\([^()]{0,60}\))?")
_CLOSE = r"(?:\\[,;!]\s*|\\\\\s*)*\}(?:\s*\})*"
_PROOF_HEAD = re.compile(
    r"\\begin\{proof\}"
    r"|(?:" + _FONT + r")+\s*" + _PROOF_NAME
    + r"\s*(?:[.:\u2013\u2014-]+\s*" + _CLOSE + r"|" + _CLOSE
    + r"(?:\s*[.:]|(?=\s*(?:\\\\|\\[,;!]|\$|\\begin|[A-Z(]))))"
    r"|(?<![\w\\])Proof(?:\s+(?:of|that)\s[^.:]{0,60}?)?\s*[.:](?=\s|\\|$)")
_PROOF_AFTER = re.compile(r"(?:[.!?:;$)\]}]|\\\\)\s*(?:\\(?:noindent|medskip|bigskip|smallskip|par|newline)(?![A-Za-z])\s*)*$")


def _drop_command(text: str, name: str) -> str:
    """Remove ``\\name`` with all its balanced brace arguments."""
    out, i = [], 0
    pat = re.compile(r"\\" + re.escape(name) + r"\*?(?![A-Za-z])")
    for m in pat.finditer(text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        j = m.end()
        while True:
            k = j
            while k < len(text) and text[k] in " \t":
                k += 1
            if k >= len(text) or text[k] != "{":
                break
            depth, k2 = 0, k
            while k2 < len(text):
                if text[k2] == "\\":
                    k2 += 2
                    continue
                depth += text[k2] == "{"
                depth -= text[k2] == "}"
                k2 += 1
                if depth == 0:
                    break
            j = k2
        i = j
    out.append(text[i:])
    return "".join(out)


def proof_start(text: str, pos: int = 0) -> int:
    """Where a proof starts in ``text`` at or after ``pos`` (see ``_PROOF_HEAD``), or -1: the first
    proof heading at a boundary with some of the statement before it. A text that opens with its proof
    has no statement to cut it from."""
    for m in _PROOF_HEAD.finditer(text, pos):
        before = text[:m.start()]
        if before.strip() and not _PROOF_AFTER.search(before[-80:]):
            continue
        if re.search(r"[A-Za-z0-9$]", re.sub(r"\\[A-Za-z]+\*?|\[[^\]]*\]", " ", before)):
            return m.start()
    return -1


_LIST_MARK = re.compile(r"\\(begin|end)\{(" + "|".join(_LIST_ENVS) + r")\}|\\item(?![A-Za-z])")


def _in_a_list(text: str, at: int) -> bool:
    """Whether ``at`` lies inside a list environment of ``text``."""
    depth = 0
    for m in _LIST_MARK.finditer(text, 0, at):
        depth += {"begin": 1, "end": -1}.get(m.group(1), 0)
    return depth > 0


def _item_end(text: str, at: int) -> int:
    """Where the list item holding ``at`` ends: its list's next \\item or \\end."""
    depth = 0
    for m in _LIST_MARK.finditer(text, at):
        if m.group(1) == "begin":
            depth += 1
        elif depth == 0:
            return m.start()
        elif m.group(1) == "end":
            depth -= 1
    return len(text)


def drop_proofs(text: str) -> str:
    """``text`` without its proofs: from the first proof heading on (``proof_start``), all of it; a
    proof inside a list item ("each property, then its proof") only to the end of its item, so the
    items after it stay."""
    pos = 0
    while (cut := proof_start(text, pos)) >= 0:
        if not _in_a_list(text, cut):
            return text[:cut]
        text = text[:cut] + " " + text[_item_end(text, cut):]
        pos = cut + 1
    return text


def _theorem_boundary(m: re.Match[str]) -> str:
    """A theorem environment's \\begin/\\end becomes a sentence end where the text has none, so "the
    following \\begin{thm} Let..." does not run on into the theorem."""
    before = re.sub(r"(?:\\\\|\\[,;:!]|\s)+$", "", m.string[:m.start()])
    return " " if not before or before[-1] in ".!?;" else ". "


def _outside_math(text: str, change) -> str:
    """``change`` applied to the text between math spans (``MATH_SPAN``), the math left as it is."""
    out, last = [], 0
    for m in MATH_SPAN.finditer(text):
        out += [change(text[last:m.start()]), m.group(0)]
        last = m.end()
    return "".join(out + [change(text[last:])])


def clean_statement(text: str) -> str:
    """The statement as one line of LaTeX/prose: comments, labels, index entries and bibliographies
    removed, its proofs dropped (``drop_proofs``), theorem environments, emphasis and font switches
    unwrapped, example/remark paragraphs after the statement dropped, a "Theorem." heading and LaTeX
    spacing outside math removed."""
    text = re.sub(r"(?<!\\)%[^\n]*", "", text)
    text = re.sub(r"\\begin\{(reference|slogan|history|thebibliography)\}.*?\\end\{\1\}", " ", text, flags=re.S)
    for name in _DROP_CMDS:
        text = _drop_command(text, name)
    text = drop_proofs(text)
    text = _THEOREM_ENV.sub(_theorem_boundary, re.sub(r":\s*(?=" + _THEOREM_ENV.pattern + ")", " ", text))
    for name in _UNWRAP_CMDS:
        text = re.sub(r"\\" + name + r"\{([^{}]*)\}", r"\1", text)
    # old-style font switches: {\it groupoid}, {\em ...}; {\bf ...} only around words ({\bf R} is a symbol)
    text = re.sub(r"\{\\(?:it|em|sl)(?![A-Za-z])\s*([^{}$]*)\}", r"\1", text)
    text = re.sub(r"\{\\bf(?![A-Za-z])\s*([^{}$]*[A-Za-z]{2}[^{}$]*)\}", r"\1", text)
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    kept = paragraphs[:1]
    for p in paragraphs[1:]:
        if _DROP_PARAGRAPH.match(p):
            break
        kept.append(p)
    text = " ".join(kept)
    # a period ending a displayed formula ends the sentence: move it out of the display
    text = re.sub(r"(?<!\\right)(?<!\\left)([.;,])\s*" + _DISPLAY_END, r"\2\1", text)
    text = re.sub(r"\s+", " ", re.sub(r"~", " ", text))
    # outside math, spacing (\, \; \: \!) is typography and a line break \\ after a sentence's end
    # is not part of it: "$K$.\\ \,Let $x$ ..." is two sentences, the second opening with "Let"
    text = _outside_math(text, lambda t: re.sub(r"([.?!:;])\s*\\\\(?:\[[^\]]*\])?|\s*\\\\\s*$", r"\1 ",
                                                 re.sub(r"(?<!\\)\\[,;:!]", " ", t)))
    return _HEADING.sub("", re.sub(r"\s+", " ", text).strip())


# ------------------------------------------------------------------------------ protection

def _find_end_env(text: str, start: int, name: str) -> int:
    """Index just past the ``\\end{name}`` matching a ``\\begin{name}`` that ends at ``start``; -1 if none."""
    pat = re.compile(r"\\(begin|end)\{" + re.escape(name) + r"\}")
    depth = 1
    for m in pat.finditer(text, start):
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return m.end()
    return -1


def protected_mask(text: str, *, lists_protected: bool = False) -> list[bool]:
    """True at every character inside math or a matched bracket pair (see the module docstring)."""
    n = len(text)
    diff = [0] * (n + 1)

    def protect(a: int, b: int) -> None:
        diff[a] += 1
        diff[b] -= 1

    stack: list[tuple[str, int]] = []
    closing = {")": "(", "]": "[", "}": "{", "\\}": "\\{"}
    i = 0
    while i < n:
        c = text[i]
        if c == "\\":
            two = text[i:i + 2]
            if two in ("\\[", "\\("):
                end = text.find("\\]" if two == "\\[" else "\\)", i + 2)
                if end >= 0:
                    protect(i, end + 2)
                    i = end + 2
                    continue
            m = re.match(r"\\begin\{([A-Za-z]+\*?)\}", text[i:i + 40])
            if m:
                name = m.group(1)
                if name in _LIST_ENVS and not lists_protected:
                    i += m.end()
                    continue
                end = _find_end_env(text, i + m.end(), name)
                if end >= 0:
                    protect(i, end)
                    i = end
                    continue
            if two == "\\{":
                stack.append(("\\{", i))
            elif two == "\\}" and stack and stack[-1][0] == "\\{":
                protect(stack.pop()[1], i + 2)
            i += 2
            continue
        if c == "$":
            if text.startswith("$$", i):
                end = text.find("$$", i + 2)
                width = 2
            else:
                end = i + 1
                while end < n and (text[end] != "$" or text[end - 1] == "\\"):
                    end += 1
                end = end if end < n else -1
                width = 1
            if end >= 0:
                protect(i, end + width)
                i = end + width
                continue
        elif c in "([{":
            stack.append((c, i))
        elif c in ")]}":
            if stack and stack[-1][0] == closing[c]:
                protect(stack.pop()[1], i + 1)
            else:  # a stray closer: drop openers it cannot match, protect nothing
                for k in range(len(stack) - 1, -1, -1):
                    if stack[k][0] == closing[c]:
                        protect(stack[k][1], i + 1)
                        del stack[k:]
                        break
        i += 1
    mask, depth = [], 0
    for k in range(n):
        depth += diff[k]
        mask.append(depth > 0)
    return mask


# ------------------------------------------------------------------------------ cues

_HYP_CUES = ("let", "suppose that", "suppose", "assume that", "assume", "if", "when", "whenever",
             "provided that", "provided", "where", "for all", "for every", "for any", "for each",
             "given", "such that")
_CONCL_CUES = ("then", "hence", "therefore", "thus", "consequently", "it follows that", "implies")
_GOAL_CUES = ("prove that", "prove", "show that", "show", "find", "determine whether", "determine",
              "compute", "calculate", "evaluate", "decide whether", "is it true that", "does",
              "disprove", "verify that", "establish that", "deduce that", "conclude that")
_KEEP_CUE = {"let", "for all", "for every", "for any", "for each"}  # the rest reads badly without them


def _cue_regex(cues: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(c).replace(r"\ ", r"\s+") for c in sorted(cues, key=len, reverse=True))
    return re.compile(r"(?<![\w\\'-])(" + alts + r")(?![\w'-])", re.I)


_HYP_RE = _cue_regex(_HYP_CUES)
_CONCL_RE = _cue_regex(_CONCL_CUES)
_GOAL_RE = _cue_regex(_GOAL_CUES)
_NOT_IF_BEFORE = re.compile(r"(?<![\w'-])(only|even|as|and)\s+$", re.I)
_NOT_IF_AFTER = re.compile(r"^\s+(and\s+only\s+if|necessary|needed|any|so|possible|not)\b", re.I)
_EXISTENTIAL = re.compile(r"(?<![\w-])(there\s+(exists?|is|are)|exists?|some|an?\s+\w+\s+such)(?![\w-])", re.I)
_RELATIVE = re.compile(r"(such\s+that|which|that|whose|with|satisfying)\b", re.I)  # continues a clause
_ABBREV = re.compile(r"(?<![\w])(i\.e|e\.g|resp|cf|etc|vs|Prop|Thm|Lem|Cor|Def|Sec|Ch|Eq|no|Fig)\.$", re.I)


def _norm_cue(s: str) -> str:
    return re.sub(r"\s+", " ", s.lower())


def _cues(text: str, mask: list[bool], regex: re.Pattern[str]) -> list[tuple[int, int, str]]:
    """Unprotected cue matches as (start, end, cue); "if and only if" and friends are skipped."""
    found = []
    for m in regex.finditer(text):
        if mask[m.start()]:
            continue
        cue = _norm_cue(m.group(1))
        if cue == "if" and (_NOT_IF_BEFORE.search(text[:m.start()]) or _NOT_IF_AFTER.match(text[m.end():])):
            continue
        found.append((m.start(), m.end(), cue))
    return found


# ------------------------------------------------------------------------------ splitting

_VERB_WORDS = (r"is|are|be|been|being|has|have|had|holds?|satisf(?:y|ies|ied)|contains?|"
               r"divides?|lies|lie|belongs?|equals?|exists?|converges?|admits?|denotes?|commutes?|"
               r"vanish(?:es)?|generates?|acts?|maps?|sends?|preserves?|agrees?|extends?|factors?|"
               r"does|do|can|cannot|must|are not|is not")
_VERB = re.compile(r"(?<![\w\\-])(" + _VERB_WORDS + r")(?![\w-])", re.I)
RELATION = re.compile(r"=|<|>|\\(?:le|leq|ge|geq|subset|subseteq|subsetneq|supset|supseteq|in|notin|ne|"
                       r"neq|cong|simeq|to|mid|nmid|equiv|approx|perp|rightarrow|longrightarrow|mapsto|"
                       r"hookrightarrow|twoheadrightarrow|iff|implies|sim|leqslant|geqslant|ll|gg|"
                       r"triangleleft|lhd|unlhd)(?![A-Za-z])|:")
# A symbol written without math delimiters, as prose writes it ("G", "n_p", "|G|", "(X, d)", "T: X → X",
# "f: [a,b] → R"): letters that stand alone (no two letters in a row but in a sub- or superscript),
# brackets, and the arrow, colon and product of a map's type. Every part is bounded (no backtracking blow-up).
_SCRIPT = r"(?:_\{[^{}\s$]{1,20}\}|_[A-Za-z0-9]{1,8}|\^\{[^{}\s$]{1,20}\}|\^[A-Za-z0-9*]{1,8}|[0-9]{1,3}|['′*]{1,3})"
# ("a" before a word is the article: "$b_1$ and a height", but "a an integer" names a)
_ATOM = (r"[(\[|]{0,2}(?:\[[^\]\s]{1,12}|(?![Aa]\s+(?!(?:an?|and|or|be|is|are|the|has|have|divides|does)\b)[a-z])[A-Za-zΑ-Ωα-ωℝℂℕℤℚ]" + _SCRIPT
         + r"{0,3}(?![\w\\'′]))[)\]|]{0,2}")
_ITEM = (r"(?:\$[^$]{1,200}\$|" + _ATOM + r"(?:\s{0,3}(?::|→|->|×|\\to)\s{0,3}" + _ATOM + r"){0,3})")
_SYMBOLS = _ITEM + r"(?:\s{0,3}(?:,|,?\s+and)\s{0,3}" + _ITEM + r"){0,8}"
PLAIN_SYMBOLS = re.compile(r"^(?:" + _SYMBOLS + r")$")  # a whole piece that is symbols only ("A", "$x$, $y$")
# "$R$ a ring", "p a prime dividing |G|", "A, B disjoint closed subsets" (two or more symbols, no article):
# the verb of a "Let X be A and Y B" left out
_LET_ELLIPSIS = re.compile(r"^(" + _SYMBOLS + r")\s+((?:a|an|the|some|two|three|its|their)\s.*)$", re.I)
_PLURAL_ELLIPSIS = re.compile(r"^(" + _ITEM + r"(?:\s{0,3}(?:,|,?\s+and)\s{0,3}" + _ITEM + r"){1,8})\s+"
                              r"(?!(?:of|in|on|at|to|by|with|from|over|under|for|into|than|between|and|or|is|are|be|"
                              r"such|that|which|where|if|then|when)\b)([a-z][a-z-]+\s.*)$")
MATH_SPAN = re.compile(r"\$\$.+?\$\$|\$[^$]+\$|\\\(.+?\\\)|\\\[.+?\\\]")
# a relation written in prose, outside math: "f(a) = f(b)", "|f_n| ≤ g", "x ∈ A"
_PLAIN_RELATION = re.compile(r"[=≤≥≠<>∈∉⊂⊆⊊⊃⊇≅≃≡∣∤≈]|(?<![\w\\])(?:<=|>=|!=)")
# a fragment that starts inside brackets ("v>| ≤ ||u||" of "|<u, v>|" cut at its comma) is no clause
_DANGLING = re.compile(r"^[^(\[{<⟨]*?(?:(?<=\w)>|[)\]}⟩])")


def _ellipsis(seg: str) -> re.Match[str] | None:
    """"$R$ a ring", "p a prime", "A, B disjoint closed subsets of X": symbols and what they are, the
    verb left out."""
    seg = seg.strip()
    return _LET_ELLIPSIS.match(seg) or _PLURAL_ELLIPSIS.match(seg)


def complete_clause(seg: str) -> bool:
    """A clause that can stand alone as a precondition: a verb, a math relation (in math, or written in
    prose), or "$X$ a ..." / "X a ..." (a let whose verb is left out)."""
    plain = MATH_SPAN.sub(" ", seg)
    if _VERB.search(plain):
        return True
    if any(RELATION.search(m.group(0)) for m in MATH_SPAN.finditer(seg)):
        return True
    if _PLAIN_RELATION.search(plain) and not _DANGLING.match(plain.strip()):
        return True
    return bool(_ellipsis(seg))


_LAST_JOIN = re.compile(r"\s+(?:and|or)$", re.I)


def _without_trailing_joins(s: str) -> str:
    """``s`` without the separators and joining words it ends with (", and", ";", "."), taken off from
    the end one at a time: the regex that matched the whole run at once backtracked from every
    position of a long ", and , and ..." (1.8 s for 20,000 characters)."""
    while True:
        t = s.rstrip()
        if t[-1:] in (",", ";", ":", "."):
            s = t[:-1]
            continue
        tail = t[-40:]
        m = _LAST_JOIN.search(tail)
        if m is None:
            return s
        s = t[:len(t) - len(tail) + m.start()]


def tidy(s: str) -> str:
    s = s.strip()
    s = re.sub(r"^(?:(?:and|or)\b|[,;:.])\s*", "", s, flags=re.I)
    s = _without_trailing_joins(s)
    s = s.strip()
    return s[:MAX_ITEM_CHARS] + (" …" if len(s) > MAX_ITEM_CHARS else "")


# "Let X be A and Y B" / "X is A and B": a conjunct that left out its subject or verb gets them from the
# clause before it. The subject carried is a symbol (or "it"/"they"), never a noun phrase ("the map").
_HEAD = re.compile(r"^(let\s+)?(" + _SYMBOLS + r"|it|they)\s+(" + _VERB_WORDS + r")\s+(\S.*)$", re.I)
# a predicate carried to the next conjunct only when it is one (an adjective, "continuous on [a, b]"), not
# a noun phrase ("a compact and connected space"), a negation or a range ("between 0 and one")
_NOUN_PREDICATE = re.compile(r"^(?:an?|the|some|any|every|each|all|no|not|one|two|three|its|their)\b"
                             r"|(?<![\w-])(?:between|both|either|neither|from)(?![\w-])", re.I)
# what a bare predicate cannot start with: a determiner, a preposition (it continues the one before:
# "on A and on B"), a pronoun, a cue, a connective or a negation ("integers, not both zero": its scope
# is the whole clause)
_NOT_PREDICATE = re.compile(r"^(?:an?|the|some|any|every|each|all|no|not|of|in|on|at|to|by|with|from|over|under|for|"
                            r"into|than|between|as|so|then|there|this|that|these|those|its|their|his|her|we|one|"
                            r"or|and|if|when|where|which|who|whose|such|it|they|hence|thus|let|for)\b", re.I)
_BARE_PREDICATE = re.compile(r"^[a-z][a-z-]+\b")
_RELATIVE_WORD = re.compile(r"(?<![\w-])(?:which|whose|who|whom|where|that)(?![\w-])", re.I)
_VERB_FIRST = re.compile(r"^(?:has|have|admits?|satisf(?:y|ies)|contains?|divides?|lies|belongs?|equals?|"
                         r"converges?|commutes?|vanish(?:es)?|generates?|acts?|maps?|sends?|preserves?|"
                         r"extends?|factors?|does|can|cannot|must|is|are)\b", re.I)
# "a prime dividing |G|": a participle right after the noun (no preposition between) says a second thing
# of the same symbol: "p divides |G|"
_PARTICIPLES = {"dividing": ("divides", "divide"), "containing": ("contains", "contain"),
                "satisfying": ("satisfies", "satisfy"), "acting": ("acts", "act"), "having": ("has", "have"),
                "admitting": ("admits", "admit"), "preserving": ("preserves", "preserve"),
                "fixing": ("fixes", "fix"), "lying": ("lies", "lie"), "vanishing": ("vanishes", "vanish"),
                "converging": ("converges", "converge"), "commuting": ("commutes", "commute"),
                "generating": ("generates", "generate")}
_NOUN_WORD = (r"(?!(?:of|in|on|at|to|by|with|from|over|under|for|into|than|that|which|whose|such|and|or|not|"
              + "|".join(_PARTICIPLES) + r")\b)[\w-]+")
_PARTICIPLE = re.compile(r"^(let\s+)?(" + _ITEM + r")\s+(be|is)\s+(an?\s+(?:" + _NOUN_WORD + r"\s+){0,2}"
                         + _NOUN_WORD + r")\s+(not\s+)?(" + "|".join(_PARTICIPLES) + r")\s+(\S.*)$", re.I)
# "a finite group G", "a prime $p$ dividing |G|": an object brought in with its name (after "given")
_OBJECT = re.compile(r"^(?:an?|some)\s+(?:" + _NOUN_WORD + r"\s+){1,4}?(?:" + _ITEM + r")(?:\s+(?:"
                     + "|".join(_PARTICIPLES) + r"|in|of|on|over|with)\s+[^\s]+(?:\s+[^\s]+){0,4})?$", re.I)


def _head(piece: str) -> tuple[str, str, str, str] | None:
    """("Let " or "", subject, verb, the rest) of a clause whose subject is a symbol: "f is continuous
    on [a, b]", "Let $G$ be a group". None also when a relative clause follows ("..., whose densities are
    ..."): a conjunct after it may belong to that clause, not to the subject."""
    m = _HEAD.match(piece.strip())
    if m is None or _RELATIVE_WORD.search(MATH_SPAN.sub(" ", m.group(4))):
        return None
    return ("Let " if m.group(1) else ""), m.group(2), m.group(3), m.group(4)


def _carried(piece: str, head: tuple[str, str, str, str] | None) -> str | None:
    """``piece`` with the subject (and copula) of the clause before it, when it left them out: "f is
    continuous and differentiable on (a, b)" gives "f is differentiable on (a, b)", "f is bounded and has a
    maximum" gives "f has a maximum". None: nothing to carry."""
    if head is None:
        return None
    let, subject, verb, rest = head
    p = piece.strip()
    if re.fullmatch(r"\w+ly", rest.strip()) or re.fullmatch(r"\w+ly", p) or re.match(r"\w+ing\b", p):
        return None  # "identically and independently distributed", "bounded below and consisting of ..."
    if verb.lower() in ("is", "are", "be"):
        if (not complete_clause(p) and _BARE_PREDICATE.match(p) and not _NOT_PREDICATE.match(p)
                and not _NOUN_PREDICATE.search(rest)):
            return f"{let}{subject} {verb} {p}"
    if not let and _VERB_FIRST.match(p):
        return f"{subject} {p}"
    return None


def _participle(piece: str) -> list[str]:
    """"Let p be a prime dividing |G|" -> "Let p be a prime", "p divides |G|" (see ``_PARTICIPLE``)."""
    m = _PARTICIPLE.match(piece.strip())
    if m is None or re.fullmatch(r"[a-z-]+", m.group(7).strip()):
        return [piece]  # "a directed suprema preserving mapping": a compound adjective, not a participle
    let, symbol, be, noun, negated, part, rest = m.groups()
    third, base = _PARTICIPLES[part.lower()]
    verb = f"does not {base}" if negated else third
    # "$x' \in X_{k'}$ be a point lying over $x$": the point is $x'$
    named = re.match(r"^\$\s*([^$]+?)\s*(?:\\in|\\subset|\\subseteq|:)(?![A-Za-z])", symbol)
    who = f"${named.group(1)}$" if named else symbol
    return [f"{let[:3] + ' ' if let else ''}{symbol} {be} {noun}", f"{who} {verb} {rest}"]


def _split_conjuncts(seg: str, cue: str) -> list[str]:
    """Split a hypothesis at unprotected ", ", " and ", "; " where both sides are complete claims. A side
    that left out its subject or verb gets them from the clause before it ("Let G be a group and H a
    subgroup": "Let H be a subgroup"; "f is continuous and bounded": "f is bounded"); an "and" inside a noun
    phrase ("a compact and connected space", "$a$ and $b$ are coprime", "between A and B") stays."""
    mask = protected_mask(seg)
    cuts = []
    for m in re.finditer(r"\s*;\s*|\s*,\s*(?:and\s+)?|\s+and\s+", seg):
        if not mask[m.start()] and not (m.end() < len(mask) and mask[m.end() - 1]):
            cuts.append((m.start(), m.end()))
            if len(cuts) >= _MAX_CUTS:
                break  # each cut reads the piece before it again: a bound keeps a long list linear
    pieces, seps, last = [], [], 0
    for a, b in cuts:
        pieces.append(seg[last:a])
        seps.append(seg[a:b])
        last = b
    pieces.append(seg[last:])
    seps.append("")
    # a piece that is symbols only ("A" of "A, B disjoint closed subsets of X") goes with the next one
    k = 0
    while k < len(pieces) - 1:
        if PLAIN_SYMBOLS.match(pieces[k].strip()) and not complete_clause(pieces[k]) and pieces[k + 1].strip():
            pieces[k:k + 2] = [pieces[k] + seps[k] + pieces[k + 1]]
            del seps[k]
        else:
            k += 1
    if cue == "given" and len(pieces) > 1 and all(_OBJECT.match(p.strip()) for p in pieces):
        return [t for t in (tidy(p) for p in pieces) if t]  # "Given a finite group G and a prime p dividing |G|"
    let = cue == "let"
    out: list[str] = []
    head = None  # the subject of the last clause, for a conjunct that leaves it out
    sep = ""
    for k, (piece, next_sep) in enumerate(zip(pieces, seps, strict=True)):
        if piece.strip():
            # "isotone, antitone, or monotone": a disjunction, nothing to carry
            disjunction = k + 1 < len(pieces) and re.match(r"\s*(?:or|resp)\b", pieces[k + 1], re.I)
            carried = (_carried(piece, head) if out and not disjunction and not _EXISTENTIAL.search(out[-1])
                       else None)
            own = _head(re.sub(r"^\s*(?:that|and)\s+", "", piece.strip(), flags=re.I))
            if carried is not None and complete_clause(out[-1]):
                out.append(carried)
                own = _head(carried)
            elif out and (not complete_clause(out[-1]) or not complete_clause(piece) or _EXISTENTIAL.search(out[-1])
                          or _RELATIVE.match(piece.strip())):
                # rejoined with its own separator; "Let a" + "b be integers" is one clause again; after
                # "with mean $m$" a conjunct ("variance $v$") continues that phrase, not the subject's clause
                if not complete_clause(out[-1]):
                    own = _head(out[-1] + sep + piece)
                elif not _RELATIVE.match(piece.strip()) and not _RELATIVE_WORD.search(MATH_SPAN.sub(" ", piece)):
                    own = head
                out[-1] = out[-1] + sep + piece
            else:
                out.append(piece)
                if re.match(r"\s*let\s", piece, re.I):
                    let = True
            head = own
        sep = next_sep
    return [t for t in (tidy(p) for p in _with_verbs(out, let)) if t]


def _with_verbs(clauses: list[str], let: bool) -> list[str]:
    """The clauses of a split hypothesis, each with the verb it left out: "p a prime" after "Let G be a
    group" is "Let p be a prime", after "G is a group" "p is a prime"; "H be a subgroup" after a let is
    "Let H be a subgroup"; then a participle is read off ("a prime dividing |G|": ``_participle``)."""
    done = []
    for k, p in enumerate(clauses):
        p = p.strip()
        if k and (ell := _ellipsis(p)):
            plural = bool(re.search(r",|\sand\s", MATH_SPAN.sub(" ", ell.group(1)))) or ell.re is _PLURAL_ELLIPSIS
            before = _head(clauses[k - 1])
            if let:
                p = f"Let {ell.group(1)} be {ell.group(2)}"
            elif before is not None and before[2].lower() in ("is", "are"):
                p = f"{ell.group(1)} {'are' if plural else 'is'} {ell.group(2)}"
        elif (k and let and (h := _HEAD.match(p)) and h.group(3).lower() in ("be", "denote")
              and p[:4].lower() != "let "):
            p = "Let " + p
        done += _participle(p)
    return done


# "Let $n_p$ be the number of Sylow $p$-subgroups of $G$", "Let p be its characteristic polynomial": a name
# given to an object the statement already has (a definite noun phrase, nothing new with an article
# after it), not a condition the problem must meet. "Let $A$ be the ring of integers of a number field $K$"
# stays a precondition: it brings in a number field.
_NOTATION = re.compile(r"^let\s+(?:" + _SYMBOLS + r")\s+(?:be|denote)\s+(?:the|its|their)\s"
                       r"(?!.*(?<![\w$\\-])(?:an?|some|any|every|each)\s)", re.I)
# a sentence that defines a word ("A Sylow $p$-subgroup is a subgroup of order $p^n$", "... is called ...")
_DEFINITION = re.compile(r"^(?:set|write|denote|define|put)\s"
                         r"|^an?\s+(?!(?:is|are)\b)(?!(?:" + _ITEM + r")\s+(?:is|are)\b)\S.*?\s(?:is|are)\s"
                         r"|(?<![\w-])(?:(?:is|are)\s+(?:called|said|defined|denoted)|we\s+(?:call|say|define|denote|write))"
                         r"(?![\w-])", re.I)
NOT_PRECONDITION_CUES = ("notation", "definition")  # kept apart from a statement's preconditions


def _strip_cue(text: str, cue: str) -> str:
    """Drop a leading cue word (and "that"), except where the clause reads badly without it."""
    if cue in _KEEP_CUE:
        return text
    m = _HYP_RE.match(text)
    if m and _norm_cue(m.group(1)) == cue:
        text = text[m.end():]
    return re.sub(r"^\s*(that)\b", "", text, flags=re.I).strip()


def _hypotheses(text: str, lead_cue: str, nested: bool) -> list[Precondition]:
    """Atomic preconditions of a hypothesis clause that may hold further cues (let.., such that..)."""
    mask = protected_mask(text)
    cues = [c for c in _cues(text, mask, _HYP_RE)
            if c[2] not in ("for all", "for every", "for any", "for each") or c[0] == 0]
    segments: list[tuple[str, str]] = []
    last, cue = 0, lead_cue
    for start, _end, c in cues:
        if start == 0:
            cue = c
            continue
        if c == "such that" and _EXISTENTIAL.search(text[last:start]):
            continue  # "there exists x ... such that P(x)": one claim, the binding must stay
        if c in ("when", "if", "where") and not re.search(r"[,;]\s*$", text[:start]) and c != "where":
            continue  # a mid-clause "if"/"when" without a comma belongs to its clause
        segments.append((cue, text[last:start]))
        last, cue = start, c
    segments.append((cue, text[last:]))
    out = []
    for c, seg in segments:
        seg = _strip_cue(seg.strip(), c)
        for piece in _split_conjuncts(seg, c):
            out.append(Precondition(text=piece, cue="notation" if _NOTATION.match(piece) else c, nested=nested))
    return out


def _sentences(text: str) -> list[str]:
    mask = protected_mask(text)
    out, last = [], 0
    for m in re.finditer(r"[.?!](?=\s|$)", text):
        i = m.start()
        if mask[i] or _ABBREV.search(text[last:i + 1]):
            continue
        nxt = text[m.end():].lstrip()
        if nxt and not (nxt[0].isupper() or nxt[0] in "$\\(" or text[i] in "?!"):
            continue
        out.append(text[last:m.end()])
        last = m.end()
    out.append(text[last:])
    return [s.strip() for s in out if s.strip()]


@dataclass
class _Split:
    """What a sentence (or a text) splits into. ``concluded``: a cue gave the conclusion ("Then ...",
    "If ..., then ...", even a bare "Then" before a list); ``cueless``: the sentence had no cue at all,
    its whole text stands as the conclusion."""

    pre: list[Precondition] = field(default_factory=list)
    concl: list[str] = field(default_factory=list)
    parts: list[ChecklistPart] = field(default_factory=list)
    concluded: bool = False
    cueless: bool = False

    def add(self, other: _Split) -> None:
        self.pre += other.pre
        self.concl += other.concl
        self.parts += other.parts
        self.concluded |= other.concluded


def _unwrap(text: str) -> str:
    """Strip brackets that enclose the whole text: "(if B then C)" -> "if B then C" (not "(a) or (b)")."""
    text = text.strip()
    while len(text) >= 2 and text[0] in "([" and text[-1] == {"(": ")", "[": "]"}[text[0]]:
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == text[0]
            depth -= ch == text[-1]
            if depth == 0 and k < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _conclusion(text: str, depth: int, goal: bool = False) -> _Split:
    """A conclusion, split again when it is itself conditional (its hypotheses become nested)."""
    text = tidy(text)
    inner = _unwrap(text)
    if depth < _MAX_DEPTH and inner:
        mask = protected_mask(inner)
        cues = _cues(inner, mask, _HYP_RE)
        mid_if = [c for c in cues if c[2] in ("if", "whenever", "provided", "provided that") and c[0] > 0]
        if (cues and cues[0][0] == 0 and cues[0][2] not in ("where",)) or mid_if:
            sub = _sentence(inner, depth + 1, nested=True)
            if sub.concl:
                return sub
    return _Split(concl=[text] if text else [])


def _sentence(s: str, depth: int = 0, nested: bool = False, problem: bool = False) -> _Split:
    """Split one sentence into hypotheses and conclusion."""
    s = s.strip().rstrip(".").strip()
    if not s:
        return _Split()
    mask = protected_mask(s)
    hyp = _cues(s, mask, _HYP_RE)
    con = _cues(s, mask, _CONCL_RE)
    if problem:
        goal = _cues(s, mask, _GOAL_RE)
        if (goal and goal[0][0] == 0) or s.endswith("?"):
            if goal and goal[0][0] == 0:
                rest = re.sub(r"^\s*that\b", "", s[goal[0][1]:], flags=re.I)
                sub = _conclusion(rest, depth + 1)
                if sub.concl and sub.pre:          # "Show that if $n$ is odd then ...": the if is given
                    return _Split(pre=sub.pre, concl=[tidy(s[:goal[0][1]] + " " + sub.concl[0])])
                read = subject_split(rest) if sub.concl else None
                if read is not None:               # "Show every group of order 15 is cyclic"
                    return _Split(pre=[read[0]], concl=[tidy(s[:goal[0][1]] + " " + read[1])])
            return _Split(concl=[tidy(s)])
    if con and con[0][0] == 0 and con[0][2] != "implies":       # "Then ...", "Hence ..."
        rest = re.sub(r"^\s*,?\s*(we have|one has)?\s*", "", s[con[0][1]:], flags=re.I)
        out = _conclusion(rest, depth)
        out.concluded = True
        return out
    if hyp and hyp[0][0] == 0:                                  # "Let ...", "If ...", "For all x, ..."
        cue = hyp[0][2]
        later = [c for c in con if c[0] > 0]
        if later:
            a, b, c = later[0]
            out = _Split(pre=_hypotheses(s[:a], cue, nested), concluded=True)
            out.add(_conclusion(s[b:], depth))
            return out
        if cue in ("if", "when", "whenever", "given", "for all", "for every", "for any", "for each",
                   "provided", "provided that"):
            commas = [m.start() for m in re.finditer(r",", s) if not mask[m.start()]]
            if commas:
                cut = commas[0] if cue.startswith("for") else commas[-1]
                tail = s[cut + 1:].strip()
                if not re.match(r"(and|or)\b", tail, re.I) and complete_clause(tail):
                    out = _Split(pre=_hypotheses(s[:cut], cue, nested), concluded=True)
                    out.add(_conclusion(tail, depth))
                    return out
        if problem or cue not in ("for all", "for every", "for any", "for each"):
            return _Split(pre=_hypotheses(s, cue, nested))
        return _Split(concl=[tidy(s)])
    implies = [c for c in con if c[2] == "implies"]
    if implies:                                                 # "A implies B"
        a, b, _ = implies[0]
        out = _Split(pre=_hypotheses(s[:a], "implies", nested), concluded=True)
        out.add(_conclusion(s[b:], depth))
        return out
    mid = [c for c in hyp if c[2] in ("if", "whenever", "when", "provided", "provided that")]
    if mid:                                                     # "C if A": conclusion first
        a = mid[0][0]
        out = _Split(pre=_hypotheses(s[a:], mid[0][2], nested), concluded=True)
        head = tidy(s[:a])
        if problem:
            return _Split(pre=[Precondition(text=head, cue="")] + out.pre) if head else out
        out.concl = [head] if head else []
        return out
    if problem:
        return _Split(pre=[Precondition(text=p, cue="") for p in _split_conjuncts(s, "")])
    return _Split(concl=[tidy(s)], cueless=True)


# In a problem, where a declarative part ends and the question or the task begins: "G is a group of order
# 15; does it have an element of order 5?", "If $G$ is abelian, is $G$ cyclic?", "..., prove that ...".
_ASKS = re.compile(r"[;:,]\s+(?=(?:does|do|is|are|can|could|must|will|would|should|has|have|was|were|"
                   r"how|what|which|why|who|whether)\b)", re.I)
_TASK = re.compile(r"[;:,]\s+(?=(?:then\s+)?(?:prove|show|find|determine|compute|calculate|evaluate|decide|"
                   r"verify|deduce|conclude|establish|disprove)\b)", re.I)


def _problem_clauses(s: str) -> list[str]:
    """A problem's sentence as (given part, question or task): cut at the first unprotected ";", ":" or ","
    that a question word opens (the sentence asks: it ends with "?") or a task verb (prove, show, find...)."""
    mask = protected_mask(s)
    asks = s.rstrip().endswith("?")
    for m in _TASK.finditer(s) if not asks else _ASKS.finditer(s):
        if not mask[m.start()] and s[:m.start()].strip():
            rest = re.sub(r"^then\s+", "", s[m.end():], flags=re.I)
            return [s[:m.start()], rest[:1].upper() + rest[1:]]
    return [s]


def _symbol_subject(text: str) -> bool:
    """Whether a sentence is a claim whose subject is a symbol ("$M$ is finite", "G has order 15")."""
    m = _HEAD.match(text.strip())
    return bool(m) and m.group(2).lower() not in ("it", "they")


def _reclassify(splits: list[_Split]) -> None:
    """A sentence with no cue between a hypothesis and the sentence a cue concludes is not the conclusion:
    a definition ("A Sylow $p$-subgroup is a subgroup of order $p^n$", "... is called ...", "Set $N = ...$")
    is set apart (cue ``definition``); a claim about a symbol ("Let $M$ be a module. $M$ is finite. Then
    ...") is a precondition with no cue. Other prose ("Note that ...") and anything before the first
    hypothesis ("We recall what a graph is.", a definition entry's opening) stay where they were."""
    seen_hypothesis = False
    for i, sp in enumerate(splits):
        if seen_hypothesis and sp.cueless and sp.concl and any(later.concluded for later in splits[i + 1:]):
            text = sp.concl[-1]
            if _DEFINITION.search(MATH_SPAN.sub("$x$", text)):
                sp.pre.append(Precondition(text=sp.concl.pop(), cue="definition"))
            elif _symbol_subject(text) or (MATH_SPAN.fullmatch(text.strip()) and complete_clause(text)):
                sp.pre.append(Precondition(text=sp.concl.pop(), cue=""))
        seen_hypothesis |= any(p.cue and p.cue not in NOT_PRECONDITION_CUES for p in sp.pre)


# ------------------------------------------------------------------------------ lists

_ENDS_HYP = re.compile(r"(?<![\w-])(assume|assuming|suppose|supposing|if|given|such\s+that|where|that|"
                       r"satisf(?:y|ies|ying)|with|conditions|hypotheses|assumptions|properties|let)"
                       r"(\s+that)?(\s+(the\s+)?following(\s+\w+)?)?(\s+(hold|holds|are\s+satisfied))?"
                       r"\s*[:,]?\s*$", re.I)
_ITEM = re.compile(r"\\item(?![A-Za-z])\s*(\[[^\]]*\])?")


def _find_list(text: str) -> tuple[str, str, list[tuple[str, str]], str] | None:
    """(prefix, list kind, [(label, item text)], suffix) for the first top-level list, else None."""
    mask = protected_mask(text)
    for m in re.finditer(r"\\begin\{(" + "|".join(_LIST_ENVS) + r")\}", text):
        if mask[m.start()]:
            continue
        end = _find_end_env(text, m.end(), m.group(1))
        if end < 0:
            return None
        inner = text[m.end():end - len("\\end{" + m.group(1) + "}")]
        inner_mask = protected_mask(inner, lists_protected=True)
        starts = [(im.start(), im.end(), im.group(1)) for im in _ITEM.finditer(inner) if not inner_mask[im.start()]]
        items = []
        for k, (_start, b, label) in enumerate(starts):
            stop = starts[k + 1][0] if k + 1 < len(starts) else len(inner)
            lab = label[1:-1].strip() if label else (str(k + 1) if m.group(1) == "enumerate" else "•")
            items.append((lab, inner[b:stop].strip()))
        return text[:m.start()], m.group(1), items, text[end:]
    return None


def _analyse(text: str, depth: int = 0, problem: bool = False) -> _Split:
    """Preconditions, conclusion pieces and parts of a statement (or of a problem)."""
    found = _find_list(text) if depth < _MAX_DEPTH else None
    if found is None:
        out = _Split()
        sentences = _sentences(text)
        if problem:
            sentences = [c for s in sentences for c in _problem_clauses(s)]
        splits = [_sentence(s, depth, problem=problem) for s in sentences]
        if not problem:
            _reclassify(splits)
        for sp in splits:
            out.add(sp)
        return out
    prefix, _kind, items, suffix = found
    out = _analyse(prefix, depth + 1, problem) if prefix.strip() else _Split()
    own_then = [_cues(t, protected_mask(t), _CONCL_RE) or (_HYP_RE.match(t) and _HYP_RE.match(t).group(1).lower() == "if")
                for _, t in items]
    suffix_concl = bool(re.match(r"\s*(then|hence|therefore|thus)\b", suffix, re.I))
    prefix_hyp = bool(_ENDS_HYP.search(prefix.strip())) and not (out.concl and not prefix.strip().endswith(":")
                                                                   and not _ENDS_HYP.search(prefix.strip()))
    if items and (prefix_hyp or (suffix_concl and not out.concl)) and not all(own_then):
        cue = (_ENDS_HYP.search(prefix.strip()).group(1).lower() if _ENDS_HYP.search(prefix.strip()) else "assume")
        if out.concl and prefix_hyp:  # "... such that:" ended inside a sentence taken as conclusion
            lead = out.concl.pop()
            out.pre += _hypotheses(lead, "", False) if complete_clause(lead) else []
        for _label, t in items:
            sub = _analyse(t, depth + 1) if _find_list(t) else None
            if sub is not None:
                out.pre += sub.pre + [Precondition(text=c, cue=cue) for c in sub.concl]
            else:
                out.pre += [Precondition(text=p, cue=cue) for p in _split_conjuncts(tidy(t), "")]
    elif items and all(own_then):
        for label, t in items:
            sub = _analyse(t, depth + 1)
            out.parts.append(ChecklistPart(label=label, preconditions=sub.pre[:MAX_ITEMS],
                                           conclusion=" ".join(sub.concl)))
        out.concl.append("; ".join(f"({p.label}) {p.conclusion}" for p in out.parts))
    else:
        pieces = "; ".join(f"({label}) {tidy(t)}" for label, t in items)
        if out.concl:
            out.concl[-1] = tidy(out.concl[-1]) + ": " + pieces
        else:
            out.concl.append(pieces)
    if suffix.strip():
        out.add(_analyse(suffix, depth + 1, problem))
    return out


# ------------------------------------------------------------------------------ the subject

SUBJECT_CUES = ("a", "an", "every", "each", "any", "all")  # the cue of a precondition read off the subject
_SUBJECT = re.compile(r"^(" + "|".join(SUBJECT_CUES) + r")\s+", re.I)
_MAIN_VERB = re.compile(r"(?<![\w\\-])(is|are|has|have|admits?|satisf(?:y|ies)|contains?|lies|lie|belongs?|"
                        r"converges?|embeds?|extends?|factors?|splits?|preserves?|commutes?|divides?|can|cannot|"
                        r"must)(?![\w-])", re.I)
_RELATIVE_PRONOUN = re.compile(r"(?<![\w-])(which|that|whose|who|whom)(?![\w-])", re.I)
_PREPOSITION = re.compile(r"(?<![\w-])(of|in|on|at|to|by|with|from|over|under|for|into|than|between)(?![\w-])", re.I)
_NOT_AN_IMPLICATION = re.compile(r"(?<![\w-])(if and only if|iff|precisely when|exactly when|(?:is|are) (?:called|"
                                 r"said|defined|denoted|known)|we (?:call|say|define|denote))(?![\w-])", re.I)


def _subject_parts(sentence: str) -> tuple[str, str, str, str] | None:
    """(determiner, subject, main verb, predicate) of a sentence read through its subject (see
    ``subject_split``), or None."""
    s = tidy(sentence)
    m = _SUBJECT.match(s)
    if not m or _NOT_AN_IMPLICATION.search(MATH_SPAN.sub(" ", s)):
        return None
    mask = protected_mask(s)
    verbs = [v for v in _MAIN_VERB.finditer(s) if not mask[v.start()]]
    for i, verb in enumerate(verbs):
        subject = s[m.end():verb.start()].strip()
        if sum(not mask[r.start()] for r in _RELATIVE_PRONOUN.finditer(subject, 0)) <= i:
            break
    else:
        return None
    predicate = s[verb.start():].strip()
    if not subject or not re.search(r"[A-Za-z]", MATH_SPAN.sub("", subject)) or len(predicate.split()) < 2:
        return None
    if re.match(r"of\b", subject, re.I):
        return None  # "each of the formulas ...": the subject is a list, not one object
    return m.group(1).lower(), subject, verb.group(1), predicate


def _named(subject: str) -> re.Match[str] | None:
    """"graded ring $S$": the symbol closing a subject names it (not "vectors over a field $F$")."""
    named = re.match(r"^(.*\S)\s+(\$[^$]+\$)$", subject)
    return None if named and _PREPOSITION.search(named.group(1)) else named


def subject_object(sentence: str) -> tuple[str, str] | None:
    """The object a sentence read through its subject speaks of, as (symbol or "", what it is):
    "every group of order 15 is cyclic" gives ("", "group of order 15"), "a finite group $G$ is
    solvable" ("G", "finite group")."""
    parts = _subject_parts(sentence)
    if parts is None:
        return None
    named = _named(parts[1])
    return (named.group(2)[1:-1].strip(), named.group(1)) if named else ("", parts[1])


def subject_split(sentence: str) -> tuple[Precondition, str] | None:
    """"A finite integral domain is a field": the subject's noun phrase is the hypothesis ("it is a
    finite integral domain"), the predicate the conclusion ("it is a field"). A symbol closing the
    subject names the object ("A graded ring $S$ is Noetherian": "$S$ is a graded ring", "$S$ is
    Noetherian"). Only for a sentence that opens with a/an/every/each/any/all, is not a
    characterisation or a definition ("iff", "is called"), and has its main verb outside math: the
    first verb not taken by a relative clause ("A flat morphism which is ... is pseudo-coherent")."""
    parts = _subject_parts(sentence)
    if parts is None:
        return None
    det, subject, verb, predicate = parts

    def article(noun: str) -> str:
        if det in ("a", "an"):
            return det
        return "an" if re.match(r"(?![Uu](?:ni|s[aeu]|ti))[AEIOUaeiouÉéÈè]", noun) else "a"
    plural = det == "all" or verb.lower() in ("are", "have", "lie", "satisfy", "contain", "admit", "belong")
    named = _named(subject)
    if named and not plural:
        what, who = named.group(1), named.group(2)
        return Precondition(text=f"{who} is {article(what)} {what}", cue=det), f"{who} {predicate}"
    if plural:
        return Precondition(text=f"they are {subject}", cue=det), f"they {predicate}"
    return Precondition(text=f"it is {article(subject)} {subject}", cue=det), f"it {predicate}"


# ------------------------------------------------------------------------------ entry points

@dataclass
class StatementSplit:
    """A statement split: its preconditions, conclusion and parts, and apart from them what it names or
    defines (``notations``: "Let $n_p$ be the number of Sylow $p$-subgroups of $G$", "A Sylow
    $p$-subgroup is a subgroup of order $p^n$"), which the problem need not provide."""

    preconditions: list[Precondition]
    conclusion: str
    parts: list[ChecklistPart]
    notations: list[str]


def analyse_statement(text: str, problem: bool = False) -> StatementSplit:
    """The splitter alone on a cleaned-or-raw statement (or, with ``problem``, a problem: its notations
    stay among its hypotheses, since the problem gives them). A statement of one sentence with no cue at
    all is read through its subject (``subject_split``)."""
    res = _analyse(clean_statement(text), problem=problem)
    notations: list[str] = []
    if not problem:
        notations = [p.text for p in res.pre if p.text and p.cue in NOT_PRECONDITION_CUES]
        res.pre = [p for p in res.pre if p.cue not in NOT_PRECONDITION_CUES]
        for part in res.parts:
            notations += [p.text for p in part.preconditions if p.cue in NOT_PRECONDITION_CUES]
            part.preconditions = [p for p in part.preconditions if p.cue not in NOT_PRECONDITION_CUES]
    pre = [p for p in res.pre if p.text][:MAX_ITEMS]
    conclusion = tidy(". ".join(tidy(c) for c in res.concl if c))
    if not problem and not pre and not res.parts and len(res.concl) == 1 and len(_sentences(conclusion)) == 1:
        read = subject_split(conclusion)
        if read is not None:
            pre, conclusion = [read[0]], tidy(read[1])
    return StatementSplit(pre, conclusion, res.parts[:MAX_ITEMS], notations[:MAX_ITEMS])


def split_statement(text: str, problem: bool = False) -> tuple[list[Precondition], str, list[ChecklistPart]]:
    """(preconditions, conclusion, parts) of ``analyse_statement``."""
    res = analyse_statement(text, problem)
    return res.preconditions, res.conclusion, res.parts


def split_problem(problem: str) -> tuple[list[str], str]:
    """A problem's own hypotheses (what it gives) and goal (what it asks), split like a statement."""
    pre, goal, parts = split_statement(problem, problem=True)
    hyps = [p.text for p in pre] + [q.text for part in parts for q in part.preconditions]
    return hyps, goal
