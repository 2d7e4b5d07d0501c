"""A candidate given by its name ("Nakayama's lemma") is looked up, not split as a statement.

A new user typed ``mathlas scaffold --candidate "Nakayama's lemma"`` and got a checklist of the name
itself: no preconditions, conclusion "Nakayama's lemma". A text that names a result (no math, few
words, nothing the splitter reads as a hypothesis or a claim, a name's shape) is searched in the
bundle through ``mathlas.service`` and the first hit used when the match is strong; otherwise the
call is refused in one line naming the ids found. Checked on the installed default bundle through
the library, the human CLI, ``--json`` and a real MCP server.
"""
from __future__ import annotations

import json

import pytest

from mathlas.errors import UsageError
from mathlas.tools.scaffold import mapping_scaffold, names_a_result

PROBLEM = ("Let $R$ be a local ring with maximal ideal $\\mathfrak m$ and let $M$ be a finitely generated "
           "$R$-module with $\\mathfrak m M = M$. Prove that $M = 0$.")
NAME = "Nakayama's lemma"
UNKNOWN = "Quuxley's lemma"  # no result of that name anywhere


@pytest.fixture(scope="module")
def bundle(default_bundle_dir):
    return str(default_bundle_dir)


@pytest.fixture(scope="module")
def first_hit(bundle):
    """What the search every surface uses answers for NAME: its match and first hit."""
    from mathlas.request import SearchRequest
    from mathlas.service import search

    res = search(SearchRequest.make(NAME, 3), bundle)
    assert res.match == "strong" and res.hits, (res.match, [h.id for h in res.hits])
    return res.hits[0]


@pytest.mark.parametrize("text", [NAME, "Nakayama's lemma.", "the snake lemma", "fundamental theorem of algebra",
                                  "Gauss' lemma", "Hilbert's Nullstellensatz", "Cauchy–Schwarz inequality",
                                  "Lagrange's theorem on group orders"])
def test_names_read_as_names(text):
    assert names_a_result(text)


@pytest.mark.parametrize("text", [
    "stacks:00DV", "planetmath:NakayamasLemma",                      # ids are fetched, as before
    "Let $G$ be a cyclic group. Then $G$ is abelian.",               # hypotheses and a conclusion
    "A finite integral domain is a field.",                          # read through its subject
    "Fermat's last theorem holds",                                   # a verb: a claim
    "the theorem that every group of prime order is cyclic",
    "If a ring is Noetherian then so is its polynomial ring",
    "Primes are infinite", "a^2+b^2=c^2",                            # no name's shape / math
    "compactness", "Nakayama",                                       # no name's shape
    "Krull's theorem for every Noetherian local ring of finite dimension",  # too many words
])
def test_statements_and_ids_do_not(text):
    assert not names_a_result(text)


def test_a_name_is_looked_up(bundle, first_hit):
    m = mapping_scaffold(PROBLEM, NAME, bundle=bundle)
    assert m.candidate.by_name is not None
    assert (m.candidate.by_name.name, m.candidate.by_name.id, m.candidate.by_name.match) == (NAME, first_hit.id, "strong")
    assert m.candidate.by_name.title == (first_hit.name or first_hit.title)
    # the checklist is the document's, not the name's
    assert m.candidate.source == first_hit.id and m.answer_template["candidate"] == first_hit.id
    assert m.candidate.conclusion != NAME and m.candidate.preconditions
    assert [q.id for q in m.questions if q.kind == "precondition"]


def test_statements_and_ids_are_as_before(bundle, first_hit):
    m = mapping_scaffold(PROBLEM, first_hit.id, bundle=bundle)
    assert m.candidate.by_name is None and m.candidate.source == first_hit.id
    m = mapping_scaffold(PROBLEM, "Let $G$ be a cyclic group. Then $G$ is abelian.")  # no bundle opened
    assert m.candidate.by_name is None and m.candidate.source == "text" and m.candidate.conclusion == "$G$ is abelian"


def test_a_name_without_a_strong_match_is_refused(bundle):
    from mathlas.request import SearchRequest
    from mathlas.service import search

    res = search(SearchRequest.make(UNKNOWN, 3), bundle)
    assert res.match != "strong"
    with pytest.raises(UsageError) as e:
        mapping_scaffold(PROBLEM, UNKNOWN, bundle=bundle)
    message = str(e.value)
    assert "\n" not in message and "reads as a result's name" in message
    assert "pass the statement itself or a stable id" in message
    assert message.endswith("top ids found: " + ", ".join(f"{h.id} ({h.name or h.title})" for h in res.hits))


