"""Stacks Project reader: lemma / proposition / theorem / corollary / definition environments of the chapter
``*.tex`` files, id ``stacks:<TAG>`` through ``tags/tags`` (``TAG,<file stem>-<label>``).

Statements whose label has no tag are skipped (counted in ``last_stats`` and reported on stderr).

Name (``statement_name``): the environment's ``[...]`` name, else the words of its ``\\label``
(``lemma-quasi-coherent-affine-cohomology-zero`` -> "quasi coherent affine cohomology zero"). A label word that
the statement (its slogan, its chapter > section), else its chapter, spells with accents is written so
(``etale`` -> "étale", ``cech`` -> "Čech", ``kahler`` -> "Kähler"; the statement's own spelling first), in
lower case where the chapter writes the word in lower case somewhere, with a capital where the label or
every one of the chapter's spellings has one. The label's words follow a ``[...]`` name in parentheses only
where they add words the name lacks and the name says nothing but who or what it is called: a person
("Kollár (injective pic)", "Gabber (sheaf fpqc)") or a name in capitals ("Key Lemma (secondary
ramification)"), which several statements share. They do not where the name already holds them or their
initials ("Riemann-Roch", not "Riemann-Roch (rr)"; "Nakayama's lemma", not "(NAK)"), nor after a name
that says what the statement is ("Prime avoidance", not "Prime avoidance (silly)"). The title is
chapter > section > subsection. The retrieval text (``mathlas_build.retrieval_text``) keeps the name as the
label spells it, ``extra["indexed_name"]`` ("Krull's intersection theorem (intersect powers ideal module
zero)", "etale", "cech always"): the label's words are search words a person types ("cech" as well as the
statement's "Čech"), and the name shown is for reading.
"""
from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from collections.abc import Iterator

from mathlas_build.display import DisplayAudit, display_tex
from mathlas_build.document import Document
from mathlas_build.latex import LineIndex, label_words, latex_to_text, parse_macros, split_environments, strip_comments
from mathlas_build.sources.texscan import braced, headings, read_tex

SOURCE = "stacks"
LICENSE = "GFDL-1.2"
ATTRIBUTION = ("The Stacks Project, by The Stacks project authors (https://stacks.math.columbia.edu), "
               "github stacks/stacks-project @ 4ac4815d5a00dc2eacab7824cf4e4baafe2773ac, GFDL 1.2")
COMMIT = "4ac4815d5a00dc2eacab7824cf4e4baafe2773ac"

ENVIRONMENTS = ("lemma", "proposition", "theorem", "corollary", "definition")
# Files that are not chapters (no statements with tags).
NON_CHAPTERS = {"preamble", "chapters", "fdl", "bibliography"}
# obsolete.tex keeps superseded statements (98 tagged ones, many duplicating live lemmas); the website marks
# them obsolete.  Left out unless read(..., include_obsolete=True).
OBSOLETE = "obsolete"

# stats of the last read() call: files, statements seen, indexed, skipped (no label / no tag)
last_stats: dict = {}

_LABEL_RE = re.compile(r"\A\s*\\label\s*\{([^}]*)\}")
_ANY_LABEL_RE = re.compile(r"\\label\s*\{([^}]*)\}")
_BLOCK_RE = re.compile(r"\\begin\{(slogan|reference|history)\}(.*?)\\end\{\1\}", re.S)
_TITLE_RE = re.compile(r"\\title\s*\{")
_SECTION_RE = re.compile(r"\\(section|subsection)\*?\s*\{")


_ACCENT_TEX = re.compile(r"""\\(?:['`^"~=.]|[vuHckr](?![A-Za-z]))|[^\x00-\x7f]""")   # a line that may spell accents
_LETTERS = re.compile(r"[^\W\d_]+")
_PARTICLES = frozenset({"and", "of", "the", "de", "des", "du", "la", "le", "van", "von", "den", "der", "et"})


def _fold(word: str) -> str:
    """``Čech`` -> ``cech``: lower case, accents off."""
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


