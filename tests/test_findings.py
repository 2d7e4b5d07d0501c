"""The findings store and add_finding: add/list/remove, bad input, search fusion, concurrency, crashes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mathlas.errors import UsageError

NAKAYAMA = ("Let R be a commutative ring, I an ideal contained in the Jacobson radical and M a finitely "
            "generated R-module. If IM = M then M = 0.")
URL = "https://en.wikipedia.org/wiki/Nakayama%27s_lemma"


@pytest.fixture
def data(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path))
    return tmp_path


def store_file(data: Path) -> Path:
    return data / "findings" / "findings.jsonl"


def cli(*argv: str) -> tuple[int, str]:
    import io
    from contextlib import redirect_stdout

    from mathlas.cli import findings as cli_findings

    import argparse

    p = argparse.ArgumentParser()
    cli_findings.add_parser(p.add_subparsers(dest="command"))
    out = io.StringIO()
    with redirect_stdout(out):
        args = p.parse_args(["findings", *argv])
        rc = args.run(args)
    return rc, out.getvalue()


# ------------------------------------------------------------------------------ add / list / remove

def test_add_list_duplicate_remove(data):
    from mathlas.tools.findings import add_finding

    r = add_finding(NAKAYAMA, URL, name="Nakayama's lemma", slogan="kills modules with IM = M")
    assert r.added and not r.duplicate and r.id.startswith("finding:") and len(r.id) == len("finding:") + 16
    assert r.provenance == "web_added" and r.added_at.endswith("Z") and r.source_url == URL
    assert r.next and r.next[0].tool == "search_existing_math"
    # same statement up to whitespace, another URL: not stored twice
    again = add_finding("  " + NAKAYAMA.replace(" ", "\n  ", 3), "https://example.org/other")
    assert again.id == r.id and not again.added and again.duplicate and again.source_url == URL
    other = add_finding("Every finite integral domain is a field.", "http://example.org/fid")
    lines = store_file(data).read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0]) == {"id": r.id, "statement": NAKAYAMA, "source_url": URL,
                                    "name": "Nakayama's lemma", "slogan": "kills modules with IM = M",
                                    "added": r.added_at, "provenance": "web_added"}
    rc, out = cli("list", "--json")
    assert rc == 0 and [json.loads(x)["id"] for x in out.splitlines()] == [r.id, other.id]
    rc, out = cli("remove", r.id, "--json")
    assert rc == 0 and json.loads(out)["removed"]["id"] == r.id
    rc, out = cli("list", "--json")
    assert [json.loads(x)["id"] for x in out.splitlines()] == [other.id]
    with pytest.raises(UsageError, match="no finding"):
        cli("remove", r.id)
    assert not list((data / "findings").glob(".tmp-*"))  # the rewrite left no temp file


def test_list_says_how_to_get_vectors(data, capsys, monkeypatch):
    """``findings list`` right after ``findings add`` said "0 with vectors" and nothing more."""
    from mathlas.engine import OPEN_BUNDLES

    # as in a new process: no bundle with its encoder loaded (an earlier test's would embed the finding)
    monkeypatch.setattr(OPEN_BUNDLES, "loaded", lambda: [])
    rc, out = cli("add", NAKAYAMA, URL)
    assert rc == 0 and out.endswith("  added\n")
    assert "no vector yet (no encoder was loaded): `mathlas findings reindex` embeds and stores it" in capsys.readouterr().err
    rc, out = cli("list")
    err = capsys.readouterr().err
    assert rc == 0 and "  -  " in out and "1 finding(s), 0 with vectors;" in err
    assert "1 without a vector (`-`): `mathlas findings reindex` embeds and stores it" in err
    rc, out = cli("add", NAKAYAMA, URL, "--json")
    assert json.loads(out)["vector"] is False and "reindex" not in capsys.readouterr().err  # --json: the field says it


def test_remove_takes_the_hash_alone(data, capsys):
    """``findings remove dd10824f34541db7`` (the id without ``finding:``) was refused: the hash that
    names one finding is taken, in any case; only its start removes nothing and names the id meant."""
    from mathlas.tools.findings import add_finding

    a = add_finding(NAKAYAMA, URL)
    b = add_finding("Every finite integral domain is a field.", "http://example.org/fid")
    c = add_finding("A compact Hausdorff space is normal.", "https://example.org/ch")
    capsys.readouterr()
    rc, out = cli("remove", a.id.removeprefix("finding:"))
    assert (rc, out, capsys.readouterr().err) == (0, "", f"removed {a.id}\n")
    rc, out = cli("remove", " " + b.id.removeprefix("finding:").upper(), "--json")
    assert rc == 0 and json.loads(out)["removed"]["id"] == b.id
    start = c.id.removeprefix("finding:")[:6]
    for asked in (start, "finding:" + start):
        with pytest.raises(UsageError) as e:
            cli("remove", asked)
        assert str(e.value) == (f"no finding with id {asked!r}; did you mean {c.id}? "
                                "(`mathlas findings list` shows them)")
    with pytest.raises(UsageError, match="^no finding with id '0000000000000000' in the findings store; "):
        cli("remove", "0000000000000000")
    assert [json.loads(x)["id"] for x in cli("list", "--json")[1].splitlines()] == [c.id]


@pytest.mark.slow
def test_remove_by_hash_in_its_human_form(data):
    from mathlas.tools.findings import add_finding

    f = add_finding(NAKAYAMA, URL)
    digits = f.id.removeprefix("finding:")

    def mathlas(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mathlas", "findings", *argv], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "MATHLAS_DATA_DIR": str(data)})

    p = mathlas("remove", digits[:8])
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"mathlas: no finding with id {digits[:8]!r}; did you mean {f.id}? (`mathlas findings list` shows them)\n"
    p = mathlas("remove", digits)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", f"removed {f.id}\n")


@pytest.mark.slow
def test_a_url_with_a_bad_port_is_refused_in_one_line(data):
    """walk14: ``findings add S http://localhost:99999/x`` was stored; urllib cannot open such a URL."""
    p = subprocess.run([sys.executable, "-m", "mathlas", "findings", "add", NAKAYAMA, "http://localhost:99999/x"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "MATHLAS_DATA_DIR": str(data)})
    assert (p.returncode, p.stdout, p.stderr) == (
        2, "", "mathlas: source_url's port must be a number from 1 to 65535, got 'http://localhost:99999/x'; "
               "correct it or leave it out (https://host/path)\n")
    assert not store_file(data).exists()
    from mathlas.tools.findings import add_finding

    assert add_finding(NAKAYAMA, "http://localhost:8080/x").source_url == "http://localhost:8080/x"


