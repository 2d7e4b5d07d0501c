"""The terminal has every tool (issue 13): each MCP tool has a ``mathlas`` command; the numeric
commands (constant, verify-numeric, conjecture) answer with ``--json`` and the usual exit codes;
``--version``; shell completion generated from the parser. Real subprocesses, as a user runs them.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from mathlas import __version__

ZETA2 = "1.6449340668482264364724151666460251892189499012068"
SQRT2 = "1.4142135623730950488016887242096980785696718753769"

# every tool an agent has over MCP, and the command that runs it in a terminal
COMMANDS = {
    "search_existing_math": ["search"], "get_by_id": ["show"], "get_statement": ["show"],
    "search_formal_math": ["lean", "search"], "get_dependencies": ["lean", "deps"],
    "identify_constant": ["constant"], "verify_numeric": ["verify-numeric"], "conjecture_relation": ["conjecture"],
    "applicability_checklist": ["checklist"], "mapping_scaffold": ["scaffold"], "search_directive": ["directive"],
    "identify_sequence": ["sequence"], "funsearch": ["funsearch"], "add_finding": ["findings", "add"],
    "verify_formal": ["verify-formal"],
}


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_every_tool_has_a_command():
    from mathlas.cli.main import build_parser
    from mathlas.tools import available_tool_names

    assert set(COMMANDS) == set(available_tool_names())
    parser = build_parser()
    for tool, command in COMMANDS.items():
        with pytest.raises(SystemExit) as e:  # --help exits 0 for a command that exists
            parser.parse_args([*command, "--help"])
        assert e.value.code == 0, tool


def test_version():
    out = run("--version")
    # and the default bundle's, or that none is installed yet (tests/test_cli_answer.py has both)
    assert out.returncode == 0 and out.stdout.startswith(f"mathlas {__version__}, ")


@pytest.mark.slow
def test_constant():
    out = run("constant", ZETA2, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["identified"] and r["best"]["expression"] == "pi**2/6"
    human = run("constant", ZETA2)
    assert human.returncode == 0 and human.stdout.startswith("pi**2/6 ") and "digits agree" in human.stdout
    few = run("constant", "0.8346268", "--basis", "zeta(3)", "--timeout", "5", "--json")  # too few digits to be sure
    assert few.returncode == 1 and json.loads(few.stdout)["identified"] is False
    few = run("constant", "3.14159")  # its two lines agree: no form was searched
    assert few.returncode == 1 and "so none was searched" in few.stdout and "0 forms searched" in few.stderr
    bad = run("constant", "not-a-number")
    assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.startswith("mathlas: ")
    assert run("constant", ZETA2, "--digits", "2000").returncode == 2


@pytest.mark.slow
def test_verify_numeric():
    out = run("verify-numeric", "sum_{n>=1} 1/n^2 = pi^2/6", "--digits", "30", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verdict"] == "VERIFIED"
    refuted = run("verify-numeric", "--expression", "pi", "--value", "3.15")
    assert refuted.returncode == 1 and refuted.stdout.startswith("REFUTED: ")
    assert run("verify-numeric", "--expression", "pi").returncode == 2  # a value is needed
    assert run("verify-numeric", "__import__('os').system('echo pwned') = 1").returncode == 2


def test_verify_numeric_holds_a_literal_exactly():
    """1e100 rounded to the working precision is another number, whose sine is anything: the two
    evaluations disagreed and sin(1e100) = 0 was UNDETERMINED while the right value was printed."""
    out = run("verify-numeric", "sin(1e100)=0")
    assert out.returncode == 1 and out.stdout.startswith("REFUTED: the sides do not agree to one decimal place")
    assert "left = -0.37237612366127668826208669555316429571966788356" in out.stderr
    r = json.loads(run("verify-numeric", "sin(1e100)=0", "--json").stdout)
    assert r["verdict"] == "REFUTED" and r["reevaluated"].startswith("left = -0.372376123661276688262086695553")
    assert json.loads(run("verify-numeric", "sin(1e100) = -0.3723761236612766882620866955531642957196678835674347",
                          "--json").stdout)["verdict"] == "VERIFIED"


def test_a_literal_too_large_to_hold_exactly_is_never_expanded():
    """Whether a decimal can be held exactly is read from its digits and exponent: Fraction("1e10000000")
    builds 10^10^7 first (seconds each time), and 1e-999999 can never be dyadic."""
    from mathlas.tools.numeric.evaluate import EXACT_LITERAL_BITS, _literal, _may_be_exact

    for exact in ("1e100", "0.5", "25e-2", "0.0625", "3e5", "1e19728"):
        assert _may_be_exact(exact), exact
    for inexact in ("1e10000000", "1e-999999", "1e19729", "0.1e-30", "1e9999999999"):
        assert not _may_be_exact(inexact), inexact
    assert 10 ** 19728 < 2 ** EXACT_LITERAL_BITS < 10 ** 19729   # where the line is drawn
    assert _literal("1e100") == 10 ** 100 and _literal("0.5") == 0.5   # held exactly
    assert str(_literal("1e10000000")).startswith("1.0e+10000000")


@pytest.mark.slow
def test_conjecture():
    out = run("conjecture", SQRT2, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["found"] and all(rel["provenance"] == "conjectured_relation" for rel in r["relations"])
    human = run("conjecture", SQRT2, "--max-terms", "4", "--cf-depth", "50")
    assert human.returncode == 0 and "conjectured, not proved" in human.stdout
    assert "continued fraction: [1; 2, 2, 2" in human.stdout
    few = run("conjecture", "3.14")  # 3 digits fix only the first term: no "[3; ]", no "1 reliable terms"
    assert few.returncode == 1
    assert "continued fraction: [3]  (only 1 reliable term at 3 digits: give more digits for more)" in few.stdout
    assert "simple_cf: 1 reliable term, no significant pattern" in few.stderr and "[3; ]" not in few.stdout
    r = json.loads(run("conjecture", "3.14", "--json").stdout)
    assert r["cf"] == [3] and "simple_cf: 1 reliable term," in r["searched"][0]
    assert run("conjecture", SQRT2, "--max-terms", "9").returncode == 2


@pytest.mark.slow
def test_completion_scripts_come_from_the_parser():
    from mathlas.cli.main import COMMAND_MODULES, build_parser

    commands = set(build_parser().commands())
    assert {"constant", "verify-numeric", "conjecture", "completion"} <= commands
    assert len(COMMAND_MODULES) >= 13
    zsh = run("completion", "zsh")
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef mathlas")
    assert all(c in zsh.stdout for c in commands)
    script = run("completion", "bash")
    assert script.returncode == 0 and all(c in script.stdout for c in commands)
    if shutil.which("bash") is None:
        pytest.skip("no bash to try the script in")
    complete = ('source /dev/stdin; COMP_WORDS=(mathlas "$1"); COMP_CWORD=1; COMP_LINE="mathlas $1"; '
                'COMP_POINT=${#COMP_LINE}; _shtab_mathlas mathlas "$1" mathlas; echo "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "-c", complete, "bash", "con"], input=script.stdout, capture_output=True,
                         text=True, timeout=30, check=False)
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == {"constant", "conjecture"}
    # the script offers the shells after `completion`
    shells = ('source /dev/stdin; COMP_WORDS=(mathlas completion ""); COMP_CWORD=2; COMP_LINE="mathlas completion "; '
              'COMP_POINT=${#COMP_LINE}; _shtab_mathlas mathlas "" completion; echo "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "-c", shells], input=script.stdout, capture_output=True, text=True, timeout=30,
                         check=False)
    assert set(out.stdout.split()) == {"bash", "zsh", "tcsh"}, (out.stdout, out.stderr)
    fish = run("completion", "fish")  # no "did you mean 'zsh'?": the shells there are, plainly
    assert fish.returncode == 2 and fish.stdout == ""
    assert "no completion script for 'fish': mathlas writes them for bash, zsh, tcsh only" in fish.stderr
    assert "did you mean" not in fish.stderr
    assert run("completion", "tcsh").stdout.startswith("# AUTOMATICALLY GENERATED by https://github.com/tqdm/shtab")


@pytest.mark.slow
def test_search_pages_and_points_a_number_to_constant(tiny_bundle_dir):
    first = json.loads(run("search", "ring module", "-k", "4", "--bundle", str(tiny_bundle_dir), "--json").stdout)
    second = run("search", "ring module", "-k", "2", "--offset", "2", "--bundle", str(tiny_bundle_dir), "--json")
    assert second.returncode == 0 and json.loads(second.stdout)["hits"] == first["hits"][2:]
    human = run("search", "ring module", "-k", "2", "--offset", "2", "--bundle", str(tiny_bundle_dir), "-q")
    assert human.stdout.startswith(" 3. ")
    number = run("search", ZETA2[:12], "-k", "1", "--bundle", str(tiny_bundle_dir))
    assert number.returncode == 0 and f"mathlas constant {ZETA2[:12]}" in number.stderr
    quiet = run("search", ZETA2[:12], "-k", "1", "--bundle", str(tiny_bundle_dir), "-q")  # -q: no tips
    assert quiet.returncode == 0 and "mathlas constant" not in quiet.stderr
