"""The command line as a new user meets it (issue 31 item 14): argparse's errors in one line with the
fix, ``-q`` on ``lean search`` as on ``search``, Stacks tags in any case, and a quiet build that
prints no reader statistics. (``mathlas mcp`` printing each log line once: tests/test_mcp.py.)"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from mathlas.cli.main import main


def run_main(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("argv, says", [
    (["lean", "search"], "mathlas lean search: the following arguments are required: query "
                         "(`mathlas lean search --help` shows the usage)"),
    (["serch", "ring"], "mathlas: unknown command 'serch'; did you mean 'search'? (`mathlas --help` shows the usage)"),
    (["search", "ring", "--kk", "3"], "mathlas search: unrecognized arguments --kk (did you mean -k?), 3 "
                                      "(`mathlas search --help` shows the usage)"),
    (["lean", "search", "ring", "--jsn"], "mathlas lean search: unrecognized argument --jsn (did you mean --json?)"),
    (["index", "buld-lean", "x"], "mathlas index: unknown command 'buld-lean'; did you mean 'build-lean'?"),
    (["search", "ring", "-k", "abc"], "mathlas search: argument -k: invalid int value: 'abc'"),
    # options after "--" are words of the query: not "did you mean -k?" for -k
    (["search", "--", "-1 is a square mod p", "-k", "2"],
     "mathlas search: unrecognized arguments -k (an option after `--`: put the options before `--`), 2"),
])
def test_argparse_errors_are_one_line_with_the_fix(argv, says, capsys):
    rc, out, err = run_main(argv, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(says), err  # argparse printed its usage block first


@pytest.mark.slow
def test_lean_search_takes_q_like_search(lean_project_bundle_dir, capfd):
    rc, out, err = run_main(["lean", "search", "sum of the first n numbers", "--bundle", str(lean_project_bundle_dir),
                             "-k", "3", "-q"], capfd)
    # the match line is part of the answer and stays; nothing else (no tips, no log lines)
    assert rc == 0 and "Toy." in out and len(err.splitlines()) == 1 and "(match: " in err, err
    rc, out, err = run_main(["lean", "deps", "lean:Toy.gauss_sum", "--bundle", str(lean_project_bundle_dir), "-q"],
                            capfd)
    assert rc == 0 and "lean:Toy.sumTo" in out and err == ""
    # without -q: the count, and that uses through dot notation are not in it (the audit read 10 as all)
    rc, out, err = run_main(["lean", "deps", "lean:Toy.gauss_sum", "--bundle", str(lean_project_bundle_dir)], capfd)
    assert rc == 0 and err.splitlines()[0].startswith("lean:Toy.gauss_sum uses ")
    assert err.splitlines()[1:] == ["mathlas: uses through dot notation (hp.two_le), notation or tactics are not counted"]


def test_stacks_tags_in_any_case(tiny_bundle_dir, tiny, capsys):
    stacks = next(i for i in tiny.table.column("id").to_pylist() if i.startswith("stacks:") and i != i.lower())
    rc, out, err = run_main(["show", stacks.lower(), "-b", str(tiny_bundle_dir), "--json"], capsys)
    assert rc == 0 and json.loads(out)["id"] == stacks, err
    other = next(i for i in tiny.table.column("id").to_pylist() if i.startswith("planetmath:") and i != i.lower())
    rc, out, err = run_main(["show", other.lower(), "-b", str(tiny_bundle_dir)], capsys)
    assert rc == 2 and err.count("\n") == 1 and f"did you mean {other!r}?" in err


def test_a_quiet_build_prints_no_reader_statistics(lean_project_dir, tmp_path, capfd):
    from mathlas_build.lean_build import lean_recipe
    from mathlas_build.pipeline import read_sources

    project = tmp_path / "toy"
    shutil.copytree(lean_project_dir, project)
    recipe = lean_recipe(project, project / "no-encoder", name="toy", version="0.1.0")
    docs, _ = read_sources(recipe, quiet=True)
    assert docs and capfd.readouterr().err == ""  # "lean: 3 files, 25 declarations, ..." was printed
    read_sources(recipe, quiet=False)
    assert "lean: " in capfd.readouterr().err


def test_build_lean_q_is_quiet_on_the_command_line():
    """The parser passes -q down to the build (the child's statistics line is what the test above checks)."""
    run = subprocess.run([sys.executable, "-m", "mathlas", "index", "build-lean", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0 and "-q" in run.stdout


def test_lean_search_and_search_give_k_the_same_range(capsys):
    """Both take -k up to request.MAX_K; `lean search --help` gave no range."""
    from mathlas.request import MAX_K

    helps = []
    for argv in (["search", "--help"], ["lean", "search", "--help"]):
        rc, out, _ = run_main(argv, capsys)
        assert rc == 0
        helps.append(" ".join(out.split("  -k K", 1)[1].split("--offset", 1)[0].split()))
    assert helps == [f"number of hits, 1..{MAX_K} (default 10)"] * 2


@pytest.mark.parametrize("argv, says", [
    (["identify", "1.6449"], "unknown command 'identify'; did you mean `mathlas constant 1.6449`? "
                             "(`mathlas constant --help` shows the usage)"),
    (["identify", "1", "1", "2", "3"], "unknown command 'identify'; did you mean `mathlas sequence 1 1 2 3`?"),
    (["identify"], "unknown command 'identify'; did you mean 'constant' or 'sequence'?"),
    (["oeis", "1", "1", "2", "3"], "unknown command 'oeis'; did you mean `mathlas sequence 1 1 2 3`?"),
    (["identify_sequence", "1", "2"], "unknown command 'identify_sequence'; did you mean `mathlas sequence 1 2`?"),
    (["identify_constant", "1.6449"], "unknown command 'identify_constant'; did you mean `mathlas constant 1.6449`?"),
    (["verify", "1=1"], "unknown command 'verify'; did you mean 'verify-numeric' or 'verify-formal'?"),
    (["search_formal_math", "a+b=b+a"], "unknown command 'search_formal_math'; did you mean "
                                        "`mathlas lean search a+b=b+a`? (`mathlas lean search --help` shows"),
    (["oeiss", "1", "2"], "unknown command 'oeiss'; did you mean `mathlas sequence 1 2`?"),  # misspelt alias
])
def test_another_name_for_a_command_names_the_command(argv, says, capsys):
    """`mathlas identify 1.6449` and `mathlas oeis 1 1 2 3` answered only 'unknown command ... one of:
    (every command)'; the MCP tools are identify_constant and identify_sequence."""
    rc, out, err = run_main(argv, capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("mathlas: " + says), err


def test_every_alias_leads_to_a_command_and_every_mcp_tool_has_one():
    from mathlas.cli.main import ALIASES, build_parser
    from mathlas.tools import available_tool_names

    parser = build_parser()
    for alias, commands in ALIASES.items():
        for command in commands:
            with pytest.raises(SystemExit) as e:  # --help exits 0 for a command that exists
                parser.parse_args([*command.split(), "--help"])
            assert e.value.code == 0, (alias, command)
    roots = set(parser.commands())
    assert all(t.replace("_", "-") in ALIASES or t in roots for t in available_tool_names())


@pytest.mark.parametrize("argv, says", [
    (["checklist", "-"], "mathlas: the text from stdin is longer than the limit of 1,000,000 characters"),
    (["directive", "-"], "mathlas: the text from stdin is longer than the limit of 1,000,000 characters"),
    (["findings", "add", "-", "https://example.org/x"],
     "mathlas: the statement from stdin is longer than the limit of 20,000 characters"),
])
def test_an_endless_stdin_is_refused_not_read_to_its_end(argv, says, tmp_path):
    """`checklist -`, `directive -` and `findings add -` read stdin whole before any limit was checked:
    an endless pipe hung them. They read a bounded number of characters past the limit now, and refuse."""
    import os

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    env = {**os.environ, "MATHLAS_DATA_DIR": str(tmp_path)}
    with open("/dev/zero", "rb") as zeros:
        done = subprocess.run([sys.executable, "-m", "mathlas", *argv], stdin=zeros, capture_output=True, text=True,
                              timeout=60, env=env)
    assert done.returncode == 2 and done.stderr.startswith(says), done.stderr
    assert not any(tmp_path.iterdir())        # nothing stored


def _program_of(size: int) -> str:
    """A FunSearch program of exactly ``size`` characters (a comment pads it)."""
    body = "def priority(el, n):\n    return 0\n#"
    return body + "x" * (size - len(body))


# (argv, the limit, text of exactly that many characters, what the command does with it)
AT_THE_LIMIT = [
    (["findings", "add", "-", "https://example.org/x"], 20_000, lambda n: "x" * n, "finding:"),
    (["funsearch", "evaluate", "-", "--param", "n=3", "-q"], 100_000, _program_of, "score "),
    (["verify-formal", "--file", "-"], 200_000, lambda n: "-- " + "x" * (n - 3), ""),
    (["checklist", "-"], 1_000_000, lambda n: "Let $x$ be real. Then $x^2 \\geq 0$. " + "y" * (n - 36), ""),
    # the tool judges what it is given: search_directive refuses a problem this long (its search's query limit)
    (["directive", "-"], 1_000_000, lambda n: "is every prime odd? " + "y" * (n - 20), None),
]


@pytest.mark.parametrize("argv, limit, text, does", AT_THE_LIMIT, ids=[a[0] for a, *_ in AT_THE_LIMIT])
def test_stdin_at_the_limit_with_its_newline_is_taken_one_more_character_is_not(argv, limit, text, does, tmp_path):
    """A statement of exactly 20,000 characters piped with its newline (echo, a heredoc, an editor's
    file) was refused, exit 2, where the same text as an argument was stored: stdin's limit counted
    the newline the store strips. Trailing whitespace past the limit is dropped now (at most
    mathlas.cli.user_file.SLACK of it is read); a character more than the limit is still refused."""
    import os

    from mathlas.cli.user_file import SLACK

    env = {**os.environ, "MATHLAS_DATA_DIR": str(tmp_path / "data")}

    def mathlas(stdin: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mathlas", *argv], input=stdin, capture_output=True, text=True,
                              timeout=120, env=env)

    exact = text(limit)
    assert len(exact) == limit
    for tail in ("\n", " \n\n\t\n", "\n" * SLACK):
        done = mathlas(exact + tail)
        assert f"longer than the limit of {limit:,}" not in done.stderr, (tail, done.stderr[-300:])
        if does is not None:
            assert done.returncode != 2 and done.stdout.startswith(does), (done.stdout[:300], done.stderr[-300:])
    refused = f"is longer than the limit of {limit:,} characters; shorten it\n"
    for over in (exact + "y\n", exact + "\n" * (SLACK + 1)):   # content past the limit; whitespace past the slack
        done = mathlas(over)
        assert done.returncode == 2 and done.stderr.endswith(refused), done.stderr[-300:]


def test_a_file_at_the_limit_with_trailing_whitespace_is_read_whole(tmp_path):
    """The same bound for a named file (funsearch evaluate prog.py, verify-formal --file t.lean)."""
    from mathlas.cli.user_file import SLACK, read_text
    from mathlas.errors import UsageError

    f = tmp_path / "t.lean"
    f.write_text("x" * 10 + "\n\n  \n")
    assert read_text(str(f), 10, "the Lean file") == "x" * 10
    f.write_text("x" * 8 + "\n \n")
    assert read_text(str(f), 10, "the Lean file") == "x" * 8 + "\n "  # cut at the limit: whitespace only
    for over in ("x" * 11 + "\n", "x" * 10 + " " * (SLACK + 1)):
        f.write_text(over)
        with pytest.raises(UsageError, match=f"the Lean file {f} is longer than the limit of 10 characters; shorten it"):
            read_text(str(f), 10, "the Lean file")


def test_leading_whitespace_is_slack_only_for_a_text_the_tool_strips(tmp_path):
    """A finding's statement is stripped at both ends by the store, so leading whitespace piped before
    a statement at its limit is slack too (it was refused); a Lean file or a program keeps its leading
    lines, which number its messages, and is refused as before."""
    from mathlas.cli.user_file import SLACK, read_text
    from mathlas.errors import UsageError

    f = tmp_path / "s.txt"
    f.write_text("\n  \n" + "x" * 10 + "\n")
    assert read_text(str(f), 10, "the statement", strips=True) == "x" * 10
    with pytest.raises(UsageError, match="longer than the limit of 10 characters"):
        read_text(str(f), 10, "the Lean file")
    f.write_text("\n" + "x" * 8 + "\n")                 # within the limit: read as it is, whitespace kept
    assert read_text(str(f), 10, "the statement", strips=True) == "\n" + "x" * 8 + "\n"
    for over in (" " + "x" * 11, " " * SLACK + "x" * 10 + "\n"):   # content past the limit; whitespace past the slack
        f.write_text(over)
        with pytest.raises(UsageError, match="longer than the limit of 10 characters"):
            read_text(str(f), 10, "the statement", strips=True)


def test_the_stdin_bound_and_source_case_are_documented():
    """docs/scaffold.md did not say `checklist -` and `directive -` read 1,000,000 characters at most;
    `search --exclude-source` took a source in any case but its help, unlike --source's, did not say so."""
    from pathlib import Path

    from mathlas.cli.main import build_parser
    from mathlas.cli.scaffold import MAX_STDIN_CHARS

    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "scaffold.md").read_text().split())
    assert (f"`mathlas checklist -` and `mathlas directive -` read the statement or the problem from stdin, at most "
            f"{MAX_STDIN_CHARS:,} characters (`mathlas.cli.scaffold.MAX_STDIN_CHARS`") in doc
    search = build_parser().commands()["search"]
    helps = {a.dest: a.help for a in search.arguments}
    assert helps["sources"].endswith("(repeatable; any case)") and helps["exclude"].endswith("(repeatable; any case)")


def _run_on_a_terminal(argv: list[str], timeout: float = 120, env: dict | None = None) -> tuple[int, str]:
    """Run ``mathlas ARGV`` with stdout and stderr on a pseudo-terminal, as a person's shell does."""
    import os

    main_fd, tty = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "mathlas", *argv], stdout=tty, stderr=tty,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(tty)
    out = b""
    while True:
        try:
            chunk = os.read(main_fd, 4096)
        except OSError:   # the terminal closed with the process
            break
        if not chunk:
            break
        out += chunk
    os.close(main_fd)
    return proc.wait(timeout), out.decode()


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="no pseudo-terminals")
def test_a_long_tool_shows_its_progress_on_a_terminal_and_erases_it():
    """`conjecture` on a long decimal ran 25 s without a word. On a terminal a progress line now says
    what it computes and for how long, and is erased before the answer is printed."""
    pytest.importorskip("mpmath")
    x = "3.1415926535897932384626433832795028841971693993751" + "5" * 300
    rc, out = _run_on_a_terminal(["conjecture", x, "--timeout", "4"])
    assert rc == 1, out
    assert "\r\x1b[Kmathlas: computing (" in out and " s of 4 s" in out
    progress_end = out.rindex(" s of 4 s") + len(" s of 4 s")
    assert out[progress_end:].startswith("\r\x1b[K") and "continued fraction: [3; 7, 15" in out[progress_end:]
    assert "no relation found" in out[progress_end:]            # the answer after the erased line
    # not on a pipe: a log gets the answer alone
    piped = subprocess.run([sys.executable, "-m", "mathlas", "conjecture", x, "--timeout", "2"],
                           capture_output=True, text=True, timeout=120)
    assert "computing (" not in piped.stderr and "\x1b[K" not in piped.stderr + piped.stdout


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="no pseudo-terminals")
def test_funsearch_shows_its_progress_on_a_terminal(tmp_path):
    """funsearch ran the sandbox inside a call of its own (to say the time limit), which hid the
    terminal's progress line: a program that waits out --timeout showed nothing after the start line."""
    import os

    prog = tmp_path / "wait.py"
    prog.write_text("import time\n\ndef priority(el, n):\n    while True:\n        time.sleep(1)\n")
    env = {**os.environ, "MATHLAS_DATA_DIR": str(tmp_path / "data")}
    rc, out = _run_on_a_terminal(["funsearch", "evaluate", str(prog), "--param", "n=3", "--timeout", "4"], env=env)
    assert rc == 1, out
    assert out.startswith(f"mathlas: running {prog} in the sandbox; time limit 4 s")  # said once, as before
    assert "\r\x1b[Kmathlas: running the program … " in out and " s of 4 s" in out
    progress_end = out.rindex(" s of 4 s") + len(" s of 4 s")
    assert out[progress_end:] == ("\r\x1b[Ktimeout: the program ran past the wall-clock limit of 4 s; --timeout S "
                                  "gives it longer (at most 600 s)\r\n")


