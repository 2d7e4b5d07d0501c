"""The ``mathlas`` command through its ``--json`` output and exit codes (real subprocesses)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import EVAL


def run(*args, env=None, check_rc=None):
    proc = subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300)
    if check_rc is not None:
        assert proc.returncode == check_rc, (proc.returncode, proc.stdout, proc.stderr)
    return proc


@pytest.mark.slow
def test_search_json_shape(tiny_bundle_dir):
    p = run("search", "a local ring with a finitely generated module", "-k", "4", "--bundle",
            str(tiny_bundle_dir), "--json", check_rc=0)
    data = json.loads(p.stdout)
    assert data["query"] == "a local ring with a finitely generated module"
    assert data["bundle"] == "tiny-0.1.0"
    assert 1 <= len(data["hits"]) <= 4
    for h in data["hits"]:
        assert set(h) == {"id", "source", "kind", "heading", "label", "context", "name", "title", "text", "link",
                          "link_kind", "license", "score", "ranks", "fields", "also_in"}
        assert set(h["ranks"]) == {"lexical", "dense"} and h["fields"] == {}  # informal hits carry no extra fields
    assert p.stderr == ""  # no talk on a plain search


@pytest.mark.slow
def test_search_filters_and_modes(tiny_bundle_dir):
    p = run("search", "exercise", "-k", "20", "--source", "proofnet", "--mode", "lexical", "--bundle",
            str(tiny_bundle_dir), "--json", check_rc=0)
    hits = json.loads(p.stdout)["hits"]
    assert hits and {h["source"] for h in hits} == {"proofnet"}
    assert all(h["ranks"]["dense"] is None for h in hits)
    p = run("search", "theorem", "-k", "20", "--exclude-source", "stacks", "--bundle", str(tiny_bundle_dir),
            "--json", check_rc=0)
    assert all(h["source"] != "stacks" for h in json.loads(p.stdout)["hits"])


@pytest.mark.slow
def test_human_output(tiny_bundle_dir):
    p = run("search", "Noetherian ring", "-k", "2", "--bundle", str(tiny_bundle_dir), check_rc=0)
    lines = p.stdout.splitlines()
    assert lines[0].startswith(" 1. ") and ":" in lines[0]
    assert "[" in lines[1] and "#" in lines[1]


@pytest.mark.slow
def test_bundle_from_environment(tiny_bundle_dir):
    p = run("search", "ring", "--json", env={"MATHLAS_BUNDLE": str(tiny_bundle_dir)}, check_rc=0)
    assert json.loads(p.stdout)["bundle"] == "tiny-0.1.0"


@pytest.mark.slow
def test_show_json(tiny, tiny_bundle_dir):
    doc_id = tiny.table.column("id")[3].as_py()
    p = run("show", doc_id, "--bundle", str(tiny_bundle_dir), "--json", check_rc=0)
    d = json.loads(p.stdout)
    assert d["id"] == doc_id and d["body"] and d["license"]


@pytest.mark.parametrize("args, rc, message", [
    (["search", ""], 2, "empty"),
    (["search", "   "], 2, "empty"),
    (["search", "ring", "-k", "0"], 2, "k must be"),
    (["search", "ring", "-k", "100000"], 2, "k must be"),
    (["search", "ring", "--source", "nosuch"], 2, "unknown source"),
    (["show", "stacks:ZZZZ"], 2, "no document"),
])
@pytest.mark.slow
def test_bad_input_one_line_errors(tiny_bundle_dir, args, rc, message):
    p = run(*args, "--bundle", str(tiny_bundle_dir), check_rc=rc)
    assert message in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stdout == ""


def test_missing_bundle_is_a_data_error(tmp_path):
    p = run("search", "ring", "--bundle", str(tmp_path / "nothing"), check_rc=1)
    assert "no bundle" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
def test_long_query_cli(tiny_bundle_dir):
    # up to the one limit (mathlas.request.MAX_QUERY_CHARS, 10,000) a query is searched; past it refused
    p = run("search", "ring " * 2000, "-k", "3", "--bundle", str(tiny_bundle_dir), "--json", check_rc=0)
    assert json.loads(p.stdout)["hits"]
    p = run("search", "ring " * 5000, "-k", "3", "--bundle", str(tiny_bundle_dir), "--json", check_rc=2)
    assert p.stdout == "" and "over the limit of 10,000" in p.stderr and p.stderr.count("\n") == 1


@pytest.mark.slow
def test_eval_json(tiny, tiny_bundle_dir, tmp_path):
    ids = tiny.table.column("id").to_pylist()
    texts = tiny.table.column("text").to_pylist()
    qfile = tmp_path / "q.jsonl"
    first = {}
    for i, t in zip(ids, texts):
        first.setdefault(i.split(":")[0], (i, t))
    informal = [first[s] for s in ("stacks", "planetmath", "hott", "openlogic", "proofnet")]
    # two areas, one with a name longer than the label column's 22 characters (it shifted its row's cells)
    qfile.write_text("".join(json.dumps({"id": f"q{n}", "query": t[:150], "targets": [i], "style": "precise",
                                         "area": "x" if n % 2 else "homological algebra of sheaves"}) + "\n"
                             for n, (i, t) in enumerate(informal)))
    p = run("eval", str(qfile), "--bundle", str(tiny_bundle_dir), "--json", check_rc=0)
    r = json.loads(p.stdout)
    assert r["n"] == 5
    for mode in ("lexical", "dense", "hybrid"):
        assert set(r[mode]) >= {"p@1", "hit@10", "hit@20", "mrr@20"}
        assert r[mode]["hit@10"] >= 0.8  # queries are the documents' own text
    p = run("eval", str(qfile), "--bundle", str(tiny_bundle_dir), check_rc=0)
    assert "hybrid" in p.stdout and "by source" in p.stdout and "by style" in p.stdout
    assert "planetmath (1)" in p.stdout
    block = p.stdout.split("by area (hit@10 / mrr@20)\n", 1)[1].splitlines()
    rows = [line for line in block[1:] if line.strip()]
    assert [r.split(" (")[0] for r in rows] == ["homological algebra of sheaves", "x"]
    assert len({len(r) for r in rows}) == 1 and len(block[0]) == len(rows[0])   # the columns line up


def test_eval_bad_file(tiny_bundle_dir, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    p = run("eval", str(bad), "--bundle", str(tiny_bundle_dir), check_rc=2)
    assert "bad.jsonl:1" in p.stderr
    p = run("eval", str(tmp_path / "none.jsonl"), "--bundle", str(tiny_bundle_dir), check_rc=2)
    assert "no query file" in p.stderr


def test_usage_errors_exit_2():
    assert run("search").returncode == 2
    assert run("frobnicate").returncode == 2
    assert run("--help").returncode == 0


def test_dev_queries_file_parses():
    if not (EVAL / "informal-dev.jsonl").is_file():
        pytest.skip("shared/eval not present")
    from mathlas.retrieval_eval import label_prefixes, load_queries

    qs = load_queries(EVAL / "informal-dev.jsonl")
    assert len(qs) == 40 and label_prefixes(qs) == ("hott", "openlogic", "planetmath", "proofnet", "stacks")
    assert label_prefixes(load_queries(EVAL / "formal-dev.jsonl")) == ("lean",)


@pytest.mark.slow
def test_eval_scores_a_set_of_any_source(tmp_path, encoder_dir):
    # a user's own set: targets in a source of the generic reader, beside another source. The ranked
    # list is restricted to the targets' source (before: to five informal prefixes, so it scored 0)
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    rows = [{"id": f"t{i}", "name": name, "body": body} for i, (name, body) in enumerate([
        ("Sylow", "Every finite group has a Sylow p-subgroup for each prime p dividing its order."),
        ("Lagrange", "The order of a subgroup of a finite group divides the order of the group."),
        ("Cauchy", "A finite group whose order is divisible by a prime p has an element of order p."),
        ("Bezout", "For integers a and b there are integers x and y with ax + by = gcd(a, b)."),
        ("Fermat", "For a prime p and an integer a not divisible by p, a^(p-1) is 1 modulo p.")])]
    queries = ["Sylow subgroups exist", "order of a subgroup divides the group order",
               "element of prime order in a finite group", "Bezout identity gcd", "Fermat's little theorem"]
    noise = [{"id": f"n{i}", "body": q} for i, q in enumerate(queries)]  # each query's own words, verbatim
    for name, data in (("mine.jsonl", rows), ("noise.jsonl", noise)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in data))
    recipe = tmp_path / "own.toml"
    recipe.write_text(f"""name = "own"
