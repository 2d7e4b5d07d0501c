"""From Lean's output to a verdict: pure functions, no process, tested on recorded real outputs.

``lean FILE`` prints one message per diagnostic. Errors and warnings start with a position::

    Check.lean:12:4: error: unsolved goals            (older Lean; also with an end position:)
    Check.lean:12:4-12:9: error(lean.unknownIdentifier): Unknown identifier `x`
    Check.lean:9:8: warning: declaration uses 'sorry'  ("uses `sorry`", "declaration `x` uses `sorry`")

and may continue on the following lines. Information messages (``#print axioms``) are printed
bare by most versions (``'_mathlas_check' depends on axioms: [propext]``) and with a
``FILE:L:C: info:`` prefix by some; both are read. ``decide_proof`` then applies the rules of
``docs/verify_formal.md``: time-out, unresolved import or a process that died -> UNDETERMINED;
any error -> REFUTED with the messages verbatim; a sorry warning, a missing or doubled axioms
report, or an axiom outside propext / Classical.choice / Quot.sound -> not VERIFIED.
"""
from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from .layout import THEOREM, Layout

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
SORRY_WARNING = re.compile(r"declaration (?:`[^`]*` )?uses (?:'sorry'|`sorry`)")
# messages (from Lean's source: src/Lean/Util/Path.lean, Lake) meaning "this environment lacks a module"
# (at the start of a message: a proof's own error text cannot pass for one by quoting these words)
IMPORT_FAILURE = re.compile(r"\s*(?:unknown module prefix|unknown package|object file .* does not exist|"
                            r"could not resolve import|file not found|failed to read file)", re.I)
_SEVERITIES = "error|warning|info|information"


@dataclass
class LeanMessage:
    """One message of Lean's output. ``line``/``column`` are positions in the file Lean checked
    (1-based line, 0-based column); ``region`` says which part of the caller's input they fall in
    (statement, proof, snippet, imports, check for lines the tool wrote, or output for messages
    without a position) and ``region_line``/``region_column`` the position inside that text."""

    severity: str
    text: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    region: str = "output"
    region_line: int | None = None
    region_column: int | None = None


@dataclass
class Decision:
    """What the output says: ``status`` and a one-line ``reason``; ``axioms`` as reported for the
    checked theorem (None when there was no single report)."""

    status: str
    reason: str
    errors: list[LeanMessage]
    warnings: list[LeanMessage]
    axioms: list[str] | None = None
    nonstandard_axioms: list[str] | None = None


def parse_messages(output: str, file_name: str, layout: Layout | None = None) -> list[LeanMessage]:
    """The messages of ``output`` for ``file_name`` (the path exactly as passed to Lean).

    A line starting ``file_name:L:C[-L:C]: severity[(code)]:`` opens a message; the lines after it
    until the next such line belong to it. Text before the first header, and lines that are
    neither, are kept as ``info`` messages without a position (bare ``#print`` output)."""
    head = re.compile(r"^%s:(\d+):(\d+)(?:-(\d+):(\d+))?: (%s)(?:\([^)]*\))?:[ ]?(.*)$"
                      % (re.escape(file_name), _SEVERITIES))
    bare_head = re.compile(r"^(error|warning|info): (.*)$")  # Lake / the driver, no position
    msgs: list[LeanMessage] = []
    cur: LeanMessage | None = None
    for line in output.split("\n"):  # only "\n" ends a line, as for Lean and for axiom_reports
        line = line.rstrip("\r")
        m = head.match(line)
        if m:
            sev = "info" if m.group(5) == "information" else m.group(5)
            cur = LeanMessage(sev, m.group(6), int(m.group(1)), int(m.group(2)),
                              int(m.group(3)) if m.group(3) else None, int(m.group(4)) if m.group(4) else None)
            if layout is not None:
                cur.region, cur.region_line, cur.region_column = layout.locate(cur.line, cur.column)
            msgs.append(cur)
            continue
        b = bare_head.match(line)
        if b:
            cur = LeanMessage(b.group(1), b.group(2))
            msgs.append(cur)
            continue
        if cur is None:
            if not line.strip():
                continue
            cur = LeanMessage("info", line)
            msgs.append(cur)
        else:
            cur.text += "\n" + line
    for msg in msgs:
        msg.text = msg.text.rstrip("\n")
    return msgs


def axiom_reports(output: str, name: str = THEOREM) -> list[list[str] | None]:
    """Every ``#print axioms`` report for ``name`` in the output: the axiom list ([] for "does not
    depend on any axioms"); None for a report whose list cannot be read."""
    pat = re.compile(r"^(?:\S*:\d+:\d+(?:-\d+:\d+)?: info: |info: (?:\S*:\d+:\d+: )?)?'%s' (?:(does not depend on any axioms)|depends on axioms: \[([^\]]*)(\]?))"
                     % re.escape(name), re.M)
    out: list[list[str] | None] = []
    for m in pat.finditer(output):
        if m.group(1):
            out.append([])
            continue
        body = m.group(2)
        if not m.group(3):  # the list wrapped over lines: read on to the closing bracket
            end = output.find("]", m.end())
            body = output[m.start(2):end] if end >= 0 else None
        if body is None:
            out.append(None)
            continue
        items = [a.strip() for a in body.replace("\n", " ").split(",") if a.strip()]
        ok = all(re.fullmatch(r"[^\s,\[\]']+", a) for a in items)
        out.append(items if ok else None)
    return out


