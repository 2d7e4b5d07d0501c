"""Lean 4 source reader (``shared/corpora/mathlib4``, ``shared/corpora/lean4-batteries``, any Lean project).

Reads ``.lean`` files as text, without a Lean toolchain. One Document per ``theorem``, ``lemma``, ``def``,
``structure``, ``class``, ``instance``, ``inductive``, ``abbrev`` (plus ``opaque``, ``axiom``, ``alias`` and
``irreducible_def``, which declares a ``def``):

* id ``lean:<Fully.Qualified.Name>``: enclosing ``namespace`` blocks + declared name (``section``/``end``
  tracked per name component, so ``end B`` after ``namespace A.B`` leaves ``A`` open; ``_root_.``
  stripped; ``private``/``protected`` kept as modifiers in ``extra``);
* kind = the keyword (``lemma`` -> ``lemma``); name = the declaration name split into words;
  title = the module (``Mathlib.Algebra.Group.Basic``); body = the declaration header (attributes,
  modifiers, keyword, name, binders and type, without the proof); statement = docstring + name words +
  signature;
* ``extra``: ``full_name``, ``module``, ``signature`` (the section ``variable``s Lean gives the declaration,
  lean_variables, then its own binders and type; ``variables`` keeps the first part, which the texts
  searched leave out: retrieval_text.own_signature), ``docstring``, ``attributes`` (comma-joined,
  ``attribute [..] x`` commands' included),
  ``modifiers``, ``stacks`` / ``kerodon`` tags from ``@[stacks TAG]``, ``derived_name`` (True for an
  anonymous ``instance`` whose name was derived here the way Lean does it, ``inst`` + head constants —
  Lean's real name may differ), ``dependencies`` (see below), ``command`` (``irreducible_def``);
* link and license per source tree, as that tree (``tree_origin``): a Mathlib / Batteries copy with a
  ``SOURCE.md`` (the corpora) links to upstream at the commit it names; a package under
  ``.lake/packages`` to the ``url`` / ``rev`` of its ``lake-manifest.json`` entry; any other tree to its
  git ``origin`` (GitHub / GitLab) at ``HEAD``, else no link; the licence from the tree's
  LICENSE/COPYING file (SPDX), else "unknown" (Mathlib / Batteries: Apache-2.0). Options ``repo_url``,
  ``commit`` and ``license`` override them for the root.

``extra["dependencies"]``: sorted full names **without** the ``lean:`` prefix (the id is ``"lean:" + name``)
of the emitted declarations this one refers to in its signature and its body (from the end of the name
to the next command at column 0), never itself. Resolution follows Lean's rules for namespaces,
``open`` (scoped to its section/namespace), ``open .. in``, ``export`` and ``_root_`` (lean_refs).
``read`` therefore parses every file first, keeps per declaration only its identifier tokens and its
namespace/open context, then resolves against the set of all emitted names, generated ones included.
Dot notation on local values (``h.two_le``) is not resolved: it needs types (no guessing heuristic).

Generated declarations (``extra["generated"]``, ``extra["generated_from"]`` = the full name they come from;
they carry ``dependencies`` too):

* ``to_additive``: ``@[to_additive]`` translations (explicit name when the attribute gives one, else a
  word rule ``mul`` -> ``add``...); dependencies are the original's, each through Lean's translation
  dictionary (lean_twins: translated declarations, their fields and constructors, simps lemmas:
  ``add_comm`` uses ``AddCommMagma.add_comm``, not ``CommMagma.mul_comm``); the same for the fields of a
  generated additive structure;
  the signature translated as ``to_additive`` translates the statement (``lean_additive``: ``a * b`` ->
  ``a + b``, ``x⁻¹`` -> ``-x``, ``a ^ n`` -> ``n • a``), the docstring the attribute's own when it gives one.
* ``field`` (kind ``field``): each field of a ``structure``/``class`` ``S`` as ``S.field``, signature
  ``(self : S params) binders : type`` (``[self : C params]`` for a class), the field's docstring; each
  ``extends`` parent ``P`` as the projection ``S.toP`` (``extra["parent"]``). Fields of a
  ``@[to_additive]`` structure are emitted under the additive structure too.
* ``constructor`` (kind ``constructor``): ``S.mk`` (or the ``name ::`` written in the ``where`` block),
  ``extra["name_written"]`` False for the default ``mk``; its signature lists every parent as one binder
  (Lean flattens a parent whose fields overlap an earlier one's — not modelled); each ``| c ..`` of an
  ``inductive`` ``I`` as ``I.c`` with its written signature.
* ``simps`` (kind ``theorem``, ``extra["projection"]``): ``@[simps]`` lemmas ``<decl>_<projection>``
  (``<projection>_<decl>`` for an ``as_prefix`` one), see lean_generated.simps_names for what is and is
  not determinable.
* ``irreducible_def``: the ``<name>_def`` equation lemma.
* ``ext``, ``ext_iff``, ``reassoc``, ``elementwise``, ``to_app``, ``to_fun``, ``mk_iff``: the lemmas those
  attributes make (lean_generated.attribute_lemmas; names and docstrings, no statement), written
  ``@[..]`` or in an ``attribute [..] x`` command, also on a generated ``x`` (a field).

Declared names win over generated ones on a clash; the first of two equal names wins.

Options: ``dirs`` (top-level folders to read; default: ``Mathlib``/``Archive``/``Counterexamples``/
``Batteries`` where present, else every top folder holding ``.lean`` files), ``commit``, ``repo_url``, ``license``,
``to_additive`` (default True), ``files`` (explicit list of relative paths, for tests), ``workers``
(processes parsing files in parallel, default 1: on this 2-core shared machine a pool of 2 was slower
than one process; it pays off where cores are idle), ``extra_roots`` (more source trees read in the same
pass with one name table, e.g. a project's ``.lake/packages/*`` or Batteries beside Mathlib; paths
relative to the root; their links and licences are their own, see above).
"""
from __future__ import annotations

import bisect
import itertools
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator


from mathlas_build.document import Document
from mathlas_build.sources import lean_aliases as la
from mathlas_build.sources import lean_generated as gen
from mathlas_build.sources import lean_refs as lref
from mathlas_build.sources import lean_twins as lt
from mathlas_build.sources import lean_variables as lvar
from mathlas_build.sources.lean_additive import (
    Notation,
    additive_docstring,
    additive_notation,
    additive_statement,
    scan_notation_atoms,
)
from mathlas_build.sources.lean_generated import additive_name, to_additive_target  # noqa: F401 (re-exported)

SOURCE = "lean"
LICENSE = "Apache-2.0"
ATTRIBUTION = ("Mathlib4 (leanprover-community/mathlib4 @ 8f9d9cff) and Lean 4 Batteries "
               "(leanprover-community/batteries @ 495c008c), The Mathlib Community, Apache-2.0")

DECL_KINDS = ("theorem", "lemma", "def", "structure", "class", "instance", "inductive", "abbrev",
              "opaque", "axiom", "alias")
MODIFIERS = ("private", "protected", "noncomputable", "partial", "unsafe", "nonrec", "public", "meta")
DEFAULT_DIRS = ("Mathlib", "Archive", "Counterexamples", "Batteries")
SKIP_DIRS = {".lake", "test", "tests", "scripts", ".git", "build", "docs"}

_LEX = re.compile(r"""--|/-|"|(?<![\w'.!?])'(?:\\.|[^'\\\n])'""")
_BLOCK = re.compile(r"/-|-/")
_STR_END = re.compile(r'\\.|"', re.S)
_NONSPACE = re.compile(r"\S")
_IDENT = re.compile(r"(?:«[^»]*»|[^\s:()\[\]{}⦃⦄⟨⟩,:=|@`\"])+")
_WORD = re.compile(r"[A-Za-z][a-z]*|[A-Z]+(?![a-z])|\d+|[^\W\d_]+")
_TAG = re.compile(r"(stacks|kerodon)\s+(\S+)")
_COMMIT = re.compile(r"\b[0-9a-f]{40}\b")


