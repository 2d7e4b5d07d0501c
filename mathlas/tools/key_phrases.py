"""A problem's key phrases for a literature search: its mathematical noun phrases, whole.

No model and no bundle: a small, deterministic rule set over the words outside math.

- A phrase is a run of words between boundaries: punctuation, math, digits, stop words
  (determiners, prepositions, question words: ``STOP``) and verbs (``VERBS``). "finitely generated
  flat module over a local ring" gives "finitely generated flat module" and "local ring".
- An adverb ("finitely", "locally", "simply", "uniformly": a word in -ly that is not a noun such as
  "family") is kept with the word after it ("finitely generated", "locally compact", "infinitely
  many"); an adverb with nothing after it in its run is dropped, never a term on its own. A few
  two-word modifiers are one unit too (``COMPOUND_MODIFIERS``: "path connected", "order isomorphic").
- A noun phrase ends with its noun, so trailing adjectives (``ADJECTIVES``, words in -able/-ible/-ous/-ive,
  an adverb with its word) are the predicate of an inverted question and split off: "is every
  ... local ring free?" gives "local ring" and "free", not "local ring free".
- Math or a number written as a prefix of a word ("$R$-module", "3-manifold") is dropped, not a boundary:
  "finitely generated $R$-module" gives "finitely generated module".
- A phrase keeps at most ``MAX_PHRASE_WORDS`` words, its last ones (an adverb and its word as one).
"""
from __future__ import annotations

import re

from mathlas.tools.latex_split import MATH_SPAN

MAX_PHRASE_WORDS = 5

# words of statements and problems that carry no content: determiners, connectives, quantifiers, the
# verbs of a task (prove, show, find), enumerators
STOP_WORDS = frozenset("""a an the of and or to in on for with by at from as is are be been being let suppose
assume if then where such that this these those it its any all every each some there exists exist
given prove show find determine compute whether which what when whenever hence therefore thus
implies we us our one has have not no into over under than also both either neither only so
does do can must may might will would should shall let's i.e e.g resp i ii iii iv v""".split())

# a phrase's boundaries: the words above, and question, quantity, number and filler words ("how", "many",
# "two", "example"). mapping_scaffold's word overlap (mathlas.tools.scaffold) skips STOP_WORDS alone: a
# precondition and a hypothesis that share "two" ("of order two") still share a word
STOP = STOP_WORDS | frozenset("""how why who whom whose many much more most less least other another same such
very always never often sometimes usually still already again just true false possible impossible known
unknown example examples two three four five six seven eight nine ten here there way case cases""".split())

# verbs of problems ("does ... admit", "... converges"): a boundary, never in a phrase. Words that are
# also nouns of mathematics (map, maps, sum, factor, lie as in "Lie group") are left out
VERBS = frozenset("""am was were exists admit admits contain contains containing satisfy satisfies
satisfying converge converges converging diverge diverges vanish vanishes vanishing equal equals
imply hold holds holding follow follows prove proves proved show shows shown find finds compute
computes determine determines give gives given lies lying act acts acting generate generates
divide divides define defines defined denote denotes denoted belong belongs extend extends embed
embeds commute commutes preserve preserves induce induces induced tend tends grow grows increase
increases decrease decreases attain attains achieve achieves become becomes remain remains seem
seems depend depends want need needs consider take say call called use using get gets obtain
obtains know make makes let suppose assume assuming related relate relates mean means fail fails""".split())

# adjectives that end a predicate ("is every compact Hausdorff space normal?"); nouns that are also
# adjectives ("prime", "zero", "real", "integral", "ideal") are left out: as the last word they are nouns
ADJECTIVES = frozenset("""free flat compact finite infinite abelian noetherian artinian normal projective
injective surjective bijective connected complete separable bounded continuous measurable integrable
solvable nilpotent simple semisimple cyclic trivial nontrivial nonzero dense closed open smooth proper
reduced regular hausdorff countable uncountable irreducible reducible positive negative nonnegative
rational irrational algebraic transcendental convergent divergent invertible unique isomorphic
homeomorphic diffeomorphic orientable contractible even odd faithful exact unitary symmetric hermitian
orthogonal diagonalizable periodic analytic holomorphic differentiable nonempty empty stable decidable
undecidable torsion-free square-free finite-dimensional infinite-dimensional well-defined
reflexive metrizable paracompact discrete perfect local global commutative""".split())
_ADJ_SUFFIX = re.compile(r"(?:able|ible|ous|ive)$")
NOT_ADJECTIVES = frozenset("derivative primitive objective alternative directive representative narrative "
                           "imperative initiative executive".split())

