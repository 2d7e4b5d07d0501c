"""verify_formal: check a Lean 4 proof or snippet with the real Lean kernel, sandboxed, or say why not.

Three steps, one module each:

* ``scan.py`` reads the caller's text before any process runs: ``sorry``/``admit`` outside
  comments and strings (a sorried proof is REFUTED), a pasted ``theorem NAME BINDERS : TYPE``
  header (read, or a usage error), a statement that is not one term (top-level ``:=``, unbalanced
  brackets: usage errors), commands hidden in a statement or proof (refused: UNDETERMINED);
* ``layout.py`` writes the Lean file (imports hoisted, statement and proof fenced in parentheses,
  ``#print axioms`` after) and maps Lean's positions back to the caller's lines;
* ``lean_runner.py`` finds a toolchain and runs it in a throwaway directory with limits;
* ``verdict.py`` turns the output into a verdict (pure; tested on recorded real Lean output).

Without a toolchain every call is UNDETERMINED with how to install one; never a fake pass.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from mathlas.checks import number
from mathlas.errors import UsageError

from . import layout as lay
from . import scan
from .verdict import Decision, LeanMessage, decide_proof, decide_snippet

MAX_CHARS = 200_000
MAX_TIMEOUT_S = 600.0
OUTPUT_KEPT = 20_000
CAVEAT = ("A successful check proves that the Lean text is well-typed in this Lean environment (for a proof: "
          "that it proves exactly this Lean statement from propext, Classical.choice and Quot.sound). It does not "
          "prove that the Lean statement says what your problem says, nor that the theorem applies to your "
          "problem: compare its hypotheses and definitions with the problem yourself.")


@dataclass
class FormalResult:
    """The outcome of ``verify_formal``. ``status`` repeats ``proof_status`` (VERIFIED_PROOF,
    REFUTED, UNDETERMINED) or ``snippet_status`` (TYPECHECKS, INCOMPLETE, FAILS, UNDETERMINED);
    ``stage`` says where it was decided (scan: before Lean ran; toolchain: none found; lean).
    ``errors`` carry Lean's messages verbatim with their place in your text (``region``,
    ``region_line``, ``region_column``); ``source`` is the exact file Lean checked; ``header`` says
    how a statement pasted as ``theorem NAME BINDERS : TYPE`` was read (None when it was a type)."""

    mode: str
    status: str
    proof_status: str | None
    snippet_status: str | None
    reason: str
    stage: str
    errors: list[LeanMessage] = field(default_factory=list)
    warnings: list[LeanMessage] = field(default_factory=list)
    axioms: list[str] | None = None
    nonstandard_axioms: list[str] = field(default_factory=list)
    declared_axioms: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    source: str = ""
    toolchain: str | None = None
    sandbox: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    output: str = ""
    install_hint: str | None = None
    header: str | None = None
    caveat: str = CAVEAT


# ------------------------------------------------------------------------------ input


def _text(name: str, value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a string of Lean 4 source, got {type(value).__name__}")
    if "\x00" in value:
        raise UsageError(f"{name} contains a NUL character")
    if len(value) > MAX_CHARS:
        raise UsageError(f"{name} is longer than {MAX_CHARS} characters")
    if not value.strip():
        raise UsageError(f"{name} is empty")
    return value


def _imports(imports: object) -> list[str]:
    if imports is None:
        return []
    if isinstance(imports, str):
        items = [w for w in re.split(r"[\s,;]+", imports) if w and w != "import"]
    elif isinstance(imports, (list, tuple)) and all(isinstance(x, str) for x in imports):
        items = [w for x in imports for w in x.replace("import ", " ").split() if w]
    else:
        raise UsageError("imports must be a list of module names, e.g. [\"Mathlib\"], or one string")
    for name in items:
        if not scan.valid_module(name):
            raise UsageError(f"not a Lean module name in imports: {name!r} (e.g. Mathlib.Data.Nat.Prime.Basic)")
    return items


def _timeout(timeout_s: object) -> float:
    return number(timeout_s, "timeout_s (seconds)", minimum=1, maximum=MAX_TIMEOUT_S)


def _dedupe(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _strip_assign(proof: str) -> str:
    """A proof given as ``:= by simp`` loses its ``:=`` (the file writes its own)."""
    m = re.match(r"\s*:=(?!=)", proof)
    return proof[m.end():] if m else proof


def _scan_messages(region: str, problems: list[str]) -> list[LeanMessage]:
    out = []
    for p in problems:
        m = re.search(r"line (\d+), column (\d+)", p) or re.search(r"line (\d+)", p)
        line = int(m.group(1)) if m else None
        col = int(m.group(2)) if m and m.lastindex and m.lastindex >= 2 else None
        out.append(LeanMessage("error", p, region=region, region_line=line, region_column=col))
    return out


# ------------------------------------------------------------------------------ the tool


def verify_formal(statement: str | None = None, proof: str | None = None, snippet: str | None = None,
                  imports: list[str] | str | None = None, timeout_s: float = 60.0) -> FormalResult:
    """Check Lean 4 with its kernel (needs a toolchain). Proof mode (statement, proof):
    VERIFIED_PROOF, REFUTED (Lean's errors, on your lines) or UNDETERMINED. Snippet mode (a whole
    file): TYPECHECKS, INCOMPLETE (sorry), FAILS or UNDETERMINED. Well-typed is not applicable: see `caveat`.

    Args:
        statement: the type, e.g. "∀ a b : ℕ, a + b = b + a"; a "theorem t (…) :" before it is read.
        proof: a term or tactic block, e.g. "by omega".
        snippet: instead: a whole Lean file.
        imports: e.g. ["Mathlib"].
        timeout_s: seconds.
    """
    started = time.monotonic()
    statement, proof, snippet = _text("statement", statement), _text("proof", proof), _text("snippet", snippet)
    if snippet is not None and (statement is not None or proof is not None):
        raise UsageError("give either snippet, or statement and proof, not both")
    if snippet is None and (statement is None or proof is None):
        raise UsageError("give statement and proof (proof mode), or snippet (snippet mode)")
    timeout = _timeout(timeout_s)
    extra = _imports(imports)
    if snippet is not None:
        return _snippet(snippet, extra, timeout, started)
    return _proof(statement, proof, extra, timeout, started)


def _result(mode: str, status: str, reason: str, stage: str, started: float, **kw) -> FormalResult:
    return FormalResult(mode=mode, status=status, proof_status=status if mode == "proof" else None,
                        snippet_status=status if mode == "snippet" else None, reason=reason, stage=stage,
                        elapsed_s=round(time.monotonic() - started, 3), **kw)


def _run(source: str, timeout: float):
    from .lean_runner import find_toolchain, run_lean

    tc, why = find_toolchain()
    if tc is None:
        return None, why, None
    return run_lean(tc, source, timeout), "", tc


def _from_decision(mode: str, d: Decision, run, tc, started: float, **kw) -> FormalResult:
    output = run.output if len(run.output) <= OUTPUT_KEPT else "[...]\n" + run.output[-OUTPUT_KEPT:]
    return _result(mode, d.status, d.reason, "lean", started, errors=d.errors, warnings=d.warnings,
                   axioms=d.axioms, nonstandard_axioms=d.nonstandard_axioms or [], toolchain=tc.describe(),
                   sandbox=run.isolation, output=output, **kw)


def _proof(statement: str, proof: str, extra: list[str], timeout: float, started: float) -> FormalResult:
    st_mods, statement, st_imp = scan.split_imports(statement)
    pr_mods, proof, pr_imp = scan.split_imports(_strip_assign(proof))
    imports = _dedupe(extra + st_mods + pr_mods)
    if not statement.strip() or not proof.strip():
        raise UsageError("statement and proof must hold more than import lines")
    if st_imp or pr_imp:
        raise UsageError("; ".join(st_imp + pr_imp))
    pasted = scan.tokenize(statement)
    binders, statement, header_problem = scan.split_header(statement, pasted)
    if header_problem:
        raise UsageError(header_problem)
    kw: dict = {"imports": imports}
    if binders or pasted.tokens and pasted.tokens[0].text in scan.DECLARATION_WORDS:
        head = [t.text for t in pasted.tokens[:1 if pasted.tokens[0].text == "example" else 2]]
        kw["header"] = (f"read `{' '.join(head)}` as a header: "
                        + (f"binders `{' '.join(binders.split())}` on the checked theorem, " if binders else "")
                        + "the type after `:` as the statement")
    st_scan, pr_scan, bd_scan = scan.tokenize(statement), scan.tokenize(proof), scan.tokenize(binders)
    # Input that is not shaped as asked (a statement that is not one type, brackets that do not
    # close) is the caller's mistake, not a judgement on the proof: a usage error with the fix.
    shape = scan.statement_shape_problems(st_scan) + [f"proof: {p}" for p in pr_scan.problems]
    if shape:
        raise UsageError(shape[0])
    layout = lay.proof_file(statement, proof, imports, binders)
    # Commands and code-running terms are refused unread: nothing about the proof was established.
    refused = (_scan_messages("statement", scan.command_problems(bd_scan) + scan.command_problems(st_scan)
                              + [f"{s}: a statement with sorry leaves nothing definite to prove"
                                 for s in scan.sorry_uses(bd_scan) + scan.sorry_uses(st_scan)])
               + _scan_messages("proof", scan.command_problems(pr_scan)))
    if refused:
        return _result("proof", "UNDETERMINED", "refused before Lean ran: " + refused[0].text, "scan", started,
                       errors=refused, source=layout.source, **kw)
    # sorry/admit in the proof's code: the proof is not complete, certainly (Lean says the same).
    sorries = scan.sorry_uses(pr_scan)
    if sorries:
        errors = [LeanMessage("error", f"{s} (proof): a proof with sorry/admit is not a proof", region="proof")
                  for s in sorries]
        return _result("proof", "REFUTED", "the proof uses sorry (seen before Lean ran): " + errors[0].text,
                       "scan", started, errors=errors, source=layout.source, **kw)
    run, why, tc = _run(layout.source, timeout)
    if run is None:
        return _result("proof", "UNDETERMINED", why.split(". ")[0], "toolchain", started,
                       source=layout.source, install_hint=why, **kw)
    kw["source"] = layout.source
    d = decide_proof(run.output, run.returncode, file_name=run.file_name, layout=layout,
                     timed_out=run.timed_out, timeout_s=timeout)
    return _from_decision("proof", d, run, tc, started, **kw)


def _snippet(snippet: str, extra: list[str], timeout: float, started: float) -> FormalResult:
    mods, body, imp_problems = scan.split_imports(snippet)
    imports = _dedupe(extra + mods)
    if imp_problems:
        raise UsageError("; ".join(imp_problems))
    sc = scan.tokenize(body)
    layout = lay.snippet_file(body, imports)
    declared = scan.declared_axioms(sc)
    if scan.has_exit(sc):
        return _result("snippet", "UNDETERMINED", "refused before Lean ran: `#exit` stops Lean, so what follows it "
                       "would go unchecked; remove it", "scan", started, imports=imports, source=layout.source,
                       declared_axioms=declared)
    run, why, tc = _run(layout.source, timeout)
    if run is None:
        return _result("snippet", "UNDETERMINED", why.split(". ")[0], "toolchain", started, imports=imports,
                       source=layout.source, install_hint=why, declared_axioms=declared)
    d = decide_snippet(run.output, run.returncode, file_name=run.file_name, layout=layout,
                       timed_out=run.timed_out, timeout_s=timeout)
    uses = scan.sorry_uses(sc)
    if d.status == "TYPECHECKS" and uses:  # e.g. `set_option warn.sorry false`: the scan still sees it
        d.status, d.reason = "INCOMPLETE", f"typechecks only with sorry: {uses[0]}"
    if d.status == "TYPECHECKS" and declared:
        d.reason += f"; the snippet declares axioms ({', '.join(declared)}): a typecheck does not make them true"
    return _from_decision("snippet", d, run, tc, started, imports=imports, source=layout.source,
                          declared_axioms=declared)


__all__ = ["verify_formal", "FormalResult", "LeanMessage", "CAVEAT"]