def test_cli_human_and_json(bundle, first_hit, capsys):
    from mathlas.cli.main import main

    assert main(["scaffold", "--problem", PROBLEM, "--candidate", NAME, "-b", bundle]) == 0
    out = capsys.readouterr().out.splitlines()
    title = first_hit.name or first_hit.title
    assert out[0] == f"--candidate read as a name: using {first_hit.id} {title} (match strong)"
    assert out[1] == f"statement ({first_hit.id}):"
    assert f"  {NAME}" not in out[2:out.index("preconditions:")]  # the document's statement, not the name
    assert main(["scaffold", "--problem", PROBLEM, "--candidate", NAME, "-b", bundle, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["candidate"]["by_name"] == {"name": NAME, "id": first_hit.id, "title": title, "match": "strong"}
    assert answer["candidate"]["source"] == first_hit.id and answer["answer_template"]["candidate"] == first_hit.id
    # a statement: no lookup, the field null
    assert main(["scaffold", "--problem", PROBLEM, "--candidate", "Let $G$ be a group. Then $G$ is a group.",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["candidate"]["by_name"] is None


def test_cli_refusal_is_one_line(bundle, capsys):
    from mathlas.cli.main import main

    assert main(["scaffold", "--problem", PROBLEM, "--candidate", UNKNOWN, "-b", bundle]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = [line for line in err.splitlines() if line.startswith("mathlas:")]
    assert len(lines) == 1 and "pass the statement itself or a stable id; top ids found: " in lines[0]


@pytest.mark.slow
def test_over_mcp(bundle, first_hit):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, error_text, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=bundle))
    try:
        m = ok(server.call("mapping_scaffold", problem=PROBLEM, candidate=NAME))
        assert m["candidate"]["by_name"]["id"] == first_hit.id and m["candidate"]["by_name"]["match"] == "strong"
        assert m["candidate"]["source"] == first_hit.id and m["candidate"]["conclusion"] != NAME
        text = error_text(server.call("mapping_scaffold", problem=PROBLEM, candidate=UNKNOWN))
        assert "reads as a result's name" in text and "top ids found: " in text
        m = ok(server.call("mapping_scaffold", problem=PROBLEM, candidate=first_hit.id))
        assert m["candidate"].get("by_name") is None and m["candidate"]["source"] == first_hit.id
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


# ------------------------------------------------------------------------------ applicability_checklist
# The same walkthrough found `mathlas checklist "Nakayama's lemma"` splitting the name as the statement.

def test_checklist_looks_a_name_up(bundle, first_hit):
    from mathlas.tools.scaffold import applicability_checklist

    c = applicability_checklist(NAME, bundle=bundle)
    assert c.by_name is not None and (c.by_name.name, c.by_name.id, c.by_name.match) == (NAME, first_hit.id, "strong")
    assert c.source == first_hit.id and c.conclusion != NAME and c.preconditions
    c = applicability_checklist(NAME, problem=PROBLEM, bundle=bundle)
    assert c.by_name.id == first_hit.id and c.problem_goal
    # a statement or an id: no lookup, as before
    assert applicability_checklist(first_hit.id, bundle=bundle).by_name is None
    c = applicability_checklist("Let $G$ be a cyclic group. Then $G$ is abelian.")
    assert c.by_name is None and c.source == "text" and c.conclusion == "$G$ is abelian"
    with pytest.raises(UsageError) as e:
        applicability_checklist(UNKNOWN, bundle=bundle)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"the statement {UNKNOWN!r} reads as a result's name")
    assert "pass the statement itself or a stable id; top ids found: " in message


def test_checklist_cli_human_and_json(bundle, first_hit, capsys):
    from mathlas.cli.main import main

    assert main(["checklist", NAME, "-b", bundle]) == 0
    out = capsys.readouterr().out.splitlines()
    title = first_hit.name or first_hit.title
    assert out[0] == f"statement read as a name: using {first_hit.id} {title} (match strong)"
    assert out[1] == f"statement ({first_hit.id}):"
    assert out[out.index("conclusion:") + 1] != f"  {NAME}"
    assert main(["checklist", NAME, "-b", bundle, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["by_name"] == {"name": NAME, "id": first_hit.id, "title": title, "match": "strong"}
    assert answer["source"] == first_hit.id and answer["preconditions"]
    assert main(["checklist", "Let $G$ be a group. Then $G$ is a group.", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_name"] is None
    assert main(["checklist", UNKNOWN, "-b", bundle]) == 2
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("mathlas:")]
    assert out == "" and len(lines) == 1 and "top ids found: " in lines[0]


@pytest.mark.slow
def test_checklist_over_mcp(bundle, first_hit):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, error_text, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=bundle))
    try:
        c = ok(server.call("applicability_checklist", statement=NAME))
        assert c["by_name"]["id"] == first_hit.id and c["by_name"]["match"] == "strong"
        assert c["source"] == first_hit.id and c["conclusion"] != NAME
        text = error_text(server.call("applicability_checklist", statement=UNKNOWN))
        assert "reads as a result's name" in text and "top ids found: " in text
        c = ok(server.call("applicability_checklist", statement=first_hit.id))
        assert c.get("by_name") is None and c["source"] == first_hit.id
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()