def test_a_long_problem_is_planned_not_refused(default_bundle_dir):
    """`directive` cut a problem at 20,000 characters but searched with up to 20,000 of its key terms,
    which every search refuses past 10,000 ("the query is 19,990 characters long"): a long problem's
    key terms are cut at a word to what a search takes."""
    from mathlas.request import MAX_QUERY_CHARS
    from mathlas.tools.directive import search_directive

    problem = "Let G be a finite group acting on a module over " + "x" * 15_000   # a pasted blob: one long term
    plan = search_directive(problem, bundle=str(default_bundle_dir))
    assert max(map(len, plan.key_terms)) > MAX_QUERY_CHARS and (plan.named_results or plan.subfields)


def test_the_parsers_own_options_are_argparses():
    """``Parser.options`` (what the did-you-mean hints and the docs' synopsis check read) holds every
    option argparse parses, those of argument groups too: ``search``'s paper filters and ``eval``'s
    ``--restrict``/``--no-restrict`` were missing (``mathlas search x --year-mn 3`` lost its hint).
    argparse's own list is read here, as the oracle only."""
    from mathlas.cli.main import build_parser

    def walk(parser, path):
        yield path, parser
        for name, sub in parser.commands().items():
            yield from walk(sub, f"{path} {name}")

    for path, parser in walk(build_parser(), "mathlas"):
        assert set(parser.options) == {o for a in parser._actions for o in a.option_strings}, path
    done = subprocess.run([sys.executable, "-m", "mathlas", "search", "x", "--year-mn", "3"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "(did you mean --year-min?)" in done.stderr, done.stderr


def test_a_source_both_kept_and_left_out_is_refused(capsys):
    rc, out, err = run_main(["search", "ring", "--source", "Stacks", "--exclude-source", "stacks"], capsys)
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "'stacks' is both in --source and in --exclude-source, so no document could pass" in err


def test_no_results_ends_its_line():
    """An empty answer printed "no results" without a newline: the next line (or the prompt) ran on."""
    import io

    from mathlas.cli.search import print_hits

    out = io.StringIO()
    print_hits([], out=out)
    assert out.getvalue() == "no results\n"