def test_a_url_with_an_open_bracket_is_refused_in_one_line(data, capsys):
    """``findings add S 'http://[::1/x'`` ended in urlparse's traceback (ValueError: Invalid IPv6 URL, exit 1)."""
    from mathlas.cli.main import main
    from mathlas.tools.findings import add_finding

    assert main(["findings", "add", NAKAYAMA, "http://[::1/x"]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", "mathlas: source_url must be an http(s) URL like https://arxiv.org/abs/2101.00001, "
                                  "got 'http://[::1/x'; correct its host (an IPv6 address goes whole in brackets: "
                                  "http://[2001:db8::1]/paper)\n")
    assert not store_file(data).exists()
    assert add_finding(NAKAYAMA, "http://[::1]:8080/x").source_url == "http://[::1]:8080/x"


@pytest.mark.parametrize("args, message", [
    (("", URL), "statement is empty"),
    (("   \n", URL), "statement is empty"),
    ((None, URL), "statement is empty"),
    (("x" * 20_001, URL), "limit is 20,000"),
    ((NAKAYAMA, ""), "source_url is required"),
    ((NAKAYAMA, "ftp://example.org/x"), "http(s) URL"),
    ((NAKAYAMA, "file:///etc/passwd"), "http(s) URL"),
    ((NAKAYAMA, "javascript:alert(1)"), "http(s) URL"),
    ((NAKAYAMA, "https://"), "http(s) URL"),
    ((NAKAYAMA, "https://exa mple.org"), "http(s) URL"),
    ((NAKAYAMA, "http://:80/x"), "http(s) URL"),  # a port and no host
    ((NAKAYAMA, "http://localhost:99999/x"), "source_url's port must be a number from 1 to 65535"),
    ((NAKAYAMA, "https://example.org:http/x"), "source_url's port must be a number from 1 to 65535"),
    ((NAKAYAMA, "https://example.org:0/x"), "source_url's port must be a number from 1 to 65535"),
    ((NAKAYAMA, "http://[::1/x"), "correct its host"),  # urlparse's ValueError: a traceback, exit 1
    ((NAKAYAMA, "http://[zz]/x"), "correct its host"),
    ((NAKAYAMA, URL, "n" * 501), "name is 501"),
    ((NAKAYAMA, URL, None, 3), "slogan must be text"),
])
def test_bad_input(data, args, message):
    from mathlas.tools.findings import add_finding

    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        add_finding(*args)
    assert not store_file(data).exists()