# two-word modifiers that are no adverb and its word ("path connected", "order isomorphic"): one unit
COMPOUND_MODIFIERS = frozenset({
    ("path", "connected"), ("arc", "connected"), ("order", "isomorphic"), ("order", "preserving"),
    ("first", "countable"), ("second", "countable"), ("torsion", "free"), ("finite", "dimensional"),
    ("infinite", "dimensional"), ("well", "defined"), ("well", "ordered"), ("well", "posed")})

# words in -ly that are not adverbs
NOT_ADVERBS = frozenset("family assembly anomaly italy reply apply supply multiply comply rely poly "
                        "monopoly butterfly only early holy ally fly ply".split())

_TOKEN = re.compile(
    r"(?P<prefix>(?:" + MATH_SPAN.pattern + r"|(?<!\d)\d++)-(?=[^\W\d_]))"   # "$R$-module", "3-manifold": a word's prefix
    r"|(?P<math>" + MATH_SPAN.pattern + r"|\\[A-Za-z]+)"
    r"|(?P<word>[^\W\d_](?:[\w'’-]*[^\W\d_])?(?:['’]s?)?)"
    r"|(?P<space>\s+)"
    r"|(?P<other>.)", re.S)


def is_adverb(word: str) -> bool:
    """An adverb in -ly ("finitely", "locally"), not a noun or verb that ends so ("family", "apply")."""
    return len(word) > 4 and word.endswith("ly") and word not in NOT_ADVERBS


def is_adjective(word: str) -> bool:
    """A word that can end a predicate ("free", "separable", "torsion-free")."""
    return word in ADJECTIVES or (len(word) > 5 and bool(_ADJ_SUFFIX.search(word)) and "-" not in word
                                  and word not in NOT_ADJECTIVES)


def _runs(text: str) -> list[list[str]]:
    """Lower-case words between boundaries (punctuation, math, digits, stop words, verbs)."""
    runs: list[list[str]] = [[]]
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("prefix", "space"):
            continue
        word = m.group(0).lower().replace("’", "'") if kind == "word" else ""
        if word == "many" and runs[-1] and is_adverb(runs[-1][-1]):
            runs[-1].append(word)  # "infinitely many", "finitely many": a quantifier with its adverb
            continue
        if kind != "word" or word in STOP or word in VERBS or len(word) < 3:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(word)
    return [r for r in runs if r]


def _units(run: list[str]) -> list[tuple[str, ...]]:
    """A run as units: an adverb with the word after it ("finitely generated") is one unit; an adverb
    with nothing after it is dropped."""
    out: list[tuple[str, ...]] = []
    i = 0
    while i < len(run):
        if tuple(run[i:i + 2]) in COMPOUND_MODIFIERS:
            out.append((run[i], run[i + 1]))
            i += 2
            continue
        if is_adverb(run[i]):
            if tuple(run[i + 1:i + 3]) in COMPOUND_MODIFIERS:   # "locally path connected"
                out.append(tuple(run[i:i + 3]))
                i += 3
                continue
            if i + 1 < len(run) and not is_adverb(run[i + 1]):
                out.append((run[i], run[i + 1]))
                i += 2
                continue
            i += 1  # a lone adverb (or one of two in a row): no term of its own
            continue
        out.append((run[i],))
        i += 1
    return out


def _is_modifier(unit: tuple[str, ...]) -> bool:
    return len(unit) > 1 or is_adjective(unit[0])


def noun_phrases(text: str) -> tuple[list[str], list[str]]:
    """(phrases of two or more words, single content words), each in the order of the text, once."""
    phrases: list[str] = []
    singles: list[str] = []

    def add(units: list[tuple[str, ...]]) -> None:
        while sum(len(u) for u in units) > MAX_PHRASE_WORDS and len(units) > 1:
            units = units[1:]
        ws = [w for u in units for w in u]
        if len(ws) >= 2:
            if " ".join(ws) not in phrases:
                phrases.append(" ".join(ws))
        for u in units:
            single = re.sub(r"'s?$", "", u[0])  # "nakayama's" -> "nakayama"
            if len(u) == 1 and single not in singles:
                singles.append(single)

    for run in _runs(text):
        units = _units(run)
        # a noun phrase ends with its noun: trailing modifiers after a noun are a predicate
        end = len(units)
        while end > 1 and _is_modifier(units[end - 1]) and any(not _is_modifier(u) for u in units[:end - 1]):
            end -= 1
        if units[:end]:
            add(units[:end])
        for u in units[end:]:
            add([u])
    return phrases, singles


def key_phrases(text: str, limit: int = 12) -> list[str]:
    """A problem's key terms: its noun phrases first, then its content words, at most ``limit``."""
    phrases, singles = noun_phrases(text)
    return (phrases + [w for w in singles if w not in phrases])[:limit]
