"""Words for a Lean declaration that its own name and signature do not contain (issue 22, parts 1-3).

mathlas calls no LLM, so where LeanExplore asks one to describe a declaration, the Lean reader gathers
what the project itself says about it:

* **aliases** (``alias_table``): the names people use for a declaration, from the project's own
  ``docs/*.yaml`` lists (Mathlib's ``100.yaml`` and ``1000.yaml``: a theorem's title against the
  declarations that formalise it; ``overview.yaml`` and ``undergrad.yaml``: a topic such as "natural
  transformation" against its declaration) and, for a declaration tagged ``@[stacks TAG]``, the Stacks
  Project statement of that tag (its name, slogan and section) read from a bundle that indexes Stacks
  (``stacks_aliases``; the default bundle does). These go to the BM25 ``alias`` field.
* **definition values** (``definition_value``): what a ``def``/``abbrev`` is, its body after ``:=``
  abbreviated, so ``#{i | x i ≠ y i}`` finds ``hammingDist``; a structure's or class's field names and
  types (``structure_fields``).
* **dependency context** (``DefinitionGlossary``): a declaration's statement mentions definitions; their
  names and the first sentence of their docstrings describe it in words (``Nat.divisors``: "The divisors
  of a natural number").

These go to the BM25 ``context`` field (mathlas_build.retrieval_text.context_field); the embedded text
is unchanged, so a rebuild reuses every vector of the embedding cache.
"""
from __future__ import annotations

import re
from pathlib import Path

# Mathlib's lists of named results and topics (docs/ of the project), each mapping a title to decls
ALIAS_FILES = ("100.yaml", "1000.yaml", "overview.yaml", "undergrad.yaml")
# the kinds whose docstring describes a concept other declarations' statements mention
DEFINITION_KINDS = frozenset({"def", "abbrev", "structure", "class", "inductive", "opaque"})
VALUE_CHARS = 240
FIELDS_CHARS = 320
GLOSS_CHARS = 160
CONTEXT_DEFINITIONS = 4
# a definition whose name ends this many signatures (``Finset.card``, ``Real``) says nothing particular
# about any one of them: it is not glossed
UBIQUITOUS = 1500

_DECL = re.compile(r"^[^\W\d][\w'!?.«»]*$")
# a full stop after two word characters ends a sentence ("e.g." and "a.k.a." do not)
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]$`][a-z0-9)\]$`])\.(?:\s|$)")
_TOKEN = re.compile(r"[^\W\d][\w'!?]*")
_MATH = re.compile(r"\$+([^$]*)\$+")


def _title(text: str) -> str:
    """A title from the yaml lists as words: ``"$p$-adic number"`` -> ``p-adic number``."""
    return " ".join(_MATH.sub(r"\1", str(text)).replace("`", "").split())


def _decls(value) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [str(x).strip() for x in items if isinstance(x, str) and _DECL.match(str(x).strip())]


def _walk_topics(node, out: dict[str, list[str]]) -> None:
    """overview.yaml / undergrad.yaml: nested sections whose leaves map a topic to a declaration."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if isinstance(value, dict):
            _walk_topics(value, out)
        elif isinstance(value, (str, list)):
            for decl in _decls(value):
                out.setdefault(decl, []).append(_title(key))


def read_alias_files(docs: Path) -> dict[str, list[str]]:
    """declaration full name -> titles, from the alias lists in ``docs`` (a project's ``docs/`` folder;
    missing files and entries that do not parse are skipped: the lists are optional documentation)."""
    out: dict[str, list[str]] = {}
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml comes with the build extra
        return out
    for name in ALIAS_FILES:
        path = docs / name
        if not path.is_file():
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, yaml.YAMLError):
            continue
        if not isinstance(data, dict):
            continue
        if name in ("100.yaml", "1000.yaml"):
            for entry in data.values():
                if not isinstance(entry, dict) or not entry.get("title"):
                    continue
                for decl in _decls(entry.get("decl")) + _decls(entry.get("decls") or []):
                    out.setdefault(decl, []).append(_title(entry["title"]))
        else:
            _walk_topics(data, out)
    return out


def alias_table(roots: list[Path]) -> dict[str, list[str]]:
    """The alias lists of every source tree (``<tree>/docs``), merged, each title once per declaration."""
    merged: dict[str, list[str]] = {}
    for root in roots:
        for decl, titles in read_alias_files(Path(root) / "docs").items():
            have = merged.setdefault(decl, [])
            have.extend(t for t in titles if t and t not in have)
    return merged


def stacks_aliases(bundle: Path | None) -> dict[str, str]:
    """Stacks tag -> "name. slogan. section" from a bundle indexing the Stacks Project (its
    ``meta/documents.parquet``); empty when there is none."""
    if bundle is None:
        return {}
    meta = Path(bundle) / "meta" / "documents.parquet"
    if not meta.is_file():
        return {}
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    cols = [c for c in ("id", "name", "slogan", "title") if c in pq.read_schema(meta).names]
    if "id" not in cols:
        return {}
    table = pq.read_table(meta, columns=cols)
    table = table.filter(pc.starts_with(table["id"], "stacks:"))
    out = {}
    for row in table.to_pylist():
        section = str(row.get("title") or "").rpartition(" > ")[2]
        words = [str(row.get(c) or "").strip() for c in ("name", "slogan")] + [section.strip()]
        out[row["id"].removeprefix("stacks:")] = ". ".join(dict.fromkeys(w for w in words if w))
    return out


def first_sentence(docstring: str, limit: int = GLOSS_CHARS) -> str:
    """The docstring's first sentence (up to ``limit`` characters, cut at a word)."""
    text = " ".join(docstring.split())
    m = _SENTENCE_END.search(text)
    if m:
        text = text[:m.start() + 1]
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " ..."
    return text


