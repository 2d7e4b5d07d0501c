"""Character-level TeX scanning shared by the source readers: files, comments blanked in place, balanced groups,
environment ends, headings and the statement environments of a file.

Token-level work (macro expansion, LaTeX -> words, ``split_environments``, ``LineIndex``) lives in
``mathlas_build.latex``; this module only finds places in raw text, with offsets that stay valid.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple
from collections.abc import Callable, Iterable, Iterator

from mathlas_build.latex import LineIndex


def read_tex(path: Path) -> str:
    """A source file's text (UTF-8; undecodable bytes replaced)."""
    return Path(path).read_text(encoding="utf-8", errors="replace")


def blank_comments(tex: str) -> str:
    """Blank out ``%`` comments (not ``\\%``) with spaces, so offsets and line numbers stay right.
    (``latex.strip_comments`` removes them instead: shorter text, same lines.)"""
    return re.sub(r"(?<!\\)((?:\\\\)*)(%[^\n]*)", lambda m: m.group(1) + " " * len(m.group(2)), tex)


# ---------------------------------------------------------------- balanced groups

def group_end(text: str, pos: int, open_: str = "{", close: str = "}") -> int:
    """Index of the ``close`` matching an ``open_`` at ``text[pos-1]``, or -1 when it is never closed.
    ``\\x`` escapes are skipped; for a delimiter other than ``{`` braces inside it are balanced too
    (``[a{]}b]`` is one group)."""
    depth = 1
    brace = 0
    k = pos
    n = len(text)
    while k < n:
        c = text[k]
        if c == "\\":
            k += 2
            continue
        if c == "{" and open_ != "{":
            brace += 1
        elif c == "}" and open_ != "{":
            brace -= 1
        elif c == open_ and brace == 0:
            depth += 1
        elif c == close and brace == 0:
            depth -= 1
            if depth == 0:
                return k
        k += 1
    return -1


def braced(text: str, pos: int) -> tuple[str, int]:
    """``text[pos-1] == '{'``: the balanced content and the index after its ``}``; an unclosed group runs
    to the end of the text."""
    end = group_end(text, pos)
    if end < 0:
        return text[pos:], len(text)
    return text[pos:end], end + 1


def read_group(tex: str, i: int, open_: str = "{", close: str = "}", skip_ws: bool = True,
               allow_newline: bool = True) -> tuple[str, int] | None:
    """The balanced ``open_ ... close`` group starting at ``tex[i]`` (after optional whitespace):
    (content, index after the group), or None when there is none or it is never closed.
    With ``allow_newline=False`` a blank line (paragraph break) before the group means there is none."""
    j = i
    if skip_ws:
        while j < len(tex) and tex[j] in " \t\r\n":
            j += 1
        if not allow_newline and tex[i:j].count("\n") > 1:  # a blank line ends the search (\par)
            return None
    if j >= len(tex) or tex[j] != open_:
        return None
    end = group_end(tex, j + 1, open_, close)
    if end < 0:
        return None
    return tex[j + 1:end], end + 1


def find_env_end(tex: str, env: str, start: int) -> int:
    """Index of the ``\\end{env}`` closing the environment whose body starts at ``start`` (-1 if none);
    nested ``env`` environments are skipped."""
    begin, end = "\\begin{%s}" % env, "\\end{%s}" % env
    depth, i = 1, start
    while True:
        e = tex.find(end, i)
        if e < 0:
            return -1
        b = tex.find(begin, i)
        if 0 <= b < e:
            depth += 1
            i = b + len(begin)
            continue
        depth -= 1
        if depth == 0:
            return e
        i = e + len(end)


def label_tail_words(label: str) -> str:
    """``thm:orbit_stabilizer`` -> ``orbit stabilizer``: the label without its kind prefix, separators
    (``-_:.``) as spaces.  (``latex.label_words`` also drops Stacks-style ``lemma-`` prefixes and keeps dots.)"""
    words = label.split(":", 1)[1] if ":" in label else label
    return re.sub(r"[-_:.]+", " ", words).strip()


# ---------------------------------------------------------------- headings

def headings(text: str, pattern: re.Pattern | str, to_text: Callable[[str], str], *,
             strict: bool = False) -> list[tuple[int, str, str]]:
    """(offset, command, title words) of every match of ``pattern`` in ``text``.  The pattern ends just after
    the heading's opening ``{``; its group 1, when it has one, names the command.  The title is
    ``to_text`` of the braced content; an unclosed group runs to the end of the text, or with
    ``strict=True`` the heading is left out."""
    out = []
    for m in re.finditer(pattern, text):
        if strict:
            g = read_group(text, m.end() - 1, skip_ws=False)
            if g is None:
                continue
            content = g[0]
        else:
            content = braced(text, m.end())[0]
        out.append((m.start(), m.group(1) if m.re.groups else "", to_text(content)))
    return out


# ---------------------------------------------------------------- statement environments

def statement_files(folder: Path, env_re: re.Pattern, skip: Iterable[str] = ()) -> Iterator[tuple[Path, str]]:
    """(path relative to ``folder``, text with comments blanked) of every ``*.tex`` below ``folder``, sorted
    by path, that has a match of ``env_re``; ``skip``: relative paths (posix) left out."""
    skip = set(skip)
    for f in sorted(folder.rglob("*.tex")):
        rel = f.relative_to(folder)
        if rel.as_posix() in skip:
            continue
        tex = blank_comments(read_tex(f))
        if env_re.search(tex):
            yield rel, tex


class Statement(NamedTuple):
    n: int              # 1-based position among the closed environments of the file
    env: str            # environment name
    start: int          # offset of ``\begin{env}``
    line: int           # its 1-based line
    heading: str        # the ``[...]`` title right after ``\begin{env}`` ("" when none)
    inner: str          # text after the title up to ``\end{env}``
    labels: list[str]   # every ``label_re`` group 1 in ``inner``, in order
    body: str           # text after ``\begin{env}`` up to ``\end{env}``, trailing blanks of lines removed, stripped


def statements(tex: str, env_re: re.Pattern, label_re: re.Pattern, *, nested: bool) -> Iterator[Statement]:
    """The environments ``env_re`` finds (group 1 = the name), in order.  ``nested=True``: the matching
    ``\\end`` skips nested environments of the same name; ``nested=False``: the first ``\\end{env}`` closes it.
    Unclosed ones are left out (and not counted)."""
    lines = LineIndex(tex)
    n = 0
    for m in env_re.finditer(tex):
        env = m.group(1)
        end = find_env_end(tex, env, m.end()) if nested else tex.find("\\end{%s}" % env, m.end())
        if end < 0:
            continue
        n += 1
        i = m.end()
        heading = ""
        opt = read_group(tex, i, "[", "]", allow_newline=False)
        if opt:
            heading, i = opt
        inner = tex[i:end]
        yield Statement(n, env, m.start(), lines.line(m.start()), heading, inner, label_re.findall(inner),
                        re.sub(r"[ \t]+\n", "\n", tex[m.end():end]).strip())