def mask(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Blank out comments, strings and char literals (same length, newlines kept).

    Returns the masked text and the docstrings ``(start, end, text)`` found (``/-- ... -/``)."""
    out: list[str] = []
    docs: list[tuple[int, int, str]] = []
    pos = 0
    n = len(text)

    def blank(a: int, b: int) -> str:
        chunk = text[a:b]
        return "\n" * chunk.count("\n") if chunk.count("\n") == len(chunk) else re.sub(r"[^\n]", " ", chunk)

    while pos < n:
        m = _LEX.search(text, pos)
        if not m:
            out.append(text[pos:])
            break
        a = m.start()
        out.append(text[pos:a])
        tok = m.group()
        if tok == "--":
            e = text.find("\n", a)
            e = n if e < 0 else e
        elif tok == "/-":
            depth, e = 1, a + 2
            while depth:
                b = _BLOCK.search(text, e)
                if not b:
                    e = n
                    break
                depth += 1 if b.group() == "/-" else -1
                e = b.end()
            if text.startswith("/--", a) and not text.startswith("/--/", a):
                docs.append((a, e, text[a + 3:e - 2].strip()))
        elif tok == '"':
            e = a + 1
            while True:
                b = _STR_END.search(text, e)
                if not b:
                    e = n
                    break
                e = b.end()
                if b.group() == '"':
                    break
            out.append('"' + blank(a + 1, e - 1) + ('"' if e - a >= 2 else ""))
            pos = e
            continue
        else:  # char literal
            e = m.end()
        out.append(blank(a, e))
        pos = e
    return "".join(out), docs


_OPEN = {"(": ")", "[": "]", "{": "}", "⦃": "⦄", "⟨": "⟩", "⟪": "⟫", "⦋": "⦌"}
_CLOSE = set(_OPEN.values())


def _match_bracket(s: str, i: int) -> int:
    """Index just past the bracket group opening at ``s[i]`` (tolerant of unbalanced input)."""
    depth = 0
    for j in range(i, len(s)):
        c = s[j]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth <= 0:
                return j + 1
    return len(s)


_SIG_STOP = re.compile(r":=|\bwhere\b|\n[ \t]*\|\s|\n(?=\S)(?![|)\]}]|where\b|deriving\b|extends\b)|\bderiving\b"
                       r"|[()\[\]{}⦃⦄⟨⟩⟪⟫⦋⦌]")


def signature_end(s: str, i: int) -> int:
    """End of a declaration header starting at ``s[i]``: the first top-level ``:=``, ``where``, a match
    arm ``|`` at a line start, ``deriving``, or the next command at column 0."""
    depth = 0
    pos = i
    while True:
        m = _SIG_STOP.search(s, pos)
        if not m:
            return len(s)
        g = m.group()
        if g in _OPEN:
            depth += 1
        elif g in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 or g.startswith("\n") and not g.strip():
            return m.start()
        pos = m.end()


def split_words(name: str) -> str:
    """``Nat.Prime.two_le`` -> ``Nat Prime two le``; ``mul_inv_cancel₀`` -> ``mul inv cancel``."""
    parts = re.split(r"[._'«»\s]+", name)
    words: list[str] = []
    for p in parts:
        words.extend(_WORD.findall(p) or ([p] if p else []))
    return " ".join(w for w in words if w)


def _module(rel: str) -> str:
    return rel[:-5].replace("/", ".") if rel.endswith(".lean") else rel.replace("/", ".")


def _parse_attrs(attr_text: str, masked: str | None = None) -> list[str]:
    """``simp, to_additive (attr := simp) foo`` -> ``["simp", "to_additive (attr := simp) foo"]``.

    Commas are looked for in ``masked`` (same text with comments and strings blanked) when given, so a
    docstring inside ``to_additive /-- a, b -/`` does not split the attribute; comments are dropped, but
    that docstring is kept (``lean_additive.additive_docstring`` reads it)."""
    masked = attr_text if masked is None else masked
    out, depth, last = [], 0, 0
    for j, c in enumerate(masked):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == "," and depth == 0:
            out.append(attr_text[last:j])
            last = j + 1
    out.append(attr_text[last:])
    return [c for c in map(_clean_attr, out) if c]


def _clean_attr(a: str) -> str:
    """Comments dropped, except the docstring ``to_additive /-- ... -/`` gives the translation."""
    keep = r"/-(?!-).*?(?:-/|$)" if re.match(r"\s*to_additive\b", a) else r"/-.*?(?:-/|$)"
    return " ".join(re.sub(r"(?<!/)--[^\n]*", " ", re.sub(keep, " ", a, flags=re.S)).split())


def _derived_instance_name(sig: str) -> str:
    """``[Foo α] : Bar (List α)`` -> ``instBarList`` (head constants of the class, as Lean roughly does)."""
    depth, colon = 0, -1
    for j, c in enumerate(sig):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == ":" and depth == 0 and colon < 0:
            colon = j
    typ = sig[colon + 1:] if colon >= 0 else sig
    typ = typ.split("→")[-1] if "→" in typ and "∀" not in typ else typ
    heads = re.findall(r"(?<![\w.'])([A-Z][\w'.]*)", typ)
    parts = []
    for h in heads:
        last = h.rstrip(".").split(".")[-1]
        if last and last not in parts:
            parts.append(re.sub(r"[^\w]", "", last))
    return "inst" + "".join(parts[:4]) if parts else "inst"


def _commit_and_url(root: Path) -> tuple[str, str]:
    """Mathlib / Batteries copies (the corpora's): the commit their ``SOURCE.md`` names and the upstream
    repository ("" and "" for a tree that is neither)."""
    if (root / "Batteries").is_dir() and not (root / "Mathlib").is_dir():
        url = "https://github.com/leanprover-community/batteries"
    elif (root / "Mathlib").is_dir():
        url = "https://github.com/leanprover-community/mathlib4"
    else:
        return "", ""
    commit = ""
    src = root / "SOURCE.md"
    if src.is_file():
        m = _COMMIT.search(src.read_text(encoding="utf-8", errors="replace"))
        if m:
            commit = m.group()
    return commit, url


_GIT_URL = re.compile(r"^(?:[\w.+-]+://)?(?:[^@/\s]+@)?(github\.com|gitlab\.com)[:/]+([^/\s]+)/([^/\s]+?)(?:\.git)?/*$")
_LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "LICENCE.md", "COPYING", "COPYING.md",
                  "COPYING.txt", "LICENSE-APACHE", "LICENSE-MIT")
_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([\w.+-]+(?:\s+(?:OR|AND|WITH)\s+[\w.+-]+)*)")


def web_url(remote: str) -> str:
    """The web address of a GitHub / GitLab repository from a git remote (``git@github.com:o/r.git``,
    ``https://github.com/o/r(.git)``, ``ssh://git@...``); "" for any other host (its blob links are not known)."""
    m = _GIT_URL.match(remote.strip())
    return f"https://{m.group(1)}/{m.group(2)}/{m.group(3)}" if m else ""


def blob_link(url: str, commit: str, path: str, line: int) -> str:
    """``<url>/blob/<commit>/<path>#L<line>`` (GitLab: ``/-/blob/``); "" without a repository."""
    if not url:
        return ""
    sep = "/-/blob/" if url.startswith("https://gitlab.com/") else "/blob/"
    return f"{url}{sep}{commit or 'HEAD'}/{path}#L{line}"


def guess_license(root: Path) -> str:
    """SPDX id of the licence file at ``root`` (LICENSE, COPYING...) for the common licences; "unknown"
    when there is none or it is not recognised."""
    for name in _LICENSE_FILES:
        f = root / name
        if f.is_file():
            text = f.read_text(encoding="utf-8", errors="replace")[:20000]
            got = spdx_of(text)
            if got != "unknown":
                return got
    return "unknown"


def spdx_of(text: str) -> str:
    """SPDX id of a licence text, for the common licences (else "unknown"): an ``SPDX-License-Identifier``
    line, else the licence's title at the head of the text and its version (the GPL's own text names
    the LGPL further down, the MPL's the AGPL: only the head decides)."""
    m = _SPDX_LINE.search(text)
    if m:
        return m.group(1)
    low = " ".join(text.split()).lower()
    head = low[:1500]

    def version(title: str) -> str:
        i = head.find(title)
        v = re.search(r"(?:version|v\.?)\s*(\d+(?:\.\d+)?)", head[i:i + len(title) + 120])
        return v.group(1) if v else ""

    titles = {"gnu affero general public license": "AGPL", "gnu lesser general public license": "LGPL",
              "gnu library general public license": "LGPL", "gnu free documentation license": "GFDL",
              "gnu general public license": "GPL", "mozilla public license": "MPL", "apache license": "Apache",
              "artistic license": "Artistic", "cc0 1.0": "CC0", "creative commons": "CC", "creativecommons.org": "CC"}
    found = sorted((head.find(t), t) for t in titles if t in head)
    if found:  # the licence the text is: the first title it names
        title = found[0][1]
        spdx = titles[title]
        v = version(title)
        if spdx in ("AGPL", "LGPL", "GFDL", "GPL"):
            v = v or {"AGPL": "3", "LGPL": "2.1", "GFDL": "1.3", "GPL": "3"}[spdx]
            return f"{spdx}-{v if '.' in v else v + '.0'}"
        if spdx in ("MPL", "Apache"):
            return f"{spdx}-{v or '2.0'}"
        if spdx == "Artistic":
            return "Artistic-2.0" if v.startswith("2") else "Artistic-1.0"
        if spdx == "CC0" or "cc0" in head or "public domain dedication" in head:
            return "CC0-1.0"
        cv = re.search(r"(?:attribution|licenses/by)[-/ \w]*?(\d\.\d)", low)
        kind = "CC-BY-SA" if re.search(r"share-?alike|by-sa", head) else \
            "CC-BY-NC" if re.search(r"noncommercial|by-nc", head) else "CC-BY"
        return f"{kind}-{cv.group(1) if cv else '4.0'}"
    if "this is free and unencumbered software released into the public domain" in low:
        return "Unlicense"
    if "permission is hereby granted, free of charge" in low:
        return "MIT"
    if "redistribution and use in source and binary forms" in low:
        return "BSD-3-Clause" if "neither the name" in low or "may be used to endorse" in low else "BSD-2-Clause"
    if "permission to use, copy, modify, and/or distribute this software" in low \
            or "permission to use, copy, modify, and distribute this software" in low:
        return "ISC"
    return "unknown"


def _git(root: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def git_origin(root: Path) -> tuple[str, str, str]:
    """(web url, commit, path of ``root`` inside the repository) of a git checkout with an ``origin`` on
    GitHub / GitLab; ("", commit, prefix) without one, ("", "", "") outside git."""
    top = _git(root, "rev-parse", "--show-toplevel")
    if not top:
        return "", "", ""
    try:
        prefix = Path(root).resolve().relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        prefix = ""
    prefix = "" if prefix == "." else prefix
    return web_url(_git(root, "remote", "get-url", "origin")), _git(root, "rev-parse", "HEAD"), prefix


def manifest_packages(root: Path) -> dict[str, dict]:
    """``name`` -> entry of the project's ``lake-manifest.json`` ({} without one)."""
    try:
        data = json.loads((Path(root) / "lake-manifest.json").read_text(encoding="utf-8"))
        return {p["name"]: p for p in data.get("packages", []) if isinstance(p, dict) and p.get("name")}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


@dataclass
class Origin:
    """Where one source tree comes from: how its declarations are linked and licensed."""
    name: str
    url: str = ""       # web address of the repository ("" = no link)
    commit: str = ""
    prefix: str = ""    # the tree's folder inside that repository
    license: str = "unknown"

    def link(self, rel: str, line: int) -> str:
        return blob_link(self.url, self.commit, f"{self.prefix}/{rel}" if self.prefix else rel, line)

    def describe(self) -> str:
        where = f"{self.url} @ {self.commit[:8]}" if self.url and self.commit else self.url or "no repository"
        return f"{self.name} ({where}, {self.license})"


def tree_origin(tree: Path, *, project: Path | None = None, license: str | None = None,
                url: str | None = None, commit: str | None = None) -> Origin:
    """The origin of a source tree: ``project`` is the Lean project a ``.lake/packages`` tree belongs to
    (its ``lake-manifest.json`` entry names the package's repository and revision).

    In order: the explicit ``url`` / ``commit`` / ``license``; a Mathlib / Batteries copy with a
    ``SOURCE.md`` (the corpora); the manifest entry; the git checkout (``origin`` remote, ``HEAD``);
    Mathlib / Batteries by their layout; else no link. The licence: ``license``, else the tree's
    LICENSE/COPYING file (Mathlib and Batteries: Apache-2.0), else "unknown"."""
    tree = Path(tree)
    o = Origin(name=tree.name)
    known_commit, known_url = _commit_and_url(tree)
    entry = manifest_packages(project).get(tree.name) if project is not None else None
    if known_url and known_commit:
        o.url, o.commit = known_url, known_commit
    elif entry and entry.get("url"):
        o.url, o.commit, o.prefix = web_url(entry["url"]), str(entry.get("rev") or ""), entry.get("subDir") or ""
    else:
        o.url, o.commit, o.prefix = git_origin(tree)
        if not o.url and known_url:
            o.url, o.commit, o.prefix = known_url, o.commit or "master", ""
    if url is not None:
        o.url = url
    if commit is not None:
        o.commit = commit
    o.license = license or guess_license(tree)
    if o.license == "unknown" and known_url:
        o.license = LICENSE
    return o


_AUX = ("open", "export", "variable", "irreducible_def", "initialize_simps_projections", "notation", "infix", "infixl",
        "infixr", "prefix", "postfix", "scoped", "local", "include", "omit", "attribute",
        "insert_to_additive_translation")
_CMD = re.compile(
    r"^[ \t]*(?:(?:open|set_option|variable|omit|include)\b[^\n]*?\bin[ \t]+)?"
    r"(?=@\[|(?:namespace|section|end|mutual|" + "|".join(MODIFIERS + DECL_KINDS + _AUX) + r")\b)", re.M)
# Where a declaration's body ends: the next command at column 0 (proofs are indented in Mathlib style).
_NEXT = re.compile(r"^(?:@\[|#\w|(?:" + "|".join(MODIFIERS + DECL_KINDS + _AUX + (
    "namespace", "section", "end", "mutual", "variable", "universe", "attribute", "example", "set_option",
    "macro", "macro_rules", "syntax", "elab", "elab_rules", "initialize", "library_note", "add_decl_doc",
    "assert_not_exists", "assert_not_imported", "omit", "include", "run_cmd", "deriving", "compile_inductive",
    "unseal", "seal", "register_option", "declare_syntax_cat", "suppress_compilation", "import", "module")) + r")\b)",
    re.M)
_KW = re.compile(r"(namespace|section|end|mutual|irreducible_def|" + "|".join(DECL_KINDS + _AUX) + r")\b")
_MOD = re.compile(r"(" + "|".join(MODIFIERS) + r")\b\s*")
_IMPORT = re.compile(r"^(?:public\s+)?(?:meta\s+)?import\s+(?:all\s+)?([^\s.]+)", re.M)
_OPEN_IN = re.compile(r"\bopen\b([^\n]*?)\bin\b")
# attributes that make declarations (a twin, an `_assoc` lemma …), read from `attribute [..] names` too
_MADE_BY = re.compile(r"(?:to_additive|ext|reassoc|elementwise|mk_iff|to_app|to_fun)\b")
_VAR_IN = re.compile(r"\b(variable|include|omit)\b([^\n]*?)\bin\b")
_SCOPED = re.compile(r"(?:scoped|local)(?:\[[^\]\n]*\])?\s+")
_CLASS_KW = re.compile(r"\s+(inductive|abbrev)\b")
_UNIV = re.compile(r"\.\{[^}\n]*\}")
_STRING = re.compile(r'"[^"]*"')  # a string literal of the masked text (its inside blanked)
# ``alias x := @target`` / ``alias ⟨a, b⟩ := target``: the name after ``:=``
_ALIAS_TARGET = re.compile(r":=\s*@?((?:«[^»]*»|[^\s:()\[\]{}⦃⦄⟨⟩,:=|@`\"])+)")
# ``deprecated [replacement] ["message"] [(since := "date")]``
_DEPRECATED = re.compile(r'deprecated(?![\w.])\s*(?P<name>[^\s("]+)?\s*(?:"(?P<message>(?:\\.|[^"\\])*)")?'
                         r'\s*(?:\(\s*since\s*:=\s*"(?P<since>[^"]*)"\s*\))?')
_ANTIQUOTATION = re.compile(r"\$[\w']+(?::[A-Za-z]|\*)")   # $mods:declModifiers, $args*
_NOTE_DOC = re.compile(r"^[ \t]*(?:#adaptation_note|library_note)\b[^\n]*$", re.M)
_IN_PREFIX = re.compile(r"(?:\s|(?:set_option|variable|omit|include|open)\b[^\n]*\bin\b)*")


def _open_names(args: str) -> list[str]:
    """Namespaces named by ``open`` arguments (``scoped`` opens no names; ``(a b)``/``hiding`` ignored)."""
    args = re.sub(r"\([^)]*\)", " ", args)
    args = re.split(r"\b(?:hiding|renaming)\b", args)[0]
    if re.match(r"\s*scoped\b", args):
        return []
    return [w for w in args.split() if re.fullmatch(r"[^\W\d][\w'!?.]*", w)]


def parse_file(text: str, rel: str, extras: dict | None = None) -> list[dict]:
    """Declarations of one Lean file as dicts (name, kind, line, signature, docstring, attributes...).

    Each also carries ``ns`` (namespace its body elaborates in), ``opens`` (namespaces open for it, as
    candidate full names), ``idents`` (identifier tokens of its signature and body) and, for structures,
    classes and inductives, ``parts`` (lean_generated.structure_parts / inductive_ctors). File-level
    facts go to ``extras`` when given: ``exports`` (ns, namespace, name), ``notations`` (atom, head, ns,
    opens) and ``simps_projections`` (structure, rules, ns, opens)."""
    masked, docs = mask(text)
    extras = extras if extras is not None else {}
    la.scan_notations(text, masked, rel, extras)
    scan_notation_atoms(text, masked, extras)
    extras.setdefault("imports", {})[rel] = {m.group(1) for m in _IMPORT.finditer(masked)}
    doc_at: dict[int, str] = {}
    for a, e, d in docs:
        if _NOTE_DOC.search(masked, masked.rfind("\n", 0, a) + 1, a):
            continue   # the text of an `#adaptation_note` or a `library_note`, not the next declaration's
        m = _NONSPACE.search(masked, e)
        if m:
            doc_at[m.start()] = d
    line_starts = [0]
    line_starts.extend(itertools.accumulate(len(x) + 1 for x in masked.split("\n")))
    next_cmd = [m.start() for m in _NEXT.finditer(masked)]

    def line_of(pos: int) -> int:
        return bisect.bisect_right(line_starts, pos)

    def body_end(pos: int) -> int:
        k = bisect.bisect_right(next_cmd, pos)
        return next_cmd[k] if k < len(next_cmd) else len(masked)

    # ("ns"|"sec"|"mutual", name part, opens in this scope, `variable` names in this scope)
    stack: list[tuple[str, str, list[str], set[str]]] = []
    file_opens: list[str] = []
    file_vars: set[str] = set()
    # the `variable`s of the file and of each stack entry (lean_variables), kept beside ``stack``
    file_scope = lvar.Scope()
    scopes: list[lvar.Scope] = []
    ctx_intern: dict[tuple, tuple] = {}

    def cur_ns() -> str:
        return ".".join(p for k, p, _, _ in stack if k == "ns")

    def cur_opens() -> list[str]:
        out = list(file_opens)
        for _, _, o, _ in stack:
            out.extend(o)
        return out

    decls: list[dict] = []
    consumed = 0
    pending_in: tuple[list[str], int] = ([], -1)
    pending_vars: tuple[lvar.Scope, int] = (lvar.Scope(), -1)   # `variable … in`, `include … in`, `omit … in`
    n = len(masked)
    for cm in _CMD.finditer(masked):
        start = cm.start() + (len(cm.group()) - len(cm.group().lstrip(" \t")))
        if start < consumed:
            continue
        inline_opens: list[str] = []
        for om in _OPEN_IN.finditer(cm.group()) if "open" in cm.group() else ():
            for x in _open_names(om.group(1)):
                inline_opens.extend(lref.open_candidates(cur_ns(), x))
        if pending_in[1] >= 0 and _IN_PREFIX.fullmatch(masked, pending_in[1], start):
            inline_opens.extend(pending_in[0])
        pending_in = ([], -1)
        once = lvar.Scope()   # the `… in` prefixes that change this command only
        if pending_vars[1] >= 0 and _IN_PREFIX.fullmatch(masked, pending_vars[1], start):
            once = pending_vars[0]
        for pm in _VAR_IN.finditer(cm.group()) if "in" in cm.group() else ():
            once.command(pm.group(1), pm.group(2))
        pending_vars = (lvar.Scope(), -1)
        i = cm.end()
        attrs: list[str] = []
        while masked.startswith("@[", i):
            e = _match_bracket(masked, i + 1)
            attrs.extend(_parse_attrs(text[i + 2:e - 1], masked[i + 2:e - 1]))
            m = _NONSPACE.search(masked, e)
            i = m.start() if m else n
        mods: list[str] = []
        while True:
            m = _MOD.match(masked, i)
            if not m:
                break
            mods.append(m.group(1))
            i = m.end()
        m = _SCOPED.match(masked, i) if masked.startswith(("scoped", "local"), i) else None
        if m:
            i = m.end()
        m = _KW.match(masked, i)
        if not m:
            continue
        kw = m.group(1)
        i = m.end()
        eol = masked.find("\n", i)
        eol = n if eol < 0 else eol
        rest_line = masked[i:eol]
        if kw in ("namespace", "section"):
            name = rest_line.strip().split()[0] if rest_line.strip() else ""
            for part in (name.split(".") if name else [""]):
                stack.append(("ns" if kw == "namespace" else "sec", part, [], set()))
                scopes.append(lvar.Scope())
            consumed = i
            continue
        if kw == "mutual":
            stack.append(("mutual", "", [], set()))
            scopes.append(lvar.Scope())
            consumed = i
            continue
        if kw == "end":
            name = rest_line.strip().split()[0] if rest_line.strip() else ""
            for _ in range(len(name.split(".")) if name else 1):
                if stack:
                    stack.pop()
                    scopes.pop()
            consumed = i
            continue
        if kw in ("scoped", "local"):
            continue
        if kw == "open":
            if start != line_starts[line_of(start) - 1]:
                continue  # an indented `open` inside a proof
            inm = re.search(r"\bin\s*$", rest_line)
            names = _open_names(rest_line[:inm.start()] if inm else rest_line)
            cands = [c for x in names for c in lref.open_candidates(cur_ns(), x)]
            if inm:
                pending_in = (cands, eol)
            else:
                (stack[-1][2] if stack else file_opens).extend(cands)
            consumed = eol
            continue
        if kw in ("variable", "include", "omit"):
            e = body_end(i)
            inm = re.search(r"\bin\s*$", masked[i:e])
            args = masked[i:i + inm.start() if inm else e]
            if inm:  # `variable (K) in` changes the next command only
                once.command(kw, args)
                pending_vars = (once, e)
            else:
                if kw == "variable":
                    (stack[-1][3] if stack else file_vars).update(lref.binder_names(args))
                (scopes[-1] if scopes else file_scope).command(kw, args)
            consumed = e
            continue
        if kw == "attribute":  # `attribute [to_additive existing] Mul Div`, `attribute [reassoc] foo`
            e = body_end(i)
            j = _NONSPACE.search(masked, i, e)
            if j and masked.startswith("[", j.start()):
                k = _match_bracket(masked, j.start())
                found = [a for a in _parse_attrs(text[j.start() + 1:k - 1], masked[j.start() + 1:k - 1])
                         if _MADE_BY.match(a)]
                targets = re.sub(r"\bin\s*$", "", masked[k:e]).split()
                if found and targets:
                    extras.setdefault("attribute_commands", []).append(
                        (cur_ns(), tuple(cur_opens()), found, targets))
            consumed = e
            continue
        if kw == "insert_to_additive_translation":
            e = body_end(i)
            pair = masked[i:e].split()
            if len(pair) == 2:
                extras.setdefault("attribute_commands", []).append(("", (), ["to_additive " + pair[1]],
                                                                     [pair[0]]))
            consumed = e
            continue
        if kw == "export":
            em = re.match(r"\s*([^\s(]+)\s*\(([^)]*)\)", masked[i:body_end(i)])
            if em:
                for nm in em.group(2).split():
                    extras.setdefault("exports", []).append((cur_ns(), em.group(1), nm))
            consumed = eol
            continue
        if kw == "initialize_simps_projections":
            e = body_end(i)
            pm = re.match(r"\s*([^\s(]+)\s*(?:\(([^)]*)\))?", masked[i:e])
            if pm:
                extras.setdefault("simps_projections", []).append(
                    (pm.group(1), pm.group(2) or "", cur_ns(), tuple(cur_opens()), rel))
            consumed = e
            continue
        if kw in ("notation", "infix", "infixl", "infixr", "prefix", "postfix"):
            e = body_end(i)
            cmd = text[i:e]
            am = re.search(r'"\s*([^"]+?)\s*"', cmd)
            hm = re.search(r"=>\s*(?:@)?([^\W\d][\w'!?.]*)", cmd)
            if am and hm:
                extras.setdefault("notations", []).append((am.group(1), hm.group(1), cur_ns(),
                                                           tuple(cur_opens()), rel))
            consumed = e
            continue
        # a declaration
        if kw == "class":
            m2 = _CLASS_KW.match(masked, i)
            if m2:
                kw = "class inductive" if m2.group(1) == "inductive" else kw
                i = m2.end()
        while i < n and masked[i].isspace():
            i += 1
        if kw == "instance" and masked.startswith("(", i) and re.match(r"\(\s*priority", masked[i:i + 40]):
            e = _match_bracket(masked, i)
            m2 = _NONSPACE.search(masked, e)
            i = m2.start() if m2 else n
        names: list[str] = []
        derived = False
        sig_start = i
        alias_dirs: dict[str, str] = {}  # alias ⟨mp, mpr⟩ := iff: each name's direction
        alias_target = ""
        if kw == "alias":
            end = signature_end(masked, i)
            head = masked[i:end]
            am = re.match(r"\s*⟨([^⟩]*)⟩", head)
            if am:
                parts_ = [x.strip() for x in am.group(1).split(",")]
                names = [x for x in parts_ if x and x != "_"]
                alias_dirs = {x: ("mp", "mpr")[j] for j, x in enumerate(parts_[:2]) if x and x != "_"}
            else:
                nm = _IDENT.match(masked, i)
                names = [nm.group()] if nm else []
            tm = _ALIAS_TARGET.match(masked, end)
            alias_target = tm.group(1) if tm else ""
        else:
            nm = _IDENT.match(masked, i)
            if nm and not (kw == "instance" and nm.group() in ("where",)):
                names = [nm.group()]
                i = nm.end()
                if names[0].endswith(".") and masked.startswith("{", i):  # `Foo.{u}` universe list
                    names[0] = names[0][:-1]
                    i -= 1
                um = _UNIV.match(masked, i) if masked.startswith(".{", i) else None
                if um:
                    i = um.end()
            sig_start = i
            end = signature_end(masked, i)
        if kw in ("inductive", "class inductive"):
            bar = gen.top_level(masked[sig_start:end], "| ")  # one-line `inductive C | a | b`
            end = sig_start + bar if bar >= 0 else end
        # the header as written, comments left out: strings back from the text (an attribute's
        # ``(since := "2024-01-01")``), each at the same place in both
        head_src = " ".join(_STRING.sub(lambda sm: text[sm.start() + start:sm.end() + start],
                                        masked[start:end]).split())
        sig = " ".join(masked[sig_start:end].split())
        bend = max(body_end(end), end)
        # antiquotations: a declaration written inside a syntax quotation (`(theorem $name $args* : $res)),
        # not one of the file; `<$>` and Qq's `Q($α)` are a signature's own
        if "$" in cur_ns() or any("$" in x for x in names) or _ANTIQUOTATION.search(sig):
            consumed = end
            continue
        if not names:
            if kw != "instance":
                consumed = end
                continue
            names = [_derived_instance_name(sig)]
            derived = True
        prefix = cur_ns()
        opens = tuple(cur_opens() + inline_opens)
        local_vars = file_vars.union(*(v for *_, v in stack)) if stack else file_vars
        if once:
            local_vars = local_vars | {v.name for k, v in once.steps if k == "var" and v.name}
        # an alias refers to its target only (not to the other name of ``alias ⟨a, b⟩``)
        idents = lref.identifiers(masked[end if alias_target else sig_start:bend], sig, local_vars)
        parts = None
        if kw in ("structure", "class"):
            parts = gen.structure_parts(masked, text, sig, end, bend, doc_at, line_of)
        elif kw in ("inductive", "class inductive"):
            parts = {"ctors": gen.inductive_ctors(masked, end, bend, doc_at, line_of)}
        value = la.definition_value(masked[end:bend]) if kw in ("def", "abbrev", "irreducible_def") else ""
        simps = gen.simps_request(attrs) if kw in ("def", "abbrev", "instance") else None
        if simps is not None:
            simps["ctor_value"] = gen.constructor_value(masked[end:bend])
            simps["type"] = _result_type(sig)
        # the section variables the declaration takes, before its own binders (a theorem takes those
        # its statement uses, a definition also those its body uses)
        vbind = "" if kw == "alias" else lvar.binders_for(
            [file_scope, *scopes, once], sig, "" if kw in ("theorem", "lemma") else masked[end:bend])
        for name in names:
            full = name[len("_root_."):] if name.startswith("_root_.") else ".".join(
                x for x in (prefix, name) if x)
            ns = full.rpartition(".")[0]
            ctx = ctx_intern.setdefault((ns, opens), (ns, opens))
            decls.append({
                "name": full, "kind": {"lemma": "lemma", "class inductive": "class",
                                       "irreducible_def": "def"}.get(kw, kw),
                "keyword": kw, "line": line_of(start),
                "signature": sig, "header": f"{head_src} := {alias_target}" if alias_target else head_src,
                "docstring": doc_at.get(cm.start(), doc_at.get(start, "")),
                "attributes": attrs, "modifiers": mods, "derived": derived,
                "ns": ctx[0], "opens": ctx[1], "idents": idents, "parts": parts, "simps": simps,
                "value": value, "alias_target": alias_target, "alias_dir": alias_dirs.get(name, ""),
                "variables": vbind,   # shown before the signature (extra["signature"]), not searched
                "scope": prefix,  # the namespace the command is written in (attribute and alias names resolve there)
            })
        consumed = end
    return decls


def _result_type(sig: str) -> str:
    """The type after a header's top-level colon (``(a : α) : β`` -> ``β``)."""
    c = gen.top_level(sig, ":")
    return sig[c + 1:].strip() if c >= 0 else ""


_BINDS_RIGHT = ("∀", "∃", "fun ", "λ", "Π", "Σ", "∑", "∏", "⋃", "⋂")


def _operand(x: str, left: bool) -> str:
    """``x`` parenthesised where it would not stay one operand of ``→``: on its left, when it holds a
    top-level ``→``/``↔`` or begins with a binder that extends to the right; on its right, when it
    holds a top-level ``↔`` (which binds more loosely than ``→``)."""
    if gen.top_level(x, "↔") >= 0 or left and (gen.top_level(x, "→") >= 0 or x.startswith(_BINDS_RIGHT)):
        return f"({x})"
    return x


def alias_signature(target: str, direction: str = "") -> str:
    """The statement an ``alias`` stands for, from its target's signature: the same statement for
    ``alias x := t``; for ``alias ⟨mp, mpr⟩ := t`` with ``t : binders : A ↔ B`` (``∀ x, A ↔ B``
    too), ``binders : A → B`` (``direction="mp"``) or ``binders : B → A`` (``"mpr"``). "" when the
    target's statement is not an ``↔``."""
    if not direction:
        return target
    c = gen.top_level(target, ":")
    if c < 0:
        return ""
    binders, typ = target[:c].strip(), target[c + 1:].strip()
    lead = ""
    if typ.startswith("∀"):
        comma = gen.top_level(typ, ",")
        if comma > 0:
            lead, typ = typ[:comma + 1] + " ", typ[comma + 1:].strip()
    k = gen.top_level(typ, "↔")
    if k < 0:
        return ""
    a, b = typ[:k].strip(), typ[k + 1:].strip()
    a, b = (a, b) if direction == "mp" else (b, a)
    implication = f"{_operand(a, True)} → {_operand(b, False)}"
    return f"{binders} : {lead}{implication}".strip()


def deprecation(attributes: list[str]) -> tuple[str, str] | None:
    """``(note, replacement as written)`` of a ``@[deprecated ...]`` attribute: the note is ``since
    <date>``, the message, both (``since 2024-01-01: Use simp``) or ``deprecated``; None when the
    declaration is not deprecated."""
    for a in attributes:
        m = _DEPRECATED.fullmatch(a) if a.startswith("deprecated") else None
        if m:
            since, message = m.group("since"), " ".join((m.group("message") or "").split())
            note = ": ".join(x for x in (f"since {since}" if since else "", message) if x) or "deprecated"
            return note, m.group("name") or ""
    return None


def _files(root: Path, dirs) -> list[Path]:
    if dirs is None:
        dirs = [d for d in DEFAULT_DIRS if (root / d).is_dir()]
        if not dirs:
            dirs = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in SKIP_DIRS
                          and not p.name.startswith(".") and any(p.rglob("*.lean")))
    elif isinstance(dirs, str):
        dirs = [d.strip() for d in dirs.split(",") if d.strip()]
    out: list[Path] = []
    for d in dirs:
        base = root / d
        if not base.is_dir():
            raise FileNotFoundError(f"Lean folder {base} not found")
        out.extend(sorted(base.rglob("*.lean")))
    return out


def _doc(full: str, kind: str, d: dict, extra: dict, *, body: str, signature: str, docstring: str,
         line: int, link: str, license: str = LICENSE) -> Document:
    words = split_words(full)
    statement = " ".join(x for x in (docstring, words, signature) if x)
    return Document(id=f"lean:{full}", source=SOURCE, kind=kind, name=words, title=d["module"], body=body,
                    statement=statement, link=link, license=license, file=d["rel"], line=line, extra=extra)


def _describe(extra: dict, full: str, d: dict | None, deps: list[str], aliases_of: dict, stacks_names: dict,
              glossary: la.DefinitionGlossary, stats: dict) -> None:
    """The words a declaration's name and signature lack (lean_aliases): ``aliases`` (the project's
    lists and its Stacks tags' statements, "; "-joined), ``value`` (a def's body), ``fields`` (a
    structure's) and ``context`` (the definitions its statement mentions)."""
    names = list(aliases_of.get(full, ()))
    for tag in str(extra.get("stacks") or "").split():
        if tag in stacks_names:
            names.append(stacks_names[tag])
    if names:
        # "; " separates the names (the runtime splits on it): one inside a name becomes ", "
        extra["aliases"] = "; ".join(dict.fromkeys(" ".join(n.replace("; ", ", ").split()) for n in names))
        stats["aliased"] += 1
    if d is not None:
        if d.get("value"):
            extra["value"] = d["value"]
        fields = la.structure_fields(d.get("parts")) if d["kind"] in ("structure", "class") else ""
        if fields:
            extra["fields"] = fields
    context = glossary.gloss(extra.get("signature") or "", deps)
    if context:
        extra["context"] = context


_DONT_TRANSLATE = re.compile(r"\(\s*dont_translate\s*:=\s*([^()]*)\)")


def _dont_translate(attributes: list[str]) -> frozenset[str]:
    """The types ``@[to_additive (dont_translate := R S)]`` leaves alone."""
    return frozenset(n for a in attributes if a.startswith("to_additive")
                     for m in _DONT_TRANSLATE.finditer(a) for n in m.group(1).split())


def _show_variables(extra: dict) -> None:
    """The signature shown is the statement Lean states: the section variables the declaration takes,
    then its own binders and type; ``extra["variables"]`` keeps the first part, so that the texts
    searched read the declaration's own signature (``retrieval_text.own_signature``; docs/formal.md)."""
    if extra.get("variables"):
        extra["signature"] = f"{extra['variables']} {extra['signature']}".strip()
    else:
        extra.pop("variables", None)


def _alias_statements(decls: list[dict], add_of: dict[str, str], resolver: lref.Resolver,
                      statement_name, notation: Notation | None = None) -> dict[str, str]:
    """Each ``alias``'s target (full name -> full name), and its signature set to the statement it
    stands for (``alias_signature``; "" where the target is not among the declarations read or is no
    ``↔`` for ``⟨mp, mpr⟩``), following aliases of aliases; its own header (``⟨_, x⟩``) is none. A
    generated twin's statement is its original's translated (``statement_name``, as the twin itself
    shows it), so that ``alias dist_eq_norm := dist_eq_norm_sub`` states ``‖a - b‖``, not
    ``dist_eq_norm_div``'s ``‖a / b‖``; the twin of an ``@[to_additive] alias`` states its alias's."""
    sig_of: dict[str, str] = {}
    vars_of: dict[str, str] = {}   # the section variables of each statement (an alias takes its target's)
    keep_of: dict[str, frozenset[str]] = {}   # a twin's (dont_translate := ..) types

    def translate(text: str, add: str) -> str:
        return additive_statement(text, statement_name, keep_of[add], notation)

    for d in decls:
        if not d["full"]:
            continue
        own = "" if d["alias_target"] else d["signature"]
        own_vars = "" if d["alias_target"] else d["variables"]
        sig_of.setdefault(d["full"], own)
        vars_of.setdefault(d["full"], own_vars)
        add = add_of.get(d["full"])
        if add:
            keep_of[add] = _dont_translate(d["attributes"])
            sig_of.setdefault(add, translate(own, add))
            vars_of.setdefault(add, translate(own_vars, add))
        for g in d["gen"]:
            sig_of.setdefault(g["name"], g["signature"])
    target_of: dict[str, str] = {}
    aliases = [d for d in decls if d["full"] and d["alias_target"]]
    for d in aliases:
        ctx = resolver.context(d["scope"], d["opens"], d["rel"])
        target = next((t for t in resolver.resolve(d["alias_target"], ctx) if t != d["full"]), "")
        if target:
            target_of[d["full"]] = target
    for _ in range(4):  # an alias of an alias of ...: one more step each round
        changed = False
        for d in aliases:
            target = target_of.get(d["full"])
            new = alias_signature(sig_of.get(target, ""), d["alias_dir"]) if target else ""
            new_vars = vars_of.get(target, "") if new else ""
            add = add_of.get(d["full"])
            for name, sig, var in ((d["full"], new, new_vars),
                                   *([(add, translate(new, add), translate(new_vars, add))] if add else [])):
                if (sig, var) != (sig_of.get(name), vars_of.get(name)):
                    sig_of[name], vars_of[name] = sig, var
                    changed = True
        if not changed:
            break
    for d in aliases:
        d["signature"] = sig_of.get(d["full"], "")
        d["variables"] = vars_of.get(d["full"], "")
    return target_of


def _visibility(decls: list[dict], add_of: dict[str, str], extras: dict):
    """(owner, visible) for lean_refs.Resolver: private names belong to their file; names of a top
    folder that some other top folder does not import (Mathlib never imports Archive) to that folder."""
    imports: dict[str, set[str]] = {}
    for rel, mods in extras.get("imports", {}).items():
        imports.setdefault(rel.split("/", 1)[0], set()).update(mods)
    tops = set(imports)
    restricted = {t for t in tops if any(t != u and t not in imports[u] for u in tops)}
    owner: dict[str, str] = {}
    for d in decls:
        if not d.get("full"):
            continue
        top = d["rel"].split("/", 1)[0]
        scope = f"f:{d['rel']}" if "private" in d["modifiers"] else f"t:{top}" if top in restricted else None
        if scope:
            for name in [d["full"], add_of.get(d["full"])] + [g["name"] for g in d["gen"]]:
                if name:
                    owner[name] = scope
    visible = {u: frozenset(f"t:{t}" for t in imports[u] | {u}) for u in tops}
    return owner, visible


def _parse_files(root: Path, rels: list[str]) -> tuple[list[dict], dict]:
    """parse_file over some files of ``root`` (one unit of work for the process pool)."""
    extras: dict = {}
    decls: list[dict] = []
    for rel in rels:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        module = _module(rel)
        for d in parse_file(text, rel, extras):
            d["rel"], d["module"] = rel, module
            decls.append(d)
    return decls, extras


def read(root: Path, **options) -> Iterator[Document]:
    """Yield one Document per declaration of the Lean project at ``root`` (see the module docstring).

    Every file is parsed first (phase 1), then names are fixed and the global name table built, then
    references are resolved and Documents yielded in file order (phase 2)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"Lean project not found at {root}")
    t0 = time.time()
    origins = [tree_origin(root, license=options.get("license"), url=options.get("repo_url"),
                           commit=options.get("commit"))]
    do_additive = options.get("to_additive", True)
    if options.get("files"):
        files = [root / f for f in options["files"]]
    else:
        files = _files(root, options.get("dirs"))
    # more source trees read in the same pass (a project's .lake/packages/*, Batteries beside Mathlib):
    # one name table, so references resolve across them; relative paths are relative to ``root``
    roots = [root]
    for extra_root in options.get("extra_roots") or ():
        r = Path(extra_root)
        r = r if r.is_absolute() else root / r
        if not r.is_dir():
            raise FileNotFoundError(f"Lean source tree {r} (extra_roots) not found")
        roots.append(r)
        origins.append(tree_origin(r, project=root))
    stats = {"files": 0, "declarations": 0, "duplicates": 0, "derived_instances": 0, "to_additive": 0,
             "field": 0, "constructor": 0, "simps": 0, "irreducible_def": 0, "edges": 0,
             "with_variables": 0}
    extras: dict = {}
    decls: list[dict] = []
    rels = [path.relative_to(root).as_posix() for path in files]
    jobs: list[tuple[int, list[str]]] = [(0, rels[i:i + 64]) for i in range(0, len(rels), 64)]
    for n, r in enumerate(roots[1:], 1):
        more = [path.relative_to(r).as_posix() for path in _files(r, None)]
        rels += more
        jobs += [(n, more[i:i + 64]) for i in range(0, len(more), 64)]
    workers = int(options.get("workers") or 1)
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(workers) as pool:
            parsed = list(pool.map(_parse_files, [roots[n] for n, _ in jobs], [c for _, c in jobs]))
    else:
        parsed = [_parse_files(roots[n], c) for n, c in jobs]
    for (n, _), (chunk_decls, chunk_extras) in zip(jobs, parsed):
        for d in chunk_decls:
            d["tree"] = n
        decls.extend(chunk_decls)
        for key, val in chunk_extras.items():
            if isinstance(val, dict):
                extras.setdefault(key, {}).update(val)
            else:
                extras.setdefault(key, []).extend(val)
    stats["files"] = len(rels)
    del parsed
    t_parse = time.time() - t0
    # names: declared ones first (they win over any generated name), then generated ones
    seen: set[str] = set()
    protected: set[str] = set()
    derived_count: dict[str, int] = {}
    for d in decls:
        full = d["name"]
        if d["derived"]:
            k = derived_count.get(full, 0)
            derived_count[full] = k + 1
            full = f"{full}_{k}" if k else full
            stats["derived_instances"] += 1
        if full in seen:
            stats["duplicates"] += 1
            d["full"] = None
            continue
        seen.add(full)
        d["full"] = full
        if "protected" in d["modifiers"]:
            protected.add(full)
    atom_heads: dict[str, str] = {}
    for atom, head, *_ in extras.get("notations", ()):
        atom_heads.setdefault(atom, head)
    # what @[to_additive] translates (``existing`` ones too): a name's prefix is translated through them
    # (Lean's targetName), and a declaration may come before its namespace's: again until nothing changes
    translations: dict[str, str] = {}
    # `attribute [to_additive …] A B` (and `[reassoc]`, `[ext]` …) commands: each name as the namespace
    # the command is written in resolves it; a declaration read takes the attributes as if written on it
    # (its twin and lemmas are made as for `@[…]`), a name not read (Lean core's `Mul`, `One`) gives
    # its translation only
    decl_of = {d["full"]: d for d in decls if d["full"]}
    later: list[tuple[str, list[str]]] = []
    on_generated: list[tuple[list[str], list[str]]] = []   # (candidate names, attributes): a field's `_assoc`
    for ns, _opens, cmd_attrs, targets in extras.get("attribute_commands", ()):
        parts = ns.split(".") if ns else []
        for t in targets:
            t = t.lstrip("@").removeprefix("_root_.")
            cands = [".".join(parts[:k] + [t]) for k in range(len(parts), -1, -1)]   # innermost first
            full = next((c for c in cands if c in decl_of), None)
            if full:
                decl_of[full]["attributes"] = [*decl_of[full]["attributes"], *cmd_attrs]
            else:
                later.append((t, [a for a in cmd_attrs if a.startswith("to_additive")]))
                on_generated.append((cands, [a for a in cmd_attrs if not a.startswith("to_additive")]))
    for _ in range(4 if do_additive else 0):
        found = {}
        for full, attrs in later:
            t = to_additive_target(attrs, full, translations, existing=True)
            if t and t != full:
                found.setdefault(full, t)
        for d in decls:
            if d["full"] and d["attributes"]:
                t = to_additive_target(d["attributes"], d["full"], translations, existing=True)
                if t and t != d["full"]:
                    found[d["full"]] = t
        if found == translations:
            break
        translations = found
    add_of: dict[str, str] = {}
    for d in decls:
        if not d["full"]:
            continue
        add = to_additive_target(d["attributes"], d["full"], translations) if do_additive else None
        if add and add != d["full"] and add not in seen:
            seen.add(add)
            add_of[d["full"]] = add
            if d["full"] in protected:
                protected.add(add)
        d["gen"] = []
        for g in gen.generated_names(d, d["full"], add_of.get(d["full"]), atom_heads):
            if g["name"] not in seen:  # also a name one declaration would generate twice
                seen.add(g["name"])
                d["gen"].append(g)
                if g.get("protected"):  # S.ext, S.ext_iff: Lean protects them
                    protected.add(g["name"])
    # `attribute [reassoc (attr := simp)] f_r s_g` on names Lean generated (fields, an ext lemma): their
    # lemmas, emitted with the declaration that made the name
    made = {g["name"]: (d, g) for d in decls if d["full"] for g in d["gen"]}
    for cands, attrs in on_generated:
        hit = next((c for c in cands if c in made), None) if attrs else None
        if hit:
            owner, g = made[hit]
            src = {"keyword": "theorem", "attributes": attrs, "modifiers": [], "docstring": g["docstring"],
                   "line": g["line"]}
            for x in gen.attribute_lemmas(src, hit, None):
                if x["name"] not in seen:
                    seen.add(x["name"])
                    owner["gen"].append(x)
                    if x.get("protected"):
                        protected.add(x["name"])
    aliases: dict[str, str] = {}
    for ns, target, nm in extras.get("exports", ()):
        for cand in lref.open_candidates(ns, target):
            if f"{cand}.{nm}" in seen:
                aliases[f"{ns}.{nm}" if ns else nm] = f"{cand}.{nm}"
                break
    resolver = lref.Resolver(seen, protected, aliases, *_visibility(decls, add_of, extras))
    simps = gen.simps_lemmas(decls, extras, resolver, atom_heads, add_of)
    for k, names in simps.items():
        simps[k] = [x for x in {x[0]: x for x in names}.values() if x[0] not in seen]
        resolver.add(x[0] for x in simps[k])
    statement_name = gen.statement_names(translations)   # the names of a translated statement
    notation = additive_notation(extras.get("notation_atoms", ()), translations, seen)   # |a|ₘ -> |a|
    alias_of = _alias_statements(decls, add_of, resolver, statement_name, notation)
    # a twin's dependencies, alias and replacement are its original's through Lean's translation dictionary
    twin = lt.twin_names(decls, translations, add_of, seen, simps)
    stats["twins_known"] = len(twin)
    t_names = time.time() - t0 - t_parse
    aliases_of = la.alias_table(roots) if options.get("aliases", True) else {}
    stacks_names = la.stacks_aliases(options.get("stacks_bundle"))
    glossary = la.DefinitionGlossary(decls, split_words)
    glossary.add_notations(extras.get("notation_heads", ()), resolver)
    stats["aliased"] = 0
    stats["deprecated"] = 0
    for k, d in enumerate(decls):
        full = d["full"]
        if not full:
            continue
        ctx = resolver.context(d["ns"], d["opens"], d["rel"])
        deps = resolver.dependencies(d["idents"], ctx, full)
        if full in alias_of and alias_of[full] not in deps:
            deps = sorted([*deps, alias_of[full]])
        stats["edges"] += len(deps)
        stats["declarations"] += 1
        stats["with_variables"] += bool(d["variables"])
        extra = {"full_name": full, "module": d["module"], "signature": d["signature"],
                 "variables": d["variables"],
                 "docstring": d["docstring"], "attributes": ", ".join(d["attributes"]),
                 "modifiers": " ".join(d["modifiers"]), "dependencies": deps}
        if full in alias_of:  # ids, as the dependencies column holds them
            extra["alias_of"] = f"lean:{alias_of[full]}"
        dep = deprecation(d["attributes"])
        if dep:
            stats["deprecated"] += 1
            extra["deprecated"] = dep[0]
            # the replacement the attribute names, else (a deprecated alias) the alias's target; one
            # that is not among the declarations read (Lean core) is named in the note
            scope = resolver.context(d["scope"], d["opens"], d["rel"]) if dep[1] else None
            replacement = next(iter(resolver.resolve(dep[1], scope)), "") if dep[1] else alias_of.get(full, "")
            if replacement and replacement != full:
                extra["replaced_by"] = f"lean:{replacement}"
            elif dep[1] and not replacement:
                extra["deprecated"] += f"; use {dep[1]}"
        if d["keyword"] == "irreducible_def":
            extra["command"] = "irreducible_def"
        for a in d["attributes"]:
            am = _TAG.match(a) if a.startswith(("stacks", "kerodon")) else None
            if am:
                extra[am.group(1)] = (extra[am.group(1)] + " " + am.group(2)) if am.group(1) in extra \
                    else am.group(2)
        if d["derived"]:
            extra["derived_name"] = True
        _describe(extra, full, d, deps, aliases_of, stacks_names, glossary, stats)
        _show_variables(extra)
        origin = origins[d["tree"]]
        link = origin.link(d["rel"], d["line"])
        lic = origin.license
        yield _doc(full, d["kind"], d, extra, body=d["header"], signature=d["signature"],
                   docstring=d["docstring"], line=d["line"], link=link, license=lic)
        add = add_of.get(full)
        if add:
            stats["to_additive"] += 1
            add_deps = sorted({twin.get(x, x) for x in deps} - {add})
            stats["edges"] += len(add_deps)
            add_extra = {k: v for k, v in extra.items() if k not in ("aliases", "context")}
            add_extra.update({"full_name": add, "generated": "to_additive", "generated_from": full,
                              "dependencies": add_deps})
            for key in ("alias_of", "replaced_by"):  # the additive alias stands for the additive target
                if key in add_extra:
                    target = add_extra[key].removeprefix("lean:")
                    add_extra[key] = f"lean:{twin.get(target, target)}"
            # its own statement (a + b = b + a, not mul_comm's a * b = b * a) and docstring
            keep = _dont_translate(d["attributes"])
            add_sig = additive_statement(d["signature"], statement_name, keep, notation)
            add_doc = additive_docstring(d["attributes"]) or d["docstring"]
            add_extra.update({"signature": add_sig, "docstring": add_doc,
                              "variables": additive_statement(d["variables"], statement_name, keep, notation)})
            _describe(add_extra, add, d, add_deps, aliases_of, stacks_names, glossary, stats)
            _show_variables(add_extra)
            yield _doc(add, d["kind"], d, add_extra,
                       body=f"{d['keyword']} {add.rsplit('.', 1)[-1]} {add_extra['signature']}".strip(),
                       signature=add_sig,
                       docstring=add_doc, line=d["line"], link=link, license=lic)
        for g in d["gen"]:
            gdeps = set(resolver.dependencies(g["tokens"], ctx, g["name"]))
            translated = add is not None and g["from"] == add   # a field of a generated additive structure
            if translated:
                gdeps = {twin.get(x, x) for x in gdeps}
            gdeps = (gdeps | {g["from"]}) - {g["name"]}
            stats[g["generated"]] = stats.get(g["generated"], 0) + 1   # ext, reassoc, ... (lean_generated)
            stats["edges"] += len(gdeps)
            gx = {"full_name": g["name"], "module": d["module"], "signature": g["signature"],
                  "docstring": g["docstring"], "attributes": "", "modifiers": "",
                  "dependencies": sorted(gdeps), "generated": g["generated"], "generated_from": g["from"]}
            _describe(gx, g["name"], None, gx["dependencies"], aliases_of, stacks_names, glossary, stats)
            if "written" in g:
                gx["name_written"] = g["written"]
            if "parent" in g:
                gx["parent"] = next(iter(resolver.resolve(g["parent"], ctx)), g["parent"])
                gx["parent"] = twin.get(gx["parent"], gx["parent"]) if translated else gx["parent"]
            body = g.get("body") or f"{g['name'].rsplit('.', 1)[-1]} {g['signature']}".strip()
            yield _doc(g["name"], g["kind"], d, gx, body=body, signature=g["signature"],
                       docstring=g["docstring"], line=g["line"], link=origin.link(d["rel"], g["line"]),
                       license=lic)
        for name, proj, owner in simps.get(k, ()):
            stats["simps"] += 1
            stats["edges"] += 1
            gx = {"full_name": name, "module": d["module"], "signature": "", "docstring": "",
                  "attributes": "simp", "modifiers": "", "dependencies": [owner], "generated": "simps",
                  "generated_from": owner, "projection": proj}
            yield _doc(name, "theorem", d, gx, body=f"@[simps] {owner}: projection {proj}", signature="",
                       docstring="", line=d["line"], link=link, license=lic)
    frac = resolver.resolved_tokens / max(1, resolver.tokens)
    print(f"lean: {stats['files']} files, {stats['declarations']} declarations, "
          f"{stats['to_additive']} to_additive, {stats['field']} fields, {stats['constructor']} constructors, "
          f"{stats['simps']} simps, {stats['irreducible_def']} irreducible_def lemmas, "
          f"{stats['derived_instances']} derived instance names, {stats['duplicates']} duplicate names skipped, "
          f"{stats['aliased']} with aliases, {stats['deprecated']} deprecated, "
          f"{stats['with_variables']} with section variables in their signature; attribute lemmas: "
          + ", ".join(f"{stats.get(t, 0)} {t}" for t in ("ext", "ext_iff", "reassoc", "elementwise", "to_app",
                                                          "to_fun", "mk_iff")) + "; "
          f"{stats['edges']} dependency edges, {frac:.3f} of {resolver.tokens} identifier tokens resolved; "
          f"{time.time() - t0:.1f} s (parse {t_parse:.1f}, names {t_names:.1f}, resolve and emit "
          f"{time.time() - t0 - t_parse - t_names:.1f})", file=sys.stderr)