# ------------------------------------------------------------------------------ search fusion

def test_a_finding_asked_for_by_its_name_is_a_clear_match(data, tiny_bundle_dir):
    """The walkthrough: add_finding, then searching the finding's exact name answered "none" (the
    sources may not hold this) over the finding itself, first."""
    from mathlas.tools.findings import add_finding
    from mathlas.tools.informal import search_existing_math

    add_finding("If the sequence a_n is bounded and monotone then it converges to its supremum.",
                "https://example.org/walk", name="walk test finding")
    for query in ("walk test finding", "Walk-test finding."):
        res = search_existing_math(query, k=5, bundle=str(tiny_bundle_dir))
        assert res.hits[0].id.startswith("finding:") and res.match == "strong", (query, res.match, res.hits[0].id)
    other = search_existing_math("walk test", k=5, bundle=str(tiny_bundle_dir))   # not its name: no rule
    assert other.match != "strong" or not other.hits[0].id.startswith("finding:")


def test_finding_is_searchable_at_once(data, tiny_bundle_dir):
    from mathlas.tools.findings import add_finding
    from mathlas.tools.informal import get_by_id, search_existing_math

    bundle = str(tiny_bundle_dir)
    before = search_existing_math("Jacobson radical Nakayama", k=5, mode="lexical", bundle=bundle)
    assert all(set(h.ranks) == {"lexical", "dense"} for h in before.hits)  # no findings: unchanged shape
    r = add_finding(NAKAYAMA, URL, name="Nakayama's lemma")
    for mode in ("lexical", "hybrid"):
        res = search_existing_math("Jacobson radical Nakayama", k=5, mode=mode, bundle=bundle)
        top = [h for h in res.hits if h.id == r.id]
        assert top, (mode, [h.id for h in res.hits])
        h = top[0]
        assert (h.source, h.kind, h.link, h.license, h.title) == ("findings", "finding", URL, "unknown (web)", "")
        assert h.name == "Nakayama's lemma" and "Jacobson" in h.text and h.ranks["lexical"] == 1
        assert res.hits.index(h) <= 1 and len(res.hits) <= 5
        assert all(set(x.ranks) == {"lexical", "dense"} for x in res.hits)  # one shape, findings or not
    only = search_existing_math("Jacobson radical", k=5, source_filter={"include": ["findings"]}, bundle=bundle)
    assert [h.id for h in only.hits] == [r.id]
    kinds = search_existing_math("Jacobson radical", k=5, kinds=["finding"], mode="lexical", bundle=bundle)
    assert [h.id for h in kinds.hits] == [r.id]
    for kw in ({"source_filter": {"exclude": ["findings"]}}, {"source_weights": {"findings": 0}},
               {"kinds": ["theorem"]}):
        res = search_existing_math("Jacobson radical Nakayama", k=5, mode="lexical", bundle=bundle, **kw)
        assert r.id not in [h.id for h in res.hits], kw
    unrelated = search_existing_math("zzzqqq", k=5, mode="lexical", bundle=bundle)
    assert r.id not in [h.id for h in unrelated.hits]
    doc = get_by_id(r.id)
    assert doc.body == NAKAYAMA and doc.link == URL and doc.fields["provenance"] == "web_added"
    with pytest.raises(UsageError, match="unknown source 'nope'"):
        search_existing_math("ring", source_filter={"include": ["nope"]}, bundle=bundle)