def accented_spellings(*texts: str) -> dict[str, list[str]]:
    """Folded word -> the spellings with accents ``texts`` give it, the most used first (ties: lower case
    first): ``{"etale": ["étale", "Étale"]}``."""
    seen: Counter = Counter()
    for text in texts:
        seen.update(w for w in _LETTERS.findall(text or "") if not w.isascii())
    out: dict[str, list[str]] = {}
    for w, _ in sorted(seen.items(), key=lambda kv: (-kv[1], not kv[0][:1].islower(), kv[0])):
        out.setdefault(_fold(w), []).append(w)
    return out


def chapter_spellings(text: str, macros: dict) -> tuple[dict[str, list[str]], set[str]]:
    """A chapter's words with accents (``accented_spellings`` of its lines that spell accents, as words) and
    the folded ones among them it writes in lower case somewhere (``étale``, not ``Čech``)."""
    lines = "\n".join(line for line in text.splitlines() if _ACCENT_TEX.search(line))
    spellings = accented_spellings(latex_to_text(lines, macros)) if lines else {}
    return spellings, {key for key, found in spellings.items() if any(w[0].islower() for w in found)}


def with_accents(words: str, spellings: dict[str, list[str]], lower: set[str]) -> str:
    """``words`` (a label's, ASCII) with each word that ``spellings`` spells with accents written so: its
    first letter a capital where the label has one, else where the chapter never writes it in lower case
    (``cech`` -> "Čech", ``etale`` -> "étale")."""
    out = []
    for w in words.split(" "):
        found = spellings.get(w.lower()) if len(w) > 3 and w.isascii() and w.isalpha() else None   # not a -> à
        if found:
            s = found[0]
            if w[0].isupper():
                s = s[0].upper() + s[1:]
            elif w.lower() in lower:
                s = s[0].lower() + s[1:]
            w = s
        out.append(w)
    return " ".join(out)


def _initials(words: list[str]) -> set[str]:
    return {"".join(w[0] for w in words[i:j]) for i in range(len(words)) for j in range(i + 2, len(words) + 1)}


def label_adds(name: str, words: str) -> bool:
    """True when the label's ``words`` say something the ``name`` does not: a word that is not one of the
    name's (plural or not, accents off), nor the start of one (``NAK``: Nakayama's), nor the initials of
    some of them (``rr``: Riemann-Roch, ``cd``: cohomological dimension)."""
    named = [w.removesuffix("'s").removesuffix("\u2019s") for w in re.findall(r"[^\W_]+(?:['\u2019]s)?", _fold(name))]
    have = set(named) | {w.rstrip("s") for w in named}
    initials = _initials(named)
    for w in re.findall(r"[^\W_]+", _fold(words)):
        if w in have or w.rstrip("s") in have:
            continue
        if len(w) >= 2 and (w in initials or any(n.startswith(w) for n in named)):
            continue
        return True
    return False


def says_what(name: str) -> bool:
    """True when a ``[...]`` name says what the statement is: it has a word in lower case ("Prime
    avoidance", "Finite type version of Theorem"), not only a person or a name in capitals ("Kollár",
    "Key Lemma", "Zariski's Main Theorem")."""
    return any(w[0].islower() and len(w) >= 3 and w not in _PARTICLES for w in _LETTERS.findall(name))


def statement_name(optional: str, label: str, spellings: dict[str, list[str]], lower: set[str]) -> str:
    """The name of a statement from its ``[...]`` name (as words, "" when none) and its ``\\label``
    (``lemma-silly``): see the module docstring."""
    words = with_accents(label_words(label), spellings, lower)
    if not optional:
        return words
    if not words or optional.lower() == words.lower() or not label_adds(optional, words) or says_what(optional):
        return optional
    return f"{optional} ({words})"


