"""verify_formal: the source scan, the file layout, the verdict on recorded real Lean output, the
sandboxed runner, the CLI, and (where a Lean toolchain exists) the real kernel.

Where verdicts come from: ``tests/data/lean4/`` holds outputs and message texts recorded by the
Lean 4 test suite (see its README for repository, path and commit of each). No Lean output in
this file is written by hand.

The runner tests need a process to run. This machine has no Lean, so they point ``MATHLAS_LEAN``
at ``FAKE_LEAN`` below: a STAND-IN FOR THE BINARY ONLY. It replays one recorded real output with
the recorded file name replaced by the path it was given, exits with the code the test names, and
can sleep or note what it saw (its file, argv, cwd, limits, network interfaces). It judges
nothing; it exercises the real subprocess plumbing: discovery, the throwaway directory, the
limits, the time-out kill, the file layout Lean would receive.

The tests marked ``needs_lean`` run the real kernel and are skipped where no toolchain is found.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from mathlas.errors import UsageError
from mathlas.tools.lean_check import CAVEAT, verify_formal
from mathlas.tools.lean_check import layout as lay
from mathlas.tools.lean_check import scan
from mathlas.tools.lean_check.lean_runner import FILE_NAME, find_toolchain, run_lean
from mathlas.tools.lean_check.verdict import (SORRY_WARNING, STANDARD_AXIOMS, axiom_reports, decide_proof,
                                          decide_snippet, parse_messages)

DATA = Path(__file__).parent / "data" / "lean4"
LEAN_TESTS = DATA / "tests" / "lean"


def recorded(name: str) -> str:
    return (LEAN_TESTS / name).read_text(encoding="utf-8")


def guard_messages(path: Path) -> list[str]:
    """The message texts a `#guard_msgs` docstring expects, e.g. "info: 'A2' depends on axioms: [...]"."""
    text = path.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"/--\s*(.*?)\s*-/\s*\n#guard_msgs", text, re.S):
        out += [m.strip() for m in block.split("\n---\n")]
    return out


# ------------------------------------------------------------------------------ the source scan


@pytest.mark.parametrize("proof", [
    "by\n  -- sorry, not now\n  rfl",
    "by\n  /- outer /- nested sorry -/ still a comment: admit -/\n  rfl",
    'by\n  have : "sorry" = "sorry" := rfl\n  rfl',
    "by\n  have : r#\"admit \"sorry\"\"# = r#\"admit \"sorry\"\"# := rfl\n  rfl",
    "by\n  have : 's' = 's' := rfl\n  exact sorry_lemma",
    "by simp [Nat.sorry', h.sorry, admit_lemma]",
    "by\n  /-- doc comment: sorry -/\n  rfl",
])
def test_sorry_in_comments_strings_and_identifiers_is_fine(proof):
    assert scan.sorry_uses(scan.tokenize(proof)) == []


@pytest.mark.parametrize("proof,word", [
    ("by sorry", "sorry"), ("by\n  simp\n  admit", "admit"), ("sorryAx _ false", "sorryAx"),
    ("by\n  stop\n  simp", "stop"), ("by\n  -- a comment\n  exact (sorry)", "sorry"),
    ('by\n  have : "x" = "x" := rfl\n  sorry', "sorry"), ("by\n  /- -/ sorry", "sorry"),
    ("«sorryAx» _ false", "«sorryAx»"), ("_root_.sorryAx _ false", "_root_.sorryAx"), ("@sorryAx _ false", "sorryAx"),
])
def test_sorry_and_admit_in_code_are_found(proof, word):
    uses = scan.sorry_uses(scan.tokenize(proof))
    assert uses and uses[0].startswith(f"`{word}`")


def test_char_literals_and_quoted_names_do_not_unbalance():
    s = scan.tokenize("'(' = '(' ∧ «weird ) name» = «weird ) name» ∧ '\\'' = '\\''")
    assert s.balanced and not s.problems


@pytest.mark.parametrize("statement", [
    "∀ a b : ℕ, a + b = b + a", "(let x := 1; x = 1)", "{ x := 1, y := 2 : Prod' }.1 = 1",
    "open Nat in ∀ n, n.succ ≠ 0", "#s = 2", "f ⟨1, 2⟩ = ⌊x⌋", "set_option pp.all true in 1 = 1",
])
def test_good_statements_pass(statement):
    assert scan.statement_problems(scan.tokenize(statement)) == []


@pytest.mark.parametrize("statement,why", [
    ("True := trivial\naxiom cheat : False\ntheorem t : False", "`:=` at top level"),
    ("let x := 1; x = 1", "`:=` at top level"),
    ("(1 = 1", "never closed"), ("1 = 1)", "unbalanced bracket"), ("(1 = 1]", "unbalanced bracket"),
    ("1 = 1 theorem t", "`theorem`"), ("(1 = 1\naxiom a : False)", "`axiom`"),
    ("(1 = 1\n#eval IO.println 1)", "`#eval`"), ("1 = 1\nset_option x 1", "set_option"),
    ("open Nat\n1 = 1", "`open`"), ("(macro \"x\" : term => `(1)) = 1", "`macro`"),
    ("(elab \"x\" : term => pure default) = 1", "`elab`"), ("(run_cmd pure ()) = 1", "`run_cmd`"),
    ("(import Mathlib) = 1", "`import`"), ("(1 = 1 /- unterminated", "unterminated block comment"),
    ('"unterminated = 1', "unterminated string"),
])
def test_bad_statements_are_rejected_with_a_reason(statement, why):
    problems = scan.statement_problems(scan.tokenize(statement))
    assert problems and any(why in p for p in problems), problems


@pytest.mark.parametrize("proof,why", [
    ("rfl\naxiom foo : False", "`axiom`"), ("by\n  simp\n#exit", "`#exit`"), ("by\n  simp\nend", "`end`"),
    ("by\n  simp\ntheorem t : False := sorry", "`theorem`"), ("by\n  run_tac pure ()", "`run_tac`"),
    ("by_elab pure default", "`by_elab`"), ("by exact eval% 2 + 2", "eval%"),
    ("set_option debug.skipKernelTC true in rfl", "debug.skipKernelTC"),
    ("set_option warn.sorry false in rfl", "warn.sorry"), ("by\n  (simp", "never closed"),
    ("by simp)\n#print axioms x\n(", "unbalanced"), ("unsafe rfl", "`unsafe`"),
    ("by\n  simp\n@[simp] instance : Inhabited Nat := ⟨0⟩", "`instance`"),
])
def test_proofs_that_smuggle_commands_are_rejected(proof, why):
    problems = scan.proof_problems(scan.tokenize(proof))
    assert problems and any(why in p for p in problems), problems


@pytest.mark.parametrize("proof", [
    "by\n  intro a b\n  omega", "set_option maxHeartbeats 400000 in by simp", "open Nat in by simp [succ_ne_zero]",
    "fun a b => Nat.add_comm a b", "by\n  calc 1 = 1 := rfl\n    _ = 1 := rfl", "by\n  have h : 1 = 1 := rfl\n  exact h",
])
def test_ordinary_proofs_pass(proof):
    assert scan.proof_problems(scan.tokenize(proof)) == []


def test_split_imports_hoists_leading_imports_only():
    mods, rest, problems = scan.split_imports("-- head\nimport Mathlib.Tactic Batteries\n\nimport Foo.Bar\n∀ n, n = n\n")
    assert mods == ["Mathlib.Tactic", "Batteries", "Foo.Bar"] and not problems
    assert rest.split("\n")[4] == "∀ n, n = n"  # line numbers are kept
    mods, rest, problems = scan.split_imports("import ../etc/passwd\n1 = 1")
    assert problems


# ------------------------------------------------------------------------------ the file layout


def test_proof_file_layout_hoists_imports_indents_and_fences():
    statement = "import Mathlib.Logic.Basic\n∀ a b : Nat,\n  a + b = b + a"
    proof = "import Mathlib.Tactic\nby\n  intro a b\n  omega"
    r = verify_formal(statement=statement, proof=proof, imports=["Mathlib.Tactic", "Batteries"])
    src = r.source.split("\n")
    assert src[:3] == ["import Mathlib.Tactic", "import Batteries", "import Mathlib.Logic.Basic"]
    assert "set_option autoImplicit false" in src
    i = src.index("theorem _mathlas_check : (")
    assert src[i + 1:i + 3] == ["    ∀ a b : Nat,", "      a + b = b + a"]
    assert src[i + 3] == "  ) := ("
    assert src[i + 4:i + 7] == ["    by", "      intro a b", "      omega"]
    assert src[i + 7] == "  )"
    assert r.source.rstrip("\n").endswith("#print axioms _mathlas_check")
    assert not any(line and not line[0].isspace() for line in src[i + 1:i + 7])  # nothing at column 0
    # positions map back to the caller's own lines, counting the hoisted import line
    layout = lay.proof_file(*[scan.split_imports(t)[1] for t in (statement, proof)], r.imports)
    assert layout.source == r.source
    assert layout.locate(i + 7, 6) == ("proof", 4, 2)      # `omega`: line 4, column 2 of the proof given
    assert layout.locate(i + 3, 6) == ("statement", 3, 2)  # `a + b`: line 3, column 2 of the statement


def test_layout_maps_positions_back_to_the_callers_lines():
    layout = lay.proof_file("∀ n : Nat,\n  n + 0 = n", "by\n  intro n\n  rfl", ["Mathlib"])
    lines = layout.source.split("\n")
    row = lines.index("      intro n") + 1
    assert layout.locate(row, 6) == ("proof", 2, 2)
    row = lines.index("      n + 0 = n") + 1
    assert layout.locate(row, 8) == ("statement", 2, 4)
    assert layout.locate(1, 0)[0] == "imports"
    assert layout.locate(layout.check_line, 0)[0] == "check"
    assert layout.locate(lines.index("theorem _mathlas_check : (") + 1, 8)[0] == "wrapper"


# ------------------------------------------------------------------------------ the verdict, on recorded output


def test_messages_of_a_recorded_output_are_parsed_verbatim():
    out = recorded("1007.lean.expected.out")
    msgs = parse_messages(out, "1007.lean")
    assert [m.severity for m in msgs] == ["warning"] * 8 + ["error"]
    err = msgs[-1]
    assert (err.line, err.column, err.end_line, err.end_column) == (56, 64, 56, 78)
    assert err.text == out.split(": error: ", 1)[1].rstrip("\n")  # the whole multi-line message, verbatim
    assert all(SORRY_WARNING.search(m.text) for m in msgs[:8])


def test_error_outputs_are_refuted_with_the_kernel_text():
    for name, file_name in [("sorryAtError.lean.expected.out", "sorryAtError.lean"), ("holes.lean.expected.out", "holes.lean"),
                            ("1011.lean.expected.out", "1011.lean"), ("1007.lean.expected.out", "1007.lean")]:
        out = recorded(name)
        d = decide_proof(out, 1, file_name=file_name)
        assert d.status == "REFUTED", name
        first_error = out[out.index(": error: ") + len(": error: "):]
        assert d.errors[0].text == first_error.split("\n" + file_name)[0].rstrip("\n")
        assert decide_snippet(out, 1, file_name=file_name).status == "FAILS"


def test_lean_exits_0_on_sorry_and_the_warning_is_not_a_pass():
    out = recorded("1027.lean.expected.out")  # goal state, then the sorry warning; no error
    d = decide_proof(out, 0, file_name="1027.lean")
    assert d.status == "REFUTED" and "sorry" in d.reason and not d.errors
    assert decide_snippet(out, 0, file_name="1027.lean").status == "INCOMPLETE"
    assert decide_snippet(recorded("1026.lean.expected.out"), 0, file_name="1026.lean").status == "INCOMPLETE"


def test_every_recorded_form_of_the_sorry_warning_is_recognised():
    texts = [m for p in ("warnSorry.lean", "sorryWarningDeclName.lean") for m in guard_messages(LEAN_TESTS / "run" / p)]
    texts += [m.text for m in parse_messages(recorded("1007.lean.expected.out"), "1007.lean") if m.severity == "warning"]
    assert len(texts) >= 15
    assert all(t.startswith("warning:") or "uses" in t for t in texts)
    assert all(SORRY_WARNING.search(t) for t in texts), [t for t in texts if not SORRY_WARNING.search(t)]
    assert not SORRY_WARNING.search("declaration uses 'sorry_lemma'")


def axiom_message(path: Path, name: str) -> str:
    """The recorded `#print axioms` message for ``name``, as Lean prints it (bare, like 1026's info message)."""
    [msg] = [m for m in guard_messages(path) if m.startswith(f"info: '{name}' ")]
    return msg[len("info: "):]


COLLECT = LEAN_TESTS / "run" / "collectAxioms.lean"
REPLACE = DATA / "lean4checker" / "Lean4CheckerTests" / "ReplaceAxiom.lean"


def test_axiom_reports_are_read_from_recorded_messages():
    assert axiom_reports(axiom_message(COLLECT, "A2"), "A2") == [["A0", "A1", "A2"]]
    assert axiom_reports(axiom_message(COLLECT, "one_add_one"), "one_add_one") == [["Lean.ofReduceBool", "Lean.trustCompiler"]]
    assert axiom_reports(axiom_message(REPLACE, "efsq"), "efsq") == [["propext"]]
    assert axiom_reports(axiom_message(REPLACE, "efsq"), "other") == []
    # the `info:` prefixed form (#guard_msgs, some Lean versions) reads the same
    assert axiom_reports("info: " + axiom_message(COLLECT, "A2"), "A2") == [["A0", "A1", "A2"]]


def test_user_axioms_and_native_decide_are_not_verified():
    d = decide_proof(axiom_message(COLLECT, "A2") + "\n", 0, file_name="x.lean", theorem="A2")
    assert d.status == "REFUTED" and d.nonstandard_axioms == ["A0", "A1", "A2"]
    d = decide_proof(axiom_message(COLLECT, "one_add_one") + "\n", 0, file_name="x.lean", theorem="one_add_one")
    assert d.status == "REFUTED" and "native_decide" in d.reason


def test_standard_axioms_only_is_verified_and_why_commands_are_refused():
    # lean4checker's ReplaceAxiom test: an `#eval` swaps propext for `False` in the environment, and the
    # resulting "proof" of Fermat's last theorem reports only [propext]. The verdict logic alone accepts
    # it; the scan is what keeps such an #eval out of a statement or proof.
    out = axiom_message(REPLACE, "efsq") + "\n"
    d = decide_proof(out, 0, file_name="x.lean", theorem="efsq")
    assert d.status == "VERIFIED_PROOF" and d.axioms == ["propext"] and set(d.axioms) <= STANDARD_AXIOMS
    assert any("`#eval`" in p for p in scan.proof_problems(scan.tokenize(
        "by\n  exfalso\n  exact propext\n#eval modifyEnv (m := MetaM) id")))
    # two reports for the checked theorem (one forged by earlier output): not trusted
    assert decide_proof(out + out, 0, file_name="x.lean", theorem="efsq").status == "UNDETERMINED"
    # none at all (Lean stopped before `#print axioms`): not trusted
    assert decide_proof("", 0, file_name="x.lean", theorem="efsq").status == "UNDETERMINED"


def test_runs_that_say_nothing_are_undetermined():
    out = recorded("holes.lean.expected.out")
    assert decide_proof(out, None, file_name="holes.lean", timed_out=True, timeout_s=3).status == "UNDETERMINED"
    assert "time-out" in decide_proof("", None, file_name="x.lean", timed_out=True).reason
    assert "SIGKILL" in decide_proof("", -9, file_name="x.lean").reason
    assert decide_proof("", 1, file_name="x.lean").status == "UNDETERMINED"
    # an error inside the import header means the environment lacks a module (the rule is positional;
    # here exercised on a real error line, with a layout whose header covers its line)
    header = lay.Layout("", ["A", "B", "C", "D"], header_last=4)
    d = decide_proof(out, 1, file_name="holes.lean", layout=header)
    assert d.status == "UNDETERMINED" and "import" in d.reason
    # Lean's own wording for a missing module (src/Lean/Util/Path.lean, findOLean): `unknown module prefix '{pkg}'`
    from mathlas.tools.lean_check.verdict import IMPORT_FAILURE
    assert IMPORT_FAILURE.match("unknown module prefix '{pkg}'")
    assert not IMPORT_FAILURE.match("type mismatch\n  \"unknown package\"")  # a proof quoting the words is no import failure


# ------------------------------------------------------------------------------ no toolchain


@pytest.fixture
def no_lean(monkeypatch, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.delenv("MATHLAS_LEAN", raising=False)
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("ELAN_HOME", str(empty))
    monkeypatch.chdir(tmp_path)


def test_without_lean_every_call_is_undetermined_with_install_steps(no_lean):
    r = verify_formal(statement="∀ a b : Nat, a + b = b + a", proof="fun a b => Nat.add_comm a b")
    assert (r.status, r.proof_status, r.stage) == ("UNDETERMINED", "UNDETERMINED", "toolchain")
    assert "elan-init.sh" in r.install_hint and "lake exe cache get" in r.install_hint and "lake new" in r.install_hint
    assert r.caveat == CAVEAT and "applies to your problem" in r.caveat
    s = verify_formal(snippet="theorem t : 1 + 1 = 2 := rfl")
    assert (s.status, s.snippet_status, s.proof_status) == ("UNDETERMINED", "UNDETERMINED", None)
    # the scan still answers: a sorried proof is REFUTED without Lean
    assert verify_formal(statement="1 = 1", proof="by sorry").status == "REFUTED"


def test_bad_arguments_are_usage_errors(no_lean):
    for kwargs in [{"statement": "1 = 1"}, {"proof": "rfl"}, {}, {"snippet": "x", "statement": "1 = 1"},
                   {"statement": "1 = 1", "proof": "rfl", "timeout_s": 0}, {"statement": " ", "proof": "rfl"},
                   {"statement": "1 = 1", "proof": "rfl", "imports": ["../x"]}, {"statement": 3, "proof": "rfl"},
                   {"statement": "1 = 1", "proof": "rfl", "timeout_s": True}]:
        with pytest.raises(UsageError):
            verify_formal(**kwargs)


def test_smuggling_is_a_clear_result_not_an_exception(no_lean):
    with pytest.raises(UsageError, match="`:=` at top level"):  # not one type: the caller's mistake
        verify_formal(statement="True := trivial\naxiom cheat : False\ntheorem t : False", proof="cheat.elim")
    r = verify_formal(statement="1 = 1", proof="rfl\naxiom foo : False")
    assert r.status == "UNDETERMINED" and r.stage == "scan" and r.reason.startswith("refused before Lean ran")
    assert r.errors[0].region == "proof" and r.errors[0].region_line == 2
    r = verify_formal(statement="1 = 1 ∧ (set_option debug.skipKernelTC true in True)", proof="⟨rfl, trivial⟩")
    assert (r.status, r.stage) == ("UNDETERMINED", "scan") and r.errors[0].region == "statement"
    assert verify_formal(snippet="theorem t : 1 = 1 := rfl\n#exit").status == "UNDETERMINED"


def test_pasted_theorem_header_is_read_not_refuted(no_lean):
    r = verify_formal(statement="theorem t (a b : Nat) : a + b = b + a", proof="by omega")
    assert (r.status, r.stage) == ("UNDETERMINED", "toolchain")  # no Lean here; never REFUTED for the header
    assert "theorem _mathlas_check (a b : Nat) : (\n    a + b = b + a\n  ) := (" in r.source
    assert r.header.startswith("read `theorem t` as a header: binders `(a b : Nat)`")
    r = verify_formal(statement="lemma foo {α : Type _} [Inhabited α]\n    (x : α) :\n  x = x", proof="rfl")
    assert "theorem _mathlas_check {α : Type _} [Inhabited α]\n    (x : α) : (" in r.source
    assert r.header and r.stage == "toolchain"
    r = verify_formal(statement="example : 1 = 1", proof="rfl")
    assert "theorem _mathlas_check : (\n    1 = 1\n  )" in r.source and r.header.startswith("read `example`")
    assert verify_formal(statement="1 = 1", proof="rfl").header is None
    # the header as Lean reads it: a comment before it, a colon glued to the name
    assert verify_formal(statement="/- doc -/ theorem t : True", proof="trivial").header.startswith(
        "read `theorem t` as a header:")
    assert verify_formal(statement="theorem foo: 1 = 1", proof="rfl").header.startswith("read `theorem foo` as")
    # a header's binders get the same checks as the type
    r = verify_formal(statement="theorem t (h : sorry) : 1 = 1", proof="rfl")
    assert (r.status, r.stage) == ("UNDETERMINED", "scan") and "sorry" in r.reason


@pytest.mark.parametrize("statement, words", [
    ("@[simp] theorem t : 1 = 1", "after other words"),
    ("theorem t : 1 = 1 := rfl", "`:=` at top level"),
    ("theorem t a : a = a", "expected binders in brackets"),
    ("theorem t.{u} (α : Sort u) : α = α", "expected binders in brackets"),
    ("theorem t (a : Nat) -- c\n : a = a", "comment"),
    ("theorem (a : Nat) : a = a", "not followed by a name"),
    ("theorem t (n : Nat) :", "no type after its `:`"),
    ("theorem t ⟨a, b⟩ : 1 = 1", "is not a binder"),
    ("1 = (1", "unbalanced bracket"),
])
def test_statement_of_the_wrong_shape_is_a_usage_error(no_lean, statement, words):
    with pytest.raises(UsageError, match=words):
        verify_formal(statement=statement, proof="rfl")


# ------------------------------------------------------------------------------ the runner, with a stand-in binary

FAKE_LEAN = '''#!{python}
# STAND-IN FOR THE `lean` BINARY, for plumbing tests only. It replays a RECORDED real Lean output
# (tests/data/lean4) with the recorded file name replaced by the path it was given, then exits
# with $FAKE_RC. It decides nothing: the verdicts in these tests come from the recordings.
import json, os, resource, shutil, socket, sys, time
path = sys.argv[-1]
note = os.environ.get("FAKE_NOTE")
if note:
    shutil.copy(path, note + ".lean")
    with open(note + ".json", "w") as f:
        json.dump({{"argv": sys.argv, "cwd": os.getcwd(), "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
                   "interfaces": [n for _, n in socket.if_nameindex()]}}, f)
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
replay = os.environ.get("FAKE_REPLAY")
if replay:
    text = open(replay, encoding="utf-8").read()
    sys.stdout.write(text.replace(os.environ["FAKE_RECORDED_AS"] + ":", path + ":"))
sys.exit(int(os.environ.get("FAKE_RC", "0")))
'''


@pytest.fixture
def fake_lean(monkeypatch, tmp_path):
    exe = tmp_path / "fake-lean"
    exe.write_text(FAKE_LEAN.format(python=sys.executable))
    exe.chmod(0o755)
    monkeypatch.setenv("MATHLAS_LEAN", str(exe))
    for var in ("FAKE_NOTE", "FAKE_SLEEP", "FAKE_REPLAY", "FAKE_RC"):
        monkeypatch.delenv(var, raising=False)

    def replay(recording: str, recorded_as: str, rc: int):
        monkeypatch.setenv("FAKE_REPLAY", str(LEAN_TESTS / recording))
        monkeypatch.setenv("FAKE_RECORDED_AS", recorded_as)
        monkeypatch.setenv("FAKE_RC", str(rc))
    return exe, replay


def test_runner_plumbing_layout_and_refuted_text(fake_lean, tmp_path, monkeypatch):
    _, replay = fake_lean
    replay("1011.lean.expected.out", "1011.lean", 1)
    monkeypatch.setenv("FAKE_NOTE", str(tmp_path / "seen"))
    r = verify_formal(statement="import Mathlib.Logic.Basic\n∀ n : Nat, n = n",
                      proof="by\n  intro n\n  rfl", imports="Batteries")
    assert r.status == "REFUTED" and r.stage == "lean"
    assert r.errors[0].text == "unknown identifier 'A'" and r.errors[0].line == 5
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["argv"][-1] == FILE_NAME and seen["argv"][-2] == str(fake_lean[0].resolve())
    assert not Path(seen["cwd"]).exists()  # the throwaway directory is gone
    assert (tmp_path / "seen.lean").read_text() == r.source  # Lean got exactly the file the result shows
    assert r.source.startswith("import Batteries\nimport Mathlib.Logic.Basic\n")
    assert "\n    by\n      intro n\n      rfl\n  )\n" in r.source
    assert seen["data"] == 8192 << 20 and any("memory limit 8192 MB" in s for s in r.sandbox)
    if any(s.startswith("network namespace") for s in r.sandbox):
        assert seen["interfaces"] == ["lo"]  # no network inside: only a loopback interface that is down
    else:
        assert any(s.startswith("NO network isolation") for s in r.sandbox)
    assert r.toolchain and "MATHLAS_LEAN" in r.toolchain


@pytest.mark.slow
def test_runner_time_out_kills_and_is_undetermined(fake_lean, monkeypatch):
    monkeypatch.setenv("FAKE_SLEEP", "30")
    r = verify_formal(statement="1 = 1", proof="rfl", timeout_s=1)
    assert r.status == "UNDETERMINED" and "time-out" in r.reason and r.elapsed_s < 10


def test_runner_sorry_exit_0_snippet_and_proof(fake_lean):
    _, replay = fake_lean
    replay("1027.lean.expected.out", "1027.lean", 0)
    assert verify_formal(snippet="def f (x : Nat) : Unit := by\n  trace_state\n  exact sorry").snippet_status == "INCOMPLETE"
    replay("1026.lean.expected.out", "1026.lean", 0)
    r = verify_formal(statement="1 = 1", proof="rfl")
    assert r.status == "REFUTED" and "sorry" in r.reason


def test_runner_lake_project_directory(fake_lean, tmp_path, monkeypatch):
    exe, replay = fake_lean
    bin_dir, project = tmp_path / "bin", tmp_path / "proj"
    bin_dir.mkdir()
    project.mkdir()
    (project / "lakefile.toml").write_text('name = "proj"\n')
    (bin_dir / "lake").symlink_to(exe)  # `lake env lean FILE`: the stand-in takes the last argument
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("MATHLAS_LEAN", str(project))
    tc, _ = find_toolchain()
    assert tc.command[1:] == ["env", "lean"] and tc.cwd == str(project)
    replay("sorryAtError.lean.expected.out", "sorryAtError.lean", 1)
    run = run_lean(tc, "theorem t : True := trivial\n", 30)
    assert os.path.isabs(run.file_name) and run.file_name.endswith(FILE_NAME)
    d = decide_proof(run.output, run.returncode, file_name=run.file_name)
    assert d.status == "REFUTED" and d.errors[0].text.startswith("Application type mismatch")


def test_mathlas_lean_pointing_nowhere_is_undetermined(monkeypatch, tmp_path):
    monkeypatch.setenv("MATHLAS_LEAN", str(tmp_path / "nothing-here"))
    r = verify_formal(statement="1 = 1", proof="rfl")
    assert r.status == "UNDETERMINED" and "MATHLAS_LEAN" in r.install_hint


def test_cli_json_and_exit_codes(no_lean, capsys):
    from mathlas.cli.main import main

    assert main(["verify-formal", "--statement", "1 = 1", "--proof", "rfl", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["proof_status"] == "UNDETERMINED" and out["install_hint"]
    assert main(["verify-formal", "--statement", "1 = 1"]) == 2
    assert main(["verify-formal", "--statement", "1 = 1", "--proof", "by sorry"]) == 1
    assert capsys.readouterr().out.startswith("REFUTED: the proof uses sorry (seen before Lean ran)")
    header = ["verify-formal", "--statement", "theorem t (a b : Nat) : a + b = b + a", "--proof", "by omega"]
    assert main(header) == 1
    out = capsys.readouterr().out
    assert out.startswith("UNDETERMINED: No Lean toolchain found") and "REFUTED" not in out
    assert "statement: read `theorem t` as a header: binders `(a b : Nat)`" in out
    assert main(header + ["--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "UNDETERMINED" and out["header"].startswith("read `theorem t`")
    assert main(["verify-formal", "--statement", "theorem t : 1 = 1 := rfl", "--proof", "rfl"]) == 2
    assert "`:=` at top level" in capsys.readouterr().err


def test_cli_file_errors_are_one_line_and_stdin_is_read(no_lean, tmp_path, monkeypatch, capsys):
    """`--file t.lean` missing named the file twice with Python's errno text; `--file -` was a file
    named '-'; bytes that are not UTF-8 and an endless file (/dev/zero: read whole before the size
    check, it hung) are refused in one line, exit 2."""
    import io
    import subprocess

    from mathlas.cli.main import main

    missing = tmp_path / "t.lean"
    assert main(["verify-formal", "--file", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == (f"mathlas: cannot read the Lean file {missing}: No such file or directory; "
                   "give the path of a readable file, or - for stdin\n")
    bad = tmp_path / "bad.lean"
    bad.write_bytes(b"\xff\xfe theorem")
    assert main(["verify-formal", "--file", str(bad)]) == 2
    assert capsys.readouterr().err == (f"mathlas: cannot read the Lean file {bad}: not UTF-8 text; save it as "
                                       "UTF-8 and try again\n")
    for stdin, rc, says in ((b"theorem t : 1 = 1 := rfl\n", 1, "UNDETERMINED: No Lean toolchain found"),
                            (b"  \n", 2, "mathlas: snippet is empty"),
                            (b"\xff", 2, "mathlas: cannot read the Lean file from stdin: not UTF-8 text")):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        assert main(["verify-formal", "--file", "-"]) == rc
        out = capsys.readouterr()
        assert (out.out if rc == 1 else out.err).startswith(says), out
    if os.path.exists("/dev/zero"):
        for name in ("/dev/zero", "-"):
            with open("/dev/zero", "rb") as zeros:
                done = subprocess.run([sys.executable, "-m", "mathlas", "verify-formal", "--file", name],
                                      stdin=zeros, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2 and done.stderr.endswith(
                "is longer than the limit of 200,000 characters; shorten it\n"), done.stderr


# ------------------------------------------------------------------------------ the real kernel

TOOLCHAIN, _ = find_toolchain()
needs_lean = pytest.mark.skipif(TOOLCHAIN is None, reason="no Lean toolchain (lean on PATH, a Lake project, or MATHLAS_LEAN)")


@needs_lean
def test_real_correct_proof_is_verified():
    r = verify_formal(statement="∀ a b : Nat, a + b = b + a", proof="fun a b => Nat.add_comm a b", timeout_s=300)
    assert r.status == "VERIFIED_PROOF", (r.reason, r.output)
    assert set(r.axioms) <= STANDARD_AXIOMS
    r = verify_formal(statement="∀ n : Nat, n + 0 = n", proof="by\n  intro n\n  rfl", timeout_s=300)
    assert r.status == "VERIFIED_PROOF", (r.reason, r.output)


@needs_lean
def test_real_wrong_proof_is_refuted_with_errors_on_the_proof():
    r = verify_formal(statement="2 + 2 = 5", proof="by decide", timeout_s=300)
    assert r.status == "REFUTED" and r.errors, r.output
    assert r.errors[0].region in ("proof", "wrapper") and r.errors[0].text
    r = verify_formal(statement="∀ n : Nat, n + 1 = n", proof="fun n => rfl", timeout_s=300)
    assert r.status == "REFUTED", r.output


@needs_lean
def test_real_sorry_is_caught_by_the_kernel_too():
    r = verify_formal(snippet="theorem t : 1 = 2 := by sorry", timeout_s=300)
    assert r.snippet_status == "INCOMPLETE", r.output
    assert any(SORRY_WARNING.search(w.text) for w in r.warnings)
    # the warning switched off (an unknown option before Lean 4.19-ish: then FAILS): never TYPECHECKS
    r = verify_formal(snippet="set_option warn.sorry false in\ntheorem t : 1 = 2 := by sorry", timeout_s=300)
    assert r.snippet_status == ("FAILS" if r.errors else "INCOMPLETE"), r.output
    # and the axioms report of a sorried theorem is read as not verified
    run = run_lean(TOOLCHAIN, "theorem t : 1 = 2 := by sorry\n\n#print axioms t\n", 300)
    d = decide_proof(run.output, run.returncode, file_name=run.file_name, theorem="t")
    assert d.status == "REFUTED", run.output


@needs_lean
def test_real_axiom_smuggling_is_not_verified():
    r = verify_formal(statement="1 = 2", proof="cheat.elim\naxiom cheat : False", timeout_s=300)
    assert r.status == "UNDETERMINED" and r.stage == "scan"
    source = "axiom cheat : False\n\ntheorem t : 1 = 2 := cheat.elim\n\n#print axioms t\n"
    run = run_lean(TOOLCHAIN, source, 300)
    d = decide_proof(run.output, run.returncode, file_name=run.file_name, theorem="t")
    assert d.status == "REFUTED" and d.nonstandard_axioms == ["cheat"], run.output
    s = verify_formal(snippet=source, timeout_s=300)
    assert s.snippet_status == "TYPECHECKS" and s.declared_axioms == ["cheat"] and "axioms" in s.reason


@needs_lean
def test_real_unknown_import_is_undetermined():
    r = verify_formal(statement="1 = 1", proof="rfl", imports=["NoSuchModuleForMathlasTests"], timeout_s=300)
    assert r.status == "UNDETERMINED", (r.reason, r.output)