def test_reindex_adds_vectors_and_dense_search(data, tiny_bundle_dir):
    from mathlas.findings.store import open_store
    from mathlas.tools.findings import add_finding
    from mathlas.tools.informal import search_existing_math

    bundle = str(tiny_bundle_dir)
    ids = [add_finding(NAKAYAMA, URL, name="Nakayama's lemma").id,
           add_finding("Every finite integral domain is a field.", "https://example.org/fid").id]
    rc, out = cli("reindex", "--bundle", bundle, "--json", "-q")
    assert rc == 0 and json.loads(out)["vectors"] == 2
    ids_v, mat, _ = open_store().vectors()
    assert sorted(ids_v) == sorted(ids) and mat.shape[0] == 2
    assert json.loads(cli("reindex", "--bundle", bundle, "--json", "-q")[1])["embedded"] == 0
    res = search_existing_math("finite integral domain field", k=5, mode="dense", bundle=bundle)
    f = [h for h in res.hits if h.source == "findings"]
    assert f and f[0].ranks["dense"] and f[0].link == "https://example.org/fid"
    # with the encoder now loaded, a new finding gets its vector at once
    r = add_finding("A compact Hausdorff space is normal.", "https://example.org/ch")
    assert r.vector and r.id in open_store().vectors()[0]
    cli("remove", r.id)
    assert r.id not in open_store().vectors()[0]


# ------------------------------------------------------------------------------ concurrency and crashes

WRITER = textwrap.dedent("""
    import sys
    from mathlas.findings.store import FindingsStore
    store = FindingsStore(sys.argv[1])
    tag, n = sys.argv[2], int(sys.argv[3])
    print("ready", flush=True)
    for i in range(n):
        store.add(f"Statement {tag} number {i}: every widget of order {i} is a gadget.", "https://example.org/" + tag)
""")


@pytest.mark.slow
def test_two_processes_appending_lose_nothing(data):
    from mathlas.findings.store import FindingsStore

    root = data / "findings"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), tag, "500"]) for tag in ("a", "b")]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    found = FindingsStore(root).all()
    assert len(found) == 1000 and len({f.id for f in found}) == 1000
    lines = (root / "findings.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(x) for x in lines[:-1])


def test_killed_writer_leaves_a_readable_store(data):
    from mathlas.findings.store import FindingsStore

    root = data / "findings"
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(root), "k", "100000"], stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    path = root / "findings.jsonl"
    deadline = time.time() + 30
    while (not path.exists() or path.stat().st_size < 20_000) and time.time() < deadline:
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    store = FindingsStore(root)
    found = store.all()
    assert len(found) >= 50
    assert store.add(NAKAYAMA, URL)[1]
    assert len(FindingsStore(root).all()) == len(found) + 1


def test_torn_last_line_is_skipped_and_next_append_starts_fresh(data, caplog):
    from mathlas.findings.store import FindingsStore

    root = data / "findings"
    store = FindingsStore(root)
    a, _ = store.add(NAKAYAMA, URL)
    b, _ = store.add("Every finite integral domain is a field.", "https://example.org/fid")
    path = root / "findings.jsonl"
    whole = path.read_bytes()
    with open(path, "ab") as fh:  # what a crash in the middle of os.write leaves
        fh.write(whole.splitlines(keepends=True)[0][:37])
    fresh = FindingsStore(root)
    assert [f.id for f in fresh.all()] == [a.id, b.id]
    assert "incomplete last line" in caplog.text  # a logged warning (the library never prints)
    c, added = fresh.add("A compact Hausdorff space is normal.", "https://example.org/ch")
    assert added
    raw = path.read_bytes()
    assert raw.startswith(whole) and raw.endswith(b"\n") and raw.count(b"\n") == 4
    assert [f.id for f in FindingsStore(root).all()] == [a.id, b.id, c.id]
    # a damaged middle line: skipped too; remove's rewrite drops it
    assert [f.id for f in FindingsStore(root).all()] == [a.id, b.id, c.id]
    FindingsStore(root).remove(b.id)
    assert path.read_bytes().count(b"\n") == 2
    assert [f.id for f in FindingsStore(root).all()] == [a.id, c.id]
    # a reader that saw the torn tail picks up the completed lines (incremental parse)
    assert [f.id for f in fresh.all()] == [a.id, c.id]


