"""Stacks Project reader: lemma / proposition / theorem / corollary / definition environments of the chapter
``*.tex`` files, id ``stacks:<TAG>`` through ``tags/tags`` (``TAG,<file stem>-<label>``).

Statements whose label has no tag are skipped (counted in ``last_stats`` and reported on stderr).
"""
from __future__ import annotations

import bisect
import re
import sys
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
            words = label_words(label)
            opt = latex_to_text(env.optional_arg, file_macros) if env.optional_arg else ""
            if opt and words and opt.lower() != words.lower():
                name = f"{opt} ({words})"
            else:
                name = opt or words
            stats["indexed"] += 1
            yield Document(
                id=f"stacks:{tag}",
                source=SOURCE,
                kind=env.name,
                name=name,
                title=title,
                body=audit.checked(display_tex(body, file_macros)),
                statement=latex_to_text(body, file_macros),
                link=f"https://stacks.math.columbia.edu/tag/{tag}",
                license=LICENSE,
                slogan=slogan,
                keywords=[],
                file=path.name,
                line=env.start_line,
                extra={"label": full, "tag": tag, "chapter": chapter},
            )
        last_stats.update(stats)
    last_stats.update(stats)
    audit.report()
    if verbose and (stats["no_tag"] or stats["no_label"]):
        print(f"stacks: indexed {stats['indexed']} of {stats['statements']} statements; "
              f"skipped {stats['no_tag']} without a tag, {stats['no_label']} without a label",
              file=sys.stderr)