def _killed(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    why = {"SIGKILL": " (memory limit, or killed)", "SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (output size limit)",
           "SIGSEGV": " (crashed: stack or memory limit?)", "SIGABRT": " (aborted: out of memory?)"}.get(name, "")
    return f"Lean was stopped by {name}{why}"


def _common(output: str, returncode: int | None, timed_out: bool, timeout_s: float | None,
            file_name: str, layout: Layout | None):
    """Messages, errors, warnings, and an UNDETERMINED reason when the run itself says nothing."""
    msgs = parse_messages(output, file_name, layout)
    errors = [m for m in msgs if m.severity == "error"]
    warnings = [m for m in msgs if m.severity == "warning"]
    if timed_out:
        limit = f" of {timeout_s:g} s" if timeout_s else ""
        return msgs, errors, warnings, f"time-out: Lean did not finish within the limit{limit}"
    failed_imports = [e for e in errors if e.region == "imports" or IMPORT_FAILURE.match(e.text)]
    if failed_imports:
        first = failed_imports[0].text.splitlines()[0] if failed_imports[0].text else ""
        return msgs, errors, warnings, ("an import cannot be resolved in this Lean environment: " + first
                                        + " (run inside a Lake project that has it, or set MATHLAS_LEAN)")
    killed = _killed(returncode)
    if killed and not errors:
        return msgs, errors, warnings, killed
    positioned = [e for e in errors if e.line is not None]
    if (returncode not in (0, None) or errors) and not positioned:
        tail = (errors[0].text if errors else output.strip()).splitlines()[-1:] or ["no output"]
        return msgs, errors, warnings, (f"Lean failed without a message about the file (exit code {returncode}): "
                                        + tail[0][:300])
    if positioned and all(e.region == "check" for e in positioned):
        return msgs, errors, warnings, "the tool's own check command failed: " + positioned[0].text.splitlines()[0][:300]
    return msgs, errors, warnings, None


def _errors_summary(errors: list, with_region: bool) -> str:
    """"Lean reports N error(s); first (where): <its first line>"."""
    first = errors[0]
    where = "" if not first.region_line else (
        f" ({first.region} line {first.region_line})" if with_region else f" (line {first.region_line})")
    return f"Lean reports {len(errors)} error(s); first{where}: " + first.text.splitlines()[0][:300]


def decide_proof(output: str, returncode: int | None, *, file_name: str, layout: Layout | None = None,
                 timed_out: bool = False, timeout_s: float | None = None, theorem: str = THEOREM) -> Decision:
    """The verdict on a proof-mode run: VERIFIED_PROOF, REFUTED or UNDETERMINED."""
    _, errors, warnings, undetermined = _common(output, returncode, timed_out, timeout_s, file_name, layout)
    if undetermined:
        return Decision("UNDETERMINED", undetermined, errors, warnings)
    if errors:
        return Decision("REFUTED", _errors_summary(errors, True), errors, warnings)
    reports = axiom_reports(output, theorem)
    sorry = [w for w in warnings if SORRY_WARNING.search(w.text)]
    if sorry:
        return Decision("REFUTED", "the proof uses `sorry` (Lean: " + sorry[0].text.splitlines()[0] + ")",
                        errors, warnings, reports[0] if len(reports) == 1 else None)
    if len(reports) != 1 or reports[0] is None:
        how = "no" if not reports else ("an unreadable" if len(reports) == 1 else f"{len(reports)}")
        return Decision("UNDETERMINED", f"Lean printed {how} `#print axioms` report(s) for {theorem} "
                        "where exactly one readable report is required", errors, warnings)
    axioms = reports[0]
    extra = [a for a in axioms if a not in STANDARD_AXIOMS]
    if extra:
        if "sorryAx" in extra:
            why = "the proof depends on sorryAx (a `sorry`, possibly hidden)"
        elif any(a.startswith("Lean.ofReduceBool") or a.startswith("Lean.trustCompiler") for a in extra):
            why = "the proof trusts the compiler (native_decide: Lean.ofReduceBool / Lean.trustCompiler)"
        else:
            why = "the proof depends on axioms outside the standard three"
        return Decision("REFUTED", f"{why}: {', '.join(extra)}", errors, warnings, axioms, extra)
    return Decision("VERIFIED_PROOF", "the Lean kernel accepted the proof; axioms: "
                    + (", ".join(axioms) if axioms else "none"), errors, warnings, axioms, [])


def decide_snippet(output: str, returncode: int | None, *, file_name: str, layout: Layout | None = None,
                   timed_out: bool = False, timeout_s: float | None = None) -> Decision:
    """The verdict on a snippet run: TYPECHECKS, INCOMPLETE (only thanks to sorry), FAILS or UNDETERMINED."""
    _, errors, warnings, undetermined = _common(output, returncode, timed_out, timeout_s, file_name, layout)
    if undetermined:
        return Decision("UNDETERMINED", undetermined, errors, warnings)
    if errors:
        return Decision("FAILS", _errors_summary(errors, False), errors, warnings)
    sorry = [w for w in warnings if SORRY_WARNING.search(w.text)]
    if sorry:
        return Decision("INCOMPLETE", f"typechecks only with `sorry` ({len(sorry)} declaration(s))", errors, warnings)
    return Decision("TYPECHECKS", "no errors and no sorry", errors, warnings)