def definition_value(masked_tail: str) -> str:
    """A ``def``'s value from the text after its header (comments and strings already blanked):
    the term after ``:=`` or the ``where`` block, whitespace collapsed, abbreviated; empty for a
    tactic block (``:= by``), whose text says how, not what."""
    text = " ".join(masked_tail.split())
    if text.startswith(":="):
        text = text[2:].lstrip()
        if text.startswith("by ") or text == "by":
            return ""
    elif not (text.startswith("where ") or text.startswith("| ")):
        return ""
    text = re.split(r"\s(?:termination_by|decreasing_by|deriving)\s", " " + text + " ", maxsplit=1)[0].strip()
    if len(text) > VALUE_CHARS:
        text = text[:VALUE_CHARS].rsplit(" ", 1)[0] + " ..."
    return text


def structure_fields(parts: dict | None) -> str:
    """A structure's or class's fields as ``name : type`` (abbreviated), for the context field."""
    fields = (parts or {}).get("fields") or []
    text = "; ".join(f"{f['name']} : {' '.join(str(f.get('type') or '').split())}".rstrip(" :")
                     for f in fields)
    if len(text) > FIELDS_CHARS:
        text = text[:FIELDS_CHARS].rsplit(" ", 1)[0] + " ..."
    return text


# ``notation "∑' " ... => tsum``, ``notation3 "∫⁻ "(...)", "r:60:(scoped f => f)" ∂"μ:70 => lintegral μ r``,
# ``infixl:65 " +ᵥ " => HVAdd.hVAdd``: the atom (first string) and the head (first identifier after the
# last ``=>``). Read from the raw text at a command the mask left in place (not inside a comment).
_NOTATION = re.compile(r'^(?:@\[[^\]\n]*\]\s*)?(?:(?:scoped(?:\[[\w.]+\])?|local)\s+)?(?:notation3?|infixl?|infixr|prefix|postfix)\b'
                       r'[^\n]*(?:\n[ \t]+[^\n]*)*', re.M)
_ATOM = re.compile(r'"\s*([^"\s][^"]*?)\s*"')
_HEAD = re.compile(r"=>\s*(?:@)?(?!fun\b)([^\W\d][\w'!?.]*)")
# the logic and order symbols every statement uses: their heads (Membership.mem, LE.le...) describe
# nothing about a particular declaration
COMMON_ATOMS = frozenset("∈ ∉ → ↔ ≤ ≥ < > ≠ ∧ ∨ ¬ ∀ ∃ ⁻¹ • ∘ × ⊆ ⊂ ∩ ∪ ∣ ⊔ ⊓ ⊤ ⊥ ∅ ᶜ = + * - / ^ ∑ ∏ ‖".split())
NOTATIONS_PER_DECLARATION = 3