version = "0.1.0"
[encoder]
path = "{encoder_dir.as_posix()}"
[[sources]]
reader = "generic"
path = "mine.jsonl"
options = {{ source = "mine", license = "CC0-1.0" }}
[[sources]]
reader = "generic"
path = "noise.jsonl"
options = {{ source = "noise", license = "CC0-1.0" }}
""")
    bundle = build(load_recipe(recipe, tmp_path), tmp_path / "own-0.1.0", cache_dir=None, quiet=True)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps({"id": f"q{i}", "query": q, "targets": [f"mine:t{i}"]}) + "\n"
                             for i, q in enumerate(queries)))
    r = json.loads(run("eval", str(qfile), "--bundle", str(bundle), "--json", "--mode", "lexical", check_rc=0).stdout)
    assert r["restricted_to"] == ["mine"] and r["lexical"]["hit@10"] == 1.0 and r["lexical"]["mrr@20"] > 0.5
    # the whole bundle: the noise documents, which are the queries themselves, now rank first
    whole = json.loads(run("eval", str(qfile), "--bundle", str(bundle), "--json", "--mode", "lexical",
                           "--no-restrict", check_rc=0).stdout)
    assert whole["restricted_to"] == "all" and whole["lexical"]["mrr@20"] < r["lexical"]["mrr@20"]
    chosen = json.loads(run("eval", str(qfile), "--bundle", str(bundle), "--json", "--mode", "lexical",
                            "--restrict", "noise", check_rc=0).stdout)
    assert chosen["restricted_to"] == ["noise"] and chosen["lexical"]["hit@10"] == 0.0
    p = run("eval", str(qfile), "--bundle", str(bundle), "--restrict", "nope", check_rc=2)
    assert "has no source nope" in p.stderr


def test_an_id_the_bundle_lacks_says_what_to_do(tiny):
    """One line with a next step: the id meant (ids are case-sensitive), the sources ids begin
    with when the prefix is none of them, or a search."""
    from mathlas.errors import UsageError

    sources = list(tiny.manifest.sources)
    real = next(i for i in tiny.table.column("id").to_pylist()  # Stacks tags are read in any case
                if not i.startswith("stacks:") and i != i.upper())
    with pytest.raises(UsageError) as e:
        tiny.get(real.upper())
    assert f"did you mean {real!r}? (ids are case-sensitive)" in str(e.value)
    with pytest.raises(UsageError) as e:
        tiny.get("nosuch:1")
    assert str(e.value).startswith("no document with id 'nosuch:1' in bundle ")
    assert f"its ids begin with {sources[0]}:" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(UsageError) as e:
        tiny.get(f"{sources[0]}:no-such-document")
    assert str(e.value).endswith("; a search shows a document's id")
    with pytest.raises(UsageError) as e:
        tiny.get("x" * 5000)  # a pasted page: repeated cut short, still one line with its next step
    assert str(e.value).startswith(f"no document with id '{'x' * 100}…' in bundle ") and len(str(e.value)) < 400
    assert "its ids begin with" in str(e.value) and "\n" not in str(e.value)


def test_an_id_without_its_source_names_the_full_id(tiny):
    """``mathlas show 00DV`` listed the id prefixes though ``stacks:00DV`` exists: an id that is no
    source's is looked up behind each source's prefix, and every id found is suggested."""
    from mathlas.errors import UsageError

    full = next(i for i in tiny.table.column("id").to_pylist() if i.startswith("stacks:"))
    bare = full.split(":", 1)[1]
    for asked in (bare, bare.lower()):
        with pytest.raises(UsageError) as e:
            tiny.get(asked)
        assert str(e.value) == (f"no document with id {asked!r} in bundle tiny; did you mean {full!r}? "
                                "(an id begins with its source)")


def test_a_key_under_several_sources_names_each():
    import pyarrow as pa

    from mathlas.engine import _ids_like, _no_document

    ids = pa.array(["hott:2.1", "planetmath:Group", "stacks:00DV", "proofwiki:Group", "stacks:0ABC"])
    sources = ["stacks", "planetmath", "hott", "proofwiki"]
    same = _ids_like(ids, "Group", sources)
    assert same == ["planetmath:Group", "proofwiki:Group"]  # in the bundle's order
    assert _no_document("Group", "b", same, sources) == ("no document with id 'Group' in bundle b; did you mean "
                                                         "'planetmath:Group' or 'proofwiki:Group'? (an id begins "
                                                         "with its source)")
    assert _ids_like(ids, "Nothing", sources) == []
    assert _ids_like(ids, "stacks:00dv", sources) == ["stacks:00DV"]  # a known source: only the case differs


def test_show_a_bare_id_in_its_human_form(default_bundle_dir):
    p = run("show", "00DV", "--bundle", str(default_bundle_dir), check_rc=2)
    assert p.stdout == ""
    assert p.stderr == ("mathlas: no document with id '00DV' in bundle informal; did you mean 'stacks:00DV'? "
                        "(an id begins with its source)\n")
    assert run("show", "stacks:00DV", "--bundle", str(default_bundle_dir), check_rc=0).stdout


def test_show_prints_a_stacks_list_as_numbered_lines(default_bundle_dir):
    """`mathlas show` in its human form: Stacks' Nakayama lemma (an enumerate of twelve items) reads as
    numbered lines with its math as written; --json keeps the body as the source writes it."""
    p = run("show", "stacks:00DV", "--bundle", str(default_bundle_dir), check_rc=0)
    out = p.stdout
    assert "\\begin{enumerate}" not in out and "\\item" not in out
    assert "\n  1. If $IM = M$ and $M$ is finite, then there exists an $f \\in 1 + I$ such that $fM = 0$." in out
    assert "\n  12. If $\\{x_\\alpha\\}_{\\alpha \\in A}$ is a set of elements of $M$" in out
    assert "Let $I \\subset R$ be an ideal.\n  1. " in out  # no blank line opens the list or an item
    d = json.loads(run("show", "stacks:00DV", "--bundle", str(default_bundle_dir), "--json", check_rc=0).stdout)
    assert "\\begin{enumerate}" in d["body"] and d["body"].count("\\item") == 12