def test_tool_module_is_light():
    code = ("import sys, mathlas.tools.findings; "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'onnxruntime', 'tantivy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------ findings compete on the bundle's evidence

FID = "Every finite integral domain is a field."
# Varied queries that are not about finite integral domains (issue 20: before, one saved finding
# was the top hit of most of them)
UNRELATED_QUERIES = [
    "integral ring extensions satisfy going up",
    "a Noetherian topological space has finitely many irreducible components",
    "divisible abelian groups are injective Z-modules",
    "the number of Sylow p-subgroups is congruent to 1 mod p and divides the order",
    "there are n^(n-2) labelled trees on n vertices",
    "in a normal space two disjoint closed sets can be separated by a continuous function",
    "a type with decidable equality is a set",
    "a set is computable iff both it and its complement are computably enumerable",
    "compact Hausdorff space",
    "Nakayama's lemma",
    "prime number theorem",
    "Cauchy sequence",
]


def _embedded(bundle_dir: Path, statements: list[tuple[str, str]]) -> list[str]:
    """Add findings ((statement, name)) to the store and embed them with the bundle's encoder."""
    import mathlas
    from mathlas.findings.store import open_store
    from mathlas.tools.findings import add_finding

    ids = [add_finding(s, "https://example.org/f", name=n or None).id for s, n in statements]
    open_store().embed(mathlas.open_bundle(bundle_dir))
    return ids


def test_one_unrelated_finding_does_not_take_over_search(data, default_bundle_dir):
    from mathlas.tools.informal import search_existing_math

    (fid,) = _embedded(default_bundle_dir, [(FID, "")])
    for mode in ("hybrid", "lexical", "dense"):
        lists = [[h.id for h in search_existing_math(q, k=10, mode=mode, bundle=str(default_bundle_dir)).hits]
                 for q in UNRELATED_QUERIES]
        assert sum(x[0] == fid for x in lists) == 0, mode
        assert sum(fid in x for x in lists) == 0, mode
    # the finding itself is still found by a query that asks for it
    hits = search_existing_math("every finite integral domain is a field", k=10, bundle=str(default_bundle_dir)).hits
    assert fid in [h.id for h in hits][:3]


@pytest.mark.parametrize("query, target, restated", [
    ("integral ring extensions satisfy going up", "stacks:00GU", "text"),
    ("a type with decidable equality is a set", "hott:thm:hedberg", "text"),
    ("if G/Z(G) is cyclic then G is abelian", "proofnet:Artin|exercise_6_1_14", "body"),
])
def test_a_finding_restating_the_target_ranks_beside_it(data, default_bundle_dir, query, target, restated):
    """A finding whose statement is a dev query's target (its retrieval text, or its statement
    under its name) is in the top 3, next to the target; the bundle's hits keep their order."""
    import mathlas
    from mathlas.tools.informal import search_existing_math

    doc = mathlas.open_bundle(default_bundle_dir).get(target)
    before = [h.id for h in search_existing_math(query, k=10, bundle=str(default_bundle_dir)).hits]
    assert target in before[:3]
    (fid,) = _embedded(default_bundle_dir, [(doc.text, "") if restated == "text" else (doc.body, doc.name)])
    runs = [search_existing_math(query, k=10, bundle=str(default_bundle_dir)).hits for _ in range(2)]
    ids = [h.id for h in runs[0]]
    assert fid in ids[:3] and ids == [h.id for h in runs[1]]  # deterministic
    assert [h.score for h in runs[0]] == [h.score for h in runs[1]]
    h = runs[0][ids.index(fid)]
    assert h.ranks["lexical"] and h.ranks["dense"]  # the ranks it was credited with in the bundle's channels
    # the bundle's hits keep their order: a finding takes a place, it does not reorder the others
    assert [i for i in ids if i != fid] == before[:len(ids) - 1]


def test_a_finding_without_a_stored_vector_competes_on_both_channels(data, default_bundle_dir):
    """A finding added while no encoder was loaded has no stored vector: a hybrid search embeds it
    (in memory; the store is not written) so it is not left with lexical evidence alone."""
    import mathlas
    from mathlas.findings.store import open_store
    from mathlas.tools.informal import search_existing_math

    doc = mathlas.open_bundle(default_bundle_dir).get("hott:thm:hedberg")
    f, added = open_store().add(doc.text, "https://example.org/hedberg")
    assert added and open_store().vectors() is None
    hits = search_existing_math("a type with decidable equality is a set", k=5, bundle=str(default_bundle_dir)).hits
    ids = [h.id for h in hits]
    assert f.id in ids[:3]
    h = hits[ids.index(f.id)]
    assert h.ranks["lexical"] and h.ranks["dense"]
    assert open_store().vectors() is None


def test_finding_bm25_is_the_bundle_bm25(data, tiny):
    """A finding holding a document's retrieval text scores as tantivy scores that document."""
    from mathlas.findings.search import bundle_stats, FindingsIndex
    from mathlas.findings.store import Finding
    from mathlas.ranking.lexical import query_terms

    stats = bundle_stats(tiny.lexical)
    checked = 0
    for query in ("ring ideal module", "prime number", "Noetherian ring ring", "set of sentences model"):
        ranking = tiny.lexical.search(query, 5)
        for key, score in zip(ranking.keys.tolist(), ranking.scores.tolist()):
            text = tiny.table.column("text")[key].as_py()
            index = FindingsIndex([Finding("finding:0", text, "https://x.org", "", "", "")], stats)
            groups = [stats.tokens(w) for w in dict.fromkeys(query_terms(query))]
            assert index.scores([g for g in groups if g], stats)[0] == pytest.approx(score, rel=1e-5)
            checked += 1
    assert checked >= 8


def test_findings_are_extra_documents_of_the_bundle_channels(data, tiny):
    """A finding is ranked inside the lexical channel as one more document: merged into the
    channel's ranking of the bundle's documents by score, before the depth cut. A finding holding a
    document's retrieval text ties with it and goes first; one without any query word is not there;
    the channel's own ranking of the bundle (what the answer's confidence reads) has no finding."""
    from mathlas.findings.store import open_store
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.request import SearchRequest

    query = "finitely generated module over a ring Jacobson radical"
    pipeline = pipeline_for(tiny)
    plain = pipeline.rank(SearchRequest.make(query, 5, mode="lexical"))
    first = int(plain.top.keys[0])
    store = open_store()
    twin, _ = store.add(tiny.column("text")[first].as_py(), URL)
    store.add("zzzqqq xyzzy", "https://example.org/nothing")
    plan, own, pool = pipeline.fused(SearchRequest.make(query, 5, mode="lexical"), findings=store)
    # with findings every channel ranks the fusion depth (100 here), so k and offset do not move them
    assert len(plan.extra) == 2 and own["lexical"].keys.tolist()[:5] == plain.rankings["lexical"].keys.tolist()
    _, merged = pipeline.channel_rankings(plan)
    keys = merged["lexical"].keys.tolist()
    n = len(tiny)
    assert [k for k in keys if k >= n] == [n + [f.id for f in plan.extra.findings].index(twin.id)]
    assert keys[0] >= n and keys[1:] == own["lexical"].keys.tolist()[:len(keys) - 1] and keys[1] == first
    ranked = pipeline.rank(SearchRequest.make(query, 5, mode="lexical"), findings=store)
    assert [h.id for h in ranked.hits[:2]] == [twin.id, plain.hits[0].id]
    assert ranked.hits[0].ranks == {"lexical": 1, "dense": None} and ranked.hits[1].ranks["lexical"] == 2
    assert ranked.rankings["lexical"].keys.tolist()[:5] == plain.rankings["lexical"].keys.tolist()
    # its raw score is the lexical channel's scale: the document's BM25, to float32
    assert ranked.top.raw_in("lexical")[0] == pytest.approx(ranked.top.raw_in("lexical")[1], rel=1e-5)
