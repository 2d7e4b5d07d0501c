"""The Lean file ``verify_formal`` writes, and the map from its lines back to the caller's text.

Proof mode::

    import Mathlib                      <- every hoisted or requested import, in order, once
    <blank>
    set_option autoImplicit false       <- an unknown name in the statement is an error, never
    set_option relaxedAutoImplicit false   silently a new universally quantified variable
    <blank>
    theorem _mathlas_check : (         <- binders of a pasted `theorem t (a : Nat) : ...` header go before ` : (`
        <statement, each line indented by 4>
      ) := (
        <proof, each line indented by 4: tactic blocks keep their relative layout>
      )
    <blank>
    #print axioms _mathlas_check

The parentheses are the fence: both texts have balanced brackets (``scan.py``), so nothing in them
can end the theorem early: a smuggled ``axiom foo : False`` or ``#exit`` on its own line is a parse
error inside the parentheses, never a command (Lean 4 does not end a command at column 0, so
indentation alone would not do). Snippet mode writes the hoisted imports, then the snippet as it is.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

THEOREM = "_mathlas_check"
INDENT = 4


@dataclass
class Region:
    """Lines ``first..last`` (1-based, inclusive) of the file hold the caller's ``name`` text;
    file line = text line + ``line_offset``, file column = text column + ``shift``."""

    name: str
    first: int
    last: int
    line_offset: int
    shift: int = 0


@dataclass
class Layout:
    """A generated Lean file and where each part of it came from."""

    source: str
    imports: list[str]
    header_last: int                     # lines 1..header_last are the import header
    regions: list[Region] = field(default_factory=list)
    check_line: int | None = None        # the `#print axioms` line (proof mode)

    def locate(self, line: int, col: int) -> tuple[str, int | None, int | None]:
        """(region, line, column) of a file position in the caller's own text; "imports" for the
        header, "check" for the ``#print axioms`` line, "wrapper" for the theorem's own lines
        (``theorem _mathlas_check : (``...): an error there is about the theorem."""
        if line <= self.header_last:
            return "imports", None, None
        for r in self.regions:
            if r.first <= line <= r.last:
                return r.name, line - r.line_offset, max(col - r.shift, 0)
        if self.check_line is not None and line >= self.check_line:
            return "check", None, None
        return "wrapper", None, None


def _indented(text: str) -> tuple[list[str], int]:
    """The text's lines, common indentation removed, then indented by ``INDENT``; and the column
    shift from the caller's columns to the file's."""
    lines = text.strip("\n").split("\n")
    dedented = textwrap.dedent("\n".join(lines)).split("\n")
    removed = 0
    for a, b in zip(lines, dedented):
        if b.strip():
            removed = len(a) - len(b)
            break
    return [(" " * INDENT + ln) if ln.strip() else "" for ln in dedented], INDENT - removed


def _header(imports: list[str]) -> list[str]:
    return [f"import {m}" for m in imports]


def proof_file(statement: str, proof: str, imports: list[str], binders: str = "") -> Layout:
    """The proof-mode file for an already scanned statement and proof. ``binders`` (from a pasted
    ``theorem NAME BINDERS : TYPE``, see ``scan.split_header``: balanced bracket groups, no comment)
    go on the theorem's own line(s), where the proof sees their names as the caller's header did."""
    head = _header(imports)
    lines = head + ([""] if head else []) + [
        "set_option autoImplicit false", "set_option relaxedAutoImplicit false", ""]
    lines += f"theorem {THEOREM}{' ' + binders if binders else ''} : (".split("\n")
    regions = []
    for name, text, closing in (("statement", statement, "  ) := ("), ("proof", proof, "  )")):
        body, shift = _indented(text)
        first = len(lines) + 1
        skipped = len(text) - len(text.lstrip("\n"))  # blank lines _indented dropped in front
        lines += body
        regions.append(Region(name, first, len(lines), first - 1 - skipped, shift))
        lines.append(closing)
    lines += ["", f"#print axioms {THEOREM}", ""]
    return Layout("\n".join(lines), list(imports), header_last=len(head), regions=regions,
                  check_line=len(lines) - 1)


def snippet_file(snippet: str, imports: list[str]) -> Layout:
    """The snippet-mode file: hoisted imports, then the snippet with its own line numbers kept."""
    head = _header(imports)
    lines = head + snippet.split("\n")
    return Layout("\n".join(lines) + ("" if snippet.endswith("\n") else "\n"), list(imports),
                  header_last=len(head), regions=[Region("snippet", len(head) + 1, len(lines), len(head))])