def read_tags(root: Path) -> dict[str, str]:
    """full label -> tag, from ``tags/tags``."""
    tags: dict[str, str] = {}
    with open(Path(root) / "tags" / "tags", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#") or "," not in line:
                continue
            tag, label = line.split(",", 1)
            tags.setdefault(label.strip(), tag.strip())
    return tags


def chapter_files(root: Path, include_obsolete: bool = False) -> list[Path]:
    skip = NON_CHAPTERS if include_obsolete else NON_CHAPTERS | {OBSOLETE}
    return sorted(p for p in Path(root).glob("*.tex") if p.stem not in skip)


def read(root: Path, *, files: list[str] | None = None, include_obsolete: bool = False, verbose: bool = True,
         **options) -> Iterator[Document]:
    """Yield one Document per tagged statement.  ``files``: optional chapter stems to restrict to;
    ``include_obsolete``: also index ``obsolete.tex``."""
    root = Path(root)
    macros = parse_macros(read_tex(root / "preamble.tex"))
    audit = DisplayAudit(SOURCE, macros)
    tags = read_tags(root)
    stats = {"files": 0, "statements": 0, "indexed": 0, "no_label": 0, "no_tag": 0, "untagged": []}
    last_stats.clear()
    last_stats.update(stats)
    paths = chapter_files(root, include_obsolete or (files is not None and OBSOLETE in files))
    if files is not None:
        wanted = {Path(f).stem for f in files}
        paths = [p for p in paths if p.stem in wanted]
    for path in paths:
        text = strip_comments(read_tex(path))
        stem = path.stem
        file_macros = macros
        head = text.split("\\begin{document}", 1)[0] if "\\begin{document}" in text else ""
        if head and ("\\newcommand" in head or "\\def" in head):
            file_macros = {**macros, **parse_macros(head)}
        # chapter title, section and subsection positions (by line)
        lines = LineIndex(text)
        m = _TITLE_RE.search(text)
        chapter = latex_to_text(braced(text, m.end())[0], file_macros) if m else stem
        spelled, lower = chapter_spellings(text, file_macros)
        heads = [(lines.line(off), level, title)  # (line, level, title)
                 for off, level, title in headings(text, _SECTION_RE, lambda t: latex_to_text(t, file_macros))]
        head_lines = [h[0] for h in heads]
        envs = split_environments(text, ENVIRONMENTS, comments_stripped=True)
        if envs:
            stats["files"] += 1
        for env in envs:
            stats["statements"] += 1
            lm = _LABEL_RE.match(env.content) or _ANY_LABEL_RE.search(env.content[:400])
            if not lm:
                stats["no_label"] += 1
                continue
            label = lm.group(1).strip()
            full = f"{stem}-{label}"
            tag = tags.get(full)
            if tag is None:
                stats["no_tag"] += 1
                stats["untagged"].append(full)
                continue
            content = env.content[:lm.start()] + env.content[lm.end():]
            slogans = []

            def _drop(bm: re.Match) -> str:
                if bm.group(1) == "slogan":
                    slogans.append(bm.group(2))
                return "\n"

            body = _BLOCK_RE.sub(_drop, content).strip()
            body = re.sub(r"\n\s*\n+", "\n\n", body)
            slogan = " ".join(latex_to_text(s, file_macros) for s in slogans).strip()
            # title: chapter > section > subsection in force at this line
            k = bisect.bisect_right(head_lines, env.start_line) - 1
            section = subsection = ""
            while k >= 0:
                _, level, t = heads[k]
                if level == "subsection" and not section and not subsection:
                    subsection = t
                elif level == "section":
                    section = t
                    break
                k -= 1
            title = " > ".join(x for x in (chapter, section, subsection) if x)
            statement = latex_to_text(body, file_macros)
            opt = latex_to_text(env.optional_arg, file_macros) if env.optional_arg else ""
            spellings = {**spelled, **accented_spellings(statement, slogan, title, opt)}
            name = statement_name(opt, label, spellings, lower)
            extra = {"label": full, "tag": tag, "chapter": chapter}
            words = label_words(label)
            indexed = f"{opt} ({words})" if opt and words and opt.lower() != words.lower() else opt or words
            if indexed != name:
                extra["indexed_name"] = indexed    # the retrieval text keeps the label's own words (below)
            stats["indexed"] += 1
            yield Document(
                id=f"stacks:{tag}",
                source=SOURCE,
                kind=env.name,
                name=name,
                title=title,
                body=audit.checked(display_tex(body, file_macros)),
                statement=statement,
                link=f"https://stacks.math.columbia.edu/tag/{tag}",
                license=LICENSE,
                slogan=slogan,
                keywords=[],
                file=path.name,
                line=env.start_line,
                extra=extra,
            )
        last_stats.update(stats)
    last_stats.update(stats)
    audit.report()
    if verbose and (stats["no_tag"] or stats["no_label"]):
        print(f"stacks: indexed {stats['indexed']} of {stats['statements']} statements; "
              f"skipped {stats['no_tag']} without a tag, {stats['no_label']} without a label",
              file=sys.stderr)