def scan_notations(text: str, masked: str, rel: str, extras: dict) -> None:
    """Notation commands of one file as ``extras["notation_heads"]`` entries ``(atom, head, rel)``:
    an atom with a character outside ASCII that is not one of ``COMMON_ATOMS``."""
    for m in _NOTATION.finditer(text):
        if masked[m.start():m.start() + 3] != text[m.start():m.start() + 3]:
            continue  # inside a comment or a string
        cmd = m.group()
        am = _ATOM.search(cmd)
        heads = list(_HEAD.finditer(cmd))
        if not am or not heads:
            continue
        atom = am.group(1).strip()
        if atom in COMMON_ATOMS or atom.isascii():
            continue
        extras.setdefault("notation_heads", []).append((atom, heads[-1].group(1), rel))


def _name_parts(signature: str) -> dict[str, int]:
    """Each name component of a signature's identifiers (``n.divisors`` -> n, divisors) at its first position."""
    order: dict[str, int] = {}
    for m in _TOKEN.finditer(signature):
        for part in m.group().split("."):
            order.setdefault(part, m.start())
    return order


class DefinitionGlossary:
    """The definitions a statement mentions, in words: ``gloss(signature, dependencies)`` gives, for up
    to ``CONTEXT_DEFINITIONS`` definitions among ``dependencies`` whose last name component occurs in
    the signature (in order of first occurrence), ``"<name words>: <docstring's first sentence>"``."""

    def __init__(self, decls: list[dict], split_words) -> None:
        self.split_words = split_words
        self.gloss_of: dict[str, str] = {}
        self.notation: dict[str, str] = {}  # atom -> definition (add_notations)
        self._atoms: list[str] = []         # its atoms, longest first
        seen_in: dict[str, int] = {}  # name component -> how many signatures hold it
        for d in decls:
            for part in _name_parts(d.get("signature") or ""):
                seen_in[part] = seen_in.get(part, 0) + 1
        for d in decls:
            full = d.get("full")
            if full and d["kind"] in DEFINITION_KINDS and seen_in.get(full.rsplit(".", 1)[-1], 0) <= UBIQUITOUS:
                self.gloss_of[full] = first_sentence(d.get("docstring") or "")

    def add_notations(self, entries, resolver) -> None:
        """The project's notation (``scan_notations``): atom -> the definition it stands for, when its
        head resolves (from the root namespace) to a definition of the project."""
        by_last: dict[str, list[str]] = {}
        for full in self.gloss_of:
            by_last.setdefault(full.rsplit(".", 1)[-1], []).append(full)
        for atom, head, rel in entries:
            if atom in self.notation:
                continue
            full = head if head in self.gloss_of else next(
                (n for n in resolver.resolve(head, resolver.context("", (), rel)) if n in self.gloss_of), None)
            if full is None:  # written inside its namespace: the one definition of that last name, if one
                tail = head.rsplit(".", 1)[-1]
                same = [n for n in by_last.get(tail, ()) if n.endswith("." + head) or n == head]
                full = same[0] if len(same) == 1 else None
            if full:
                self.notation[atom] = full
        self._atoms = sorted(self.notation, key=len, reverse=True)

    def notation_gloss(self, signature: str) -> list[tuple[int, str]]:
        """(position, definition) for the project's notation in ``signature`` (a longer atom hides
        the shorter ones inside it), at most ``NOTATIONS_PER_DECLARATION`` definitions."""
        found: list[tuple[int, str]] = []
        taken: list[tuple[int, int]] = []
        for atom in self._atoms:
            at = signature.find(atom)
            if at < 0 or any(a <= at < b for a, b in taken):
                continue
            taken.append((at, at + len(atom)))
            full = self.notation[atom]
            if all(full != f for _, f in found):
                found.append((at, full))
            if len(found) == NOTATIONS_PER_DECLARATION:
                break
        return found

    def gloss(self, signature: str, dependencies: list[str]) -> str:
        if not signature:
            return ""
        order = _name_parts(signature)
        found = []
        for dep in dependencies:
            if dep not in self.gloss_of:
                continue
            at = order.get(dep.rsplit(".", 1)[-1])
            if at is not None:
                found.append((at, dep))
        named = {dep for _, dep in found}
        found += [(at, full) for at, full in self.notation_gloss(signature) if full not in named]
        parts = []
        for _, dep in sorted(found)[:CONTEXT_DEFINITIONS]:
            words = self.split_words(dep)
            sentence = self.gloss_of[dep]
            parts.append(f"{words}: {sentence}" if sentence else words)
        return " ".join(p if p.endswith((".", "...")) else p + "." for p in parts)
