"""The judged query collection: its files load into one record per query, the split is fixed by the id,
the metrics count judged equivalents, and a comparison with an unjudged hit in a top ten is refused."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build"))

from mathlas_build.training import collection as C  # noqa: E402

COLLECTION = REPO / "eval" / "collection"


def test_the_committed_collection_loads_whole():
    recs = C.load(COLLECTION, with_offtopic=True)
    drafts = [json.loads(x) for p in sorted(COLLECTION.glob("drafts-*.jsonl")) for x in p.read_text().splitlines()]
    assert len(drafts) == 450 and len({d["id"] for d in drafts}) == 450
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == 580  # 450 drafts + 50 off-topic sentences + 80 short ones, none dropped
    styles = {r["style"] for r in recs}
    assert styles == {"precise", "vague", "name", "offtopic", "short"}
    short = [r for r in recs if r["style"] == "short"]
    assert len(short) == 80 and all(r["area"] == "offtopic" and not r["targets"] and 2 <= len(r["query"].split()) <= 4
                                    for r in short)
    assert sum(1 for r in recs if r["targets"]) == 424
    # a target is a stable id of one of the eight informal sources
    prefixes = {t.split(":", 1)[0] for r in recs for t in r["targets"]}
    assert prefixes <= {"stacks", "planetmath", "proofwiki", "metamath", "hott", "openlogic", "napkin", "proofnet"}
    # judged equivalents join the relevant ids
    judged = C.judgments(COLLECTION)
    by_id = {r["id"]: r for r in recs}
    eq = {(q, d) for (q, d), j in judged.items() if j["label"] == "equivalent" and q in by_id}
    assert eq and all(d in by_id[q]["relevant"] for q, d in eq)
    # the second round's judgments (read too) name queries of both rounds
    assert any(q.startswith("mc-") and q not in by_id for q, _ in judged)


def test_the_second_round_loads_beside_the_first():
    first = C.load(COLLECTION, with_offtopic=True)
    both = C.load(COLLECTION, with_offtopic=True, rounds=(1, 2))
    assert {r["id"]: r["split"] for r in first} == {r["id"]: r["split"] for r in both if r["round"] == 1}
    fresh = [r for r in both if r["round"] == 2]
    drafts = [json.loads(x) for p in sorted((COLLECTION / "fresh").glob("drafts-*.jsonl"))
              for x in p.read_text(encoding="utf-8").splitlines()]
    assert [d["id"] for d in drafts] == [f"mc-{i:04d}" for i in range(451, 691)]
    assert [r["id"] for r in fresh] == [d["id"] for d in drafts]  # every draft resolved, none dropped
    assert sum(1 for r in fresh if r["targets"]) == 199
    first_facts = {r["fact"].lower() for r in first if r.get("fact")}
    assert not first_facts & {r["fact"].lower() for r in fresh}
    prefixes = {t.split(":", 1)[0] for r in fresh for t in r["targets"]}
    assert prefixes <= {"stacks", "planetmath", "proofwiki", "metamath", "hott", "openlogic", "napkin", "proofnet"}
    assert {r["split"] for r in fresh} == {"tune", "check"}


def test_the_third_round_loads_when_asked():
    assert not any(r["round"] == 3 for r in C.load(COLLECTION, rounds=(1, 2)))  # --fresh: the second round
    every = C.load(COLLECTION, rounds=(1, 2, 3))
    third = [r for r in every if r["round"] == 3]
    assert [r["id"] for r in third] == [f"mc-{i:04d}" for i in range(691, 931)]
    assert sum(1 for r in third if r["targets"]) == 181
    earlier = {r["fact"].lower() for r in every if r["round"] in (1, 2) and r.get("fact")}
    assert not earlier & {r["fact"].lower() for r in third}
    with pytest.raises(ValueError, match="no round 5"):
        C.load(COLLECTION, rounds=(1, 5))



def test_the_fourth_round_loads_when_asked():
    """Round 4 (eval/collection/round-4): drafted blind after 1.6.1's stage was trained on the first three
    rounds' tune splits, every draft resolved; no fact of an earlier round asked again."""
    assert not any(r["round"] == 4 for r in C.load(COLLECTION, rounds=(1, 2, 3)))
    every = C.load(COLLECTION, rounds=(1, 2, 3, 4))
    fourth = [r for r in every if r["round"] == 4]
    assert [r["id"] for r in fourth] == [f"mc-{i:04d}" for i in range(931, 1171)]
    assert sum(1 for r in fourth if r["targets"]) == 176
    earlier = {r["fact"].lower() for r in every if r["round"] < 4 and r.get("fact")}
    assert not earlier & {r["fact"].lower() for r in fourth}

def test_rounds_and_report_groups():
    assert C.parse_rounds("3, 1,2,1") == (1, 2, 3)
    for bad in ("", "1,5", "two", "0"):
        with pytest.raises(ValueError, match="names no rounds of 1, 2, 3, 4"):
            C.parse_rounds(bad)
    first_check = {"split": "check", "round": 1}
    assert C.in_group(first_check, "split=check") and C.in_group(first_check, "all")
    assert not C.in_group({"split": "check", "round": 2}, "split=check")  # a later round has rows of its own
    assert C.in_group({"split": "check", "round": 2}, "round=2") and not C.in_group(first_check, "round=2")
    assert C.in_group({"split": "dev"}, "split=dev")  # informal-dev's records carry no round
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "report",
                          str(COLLECTION / "runs" / "rrf-informal-1.3.0.json"), "--rounds", "1,9"],
                         capture_output=True, text=True)
    assert out.returncode != 0 and out.stderr.strip().count("\n") == 0 and "--rounds '1,9' names no rounds" in out.stderr


def test_a_later_judgments_file_replaces_an_earlier_ones_label(tmp_path):
    """Files are read in the order of their numbers (judgments-8 before judgments-10), not of their names."""
    (tmp_path / "judgments-8.jsonl").write_text('{"qid": "q", "doc": "d", "label": "related", "why": "x"}\n')
    (tmp_path / "judgments-10.jsonl").write_text('{"qid": "q", "doc": "d", "label": "equivalent", "why": "y"}\n')
    assert C.judgments(tmp_path)[("q", "d")]["label"] == "equivalent"


def test_the_split_is_fixed_by_the_id():
    ids = [f"mc-{i:04d}" for i in range(1, 3001)]
    splits = [C.split_of(i) for i in ids]
    assert splits == [C.split_of(i) for i in ids]  # deterministic
    share = splits.count("check") / len(splits)
    assert 0.30 < share < 0.37
    assert C.split_of("mc-0001") == C.split_of("mc-0001")


def test_metrics_of_a_ranking():
    m = C.metrics_of(["a", "b", "c"], {"b"})
    assert m["p@1"] == 0 and m["hit@10"] == 1 and m["mrr@20"] == pytest.approx(0.5)
    assert C.metrics_of(["x"] * 3, {"b"})["mrr@20"] == 0
    assert C.metrics_of(["b"], {"b"})["ndcg@10"] == pytest.approx(1.0)


def test_an_unjudged_hit_is_found():
    recs = [{"id": "q1", "relevant": ["t"], "targets": ["t"]}]
    runs = {"a": {"q1": ["t", "u", "v"]}, "b": {"q1": ["w"]}}
    todo = C.unjudged(recs, runs, {("q1", "u"): {"label": "related"}})
    assert set(todo) == {("q1", "v"), ("q1", "w")} and todo[("q1", "w")] == {"b"}


@pytest.mark.slow  # seconds on its own (conftest: the fast lane leaves it out)
def test_the_report_refuses_unjudged_hits(tmp_path):
    run = json.loads((COLLECTION / "runs" / "rrf-informal-1.3.0.json").read_text(encoding="utf-8"))
    run["runs"]["mc-0001"] = [f"nosuch:{i}" for i in range(10)]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "report", str(path)],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "10 top-10 hits are not judged yet" in out.stderr
    # a run that lacks a query is refused too, not scored as a miss
    del run["runs"]["mc-0001"]
    path.write_text(json.dumps(run), encoding="utf-8")
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "report", str(path)],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "1 queries (mc-0001, ...) are in no run" in out.stderr
    ok = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "report",
                         str(COLLECTION / "runs" / "rrf-informal-1.3.0.json"),
                         str(COLLECTION / "runs" / "service-informal-1.4.0.json")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "paired difference against rrf-informal-1.3.0" in ok.stdout and "split=check" in ok.stdout


def test_the_readme_row_of_the_held_out_queries_is_what_the_committed_runs_give():
    """README's held-out row: the shipped ranking's committed run (1.6.1) over the fourth round and each earlier
    round's check split, 1.6.0's and the ranking without the learned stage over the same, 1.6.0's over the second
    and third rounds whole, scored with today's judgments (no bundle needed), and the command the row names
    printing the same."""
    import re

    sys.path.insert(0, str(REPO / "scripts"))
    from collection import records

    row = next(line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| quality held out from training:"))
    cell = row.split(" | ")[1]
    figures = [float(x) for x in re.findall(r"(?<![\d.])\.\d{3}", cell)]
    runs = {v: json.loads((COLLECTION / "runs" / f"{v}.json").read_text(encoding="utf-8"))["runs"]
            for v in ("service-informal-1.6.1", "service-informal-1.6.0-fresh", "without-learned-informal-1.6.0-fresh")}
    new, old, rrf = runs
    recs = [r for r in records(rounds=(1, 2, 3, 4)) if r["relevant"]]

    def three(sub, v=new):
        g = C.summarize(sub, runs[v])["groups"]["all"]
        return [round(g[m], 3) for m in ("p@1", "hit@10", "mrr@20")]

    fourth = [r for r in recs if r.get("round") == 4]
    check = {k: [r for r in recs if r.get("round", 1) == k and r["split"] == "check"] for k in (1, 2, 3)}
    every = [r for r in recs if r["split"] == "check" and r.get("round", 1) < 4]
    assert len(fourth) == 177 and "177 with a relevant statement" in row
    assert [len(check[k]) for k in (1, 2, 3)] == [132, 67, 58] and "132, 67 and 58 queries" in row
    assert figures[:6] == three(fourth) + three(fourth, old)
    # figures[6:11]: the paired differences (P@1, MRR@20 and its interval, Hit@10); then the ranking without the stage
    assert figures[11:14] == three(fourth, rrf)
    assert figures[14:23] == three(check[1]) + three(check[2]) + three(check[3])
    assert len(every) == 257 and figures[23:26] == three(every) and figures[26:29] == three(every, old)
    later = [three([r for r in recs if r.get("round") == k], old) for k in (2, 3)]
    assert figures[32:38] == later[0] + later[1] and figures[38:41] == three(check[1], old)
    command = re.search(r"`(python scripts/collection.py report [^`]+)`", row).group(1)
    out = subprocess.run([sys.executable, *command.split()[1:]], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr

    def line(name, n, got):
        return f"| {name} | {n} | " + " | ".join(f"{x:.3f}" for x in got[:2]) + f" | {got[2]:.3f} ["

    shipped = out.stdout.split("## service-informal-1.6.1")[1].split("## ")[0]
    assert line("round=4", 177, figures[:3]) in shipped
    assert line("round=2 split=check", 67, figures[17:20]) in shipped
    assert line("round=3 split=check", 58, figures[20:23]) in shipped
    assert line("split=check", 132, figures[14:17]) in shipped  # the first round's check split alone
    paired = out.stdout.split("## paired difference")[1]
    assert f"| service-informal-1.6.1 | round=4 | +{figures[6]:.3f} [" in paired


@pytest.mark.slow  # opens the default bundle
def test_an_ablation_names_a_stage_that_exists(tmp_path):
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "run", "--config", "without:learnd",
                          "--out", str(tmp_path / "run.json")], capture_output=True, text=True)
    assert out.returncode != 0 and "no stage 'learnd' (stages: priors, learned," in out.stderr
    assert not (tmp_path / "run.json").exists()


@pytest.mark.slow  # writes the default bundle's 65,024 statements (some 60 MB)
def test_the_resolvers_dump_holds_every_statement_of_the_eight_sources(tmp_path, default_bundle_dir):
    out = tmp_path / "statements.tsv"
    got = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "dump", "--bundle",
                          str(default_bundle_dir), "--out", str(out)], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    import mathlas

    b = mathlas.open_bundle(default_bundle_dir)
    sources = b.column("source").to_pylist()
    assert len(lines) == sum(s in {"stacks", "planetmath", "proofwiki", "metamath", "hott", "openlogic", "napkin",
                                   "proofnet"} for s in sources) and f"{len(lines)} statements" in got.stdout
    assert all(line.count("\t") == 3 for line in lines)
    nakayama = next(line.split("\t") for line in lines if line.startswith("planetmath:NakayamasLemma\t"))
    assert nakayama[1] == "theorem" and "finitely generated" in nakayama[3]
    (tmp_path / "file").write_text("x")
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "collection.py"), "dump", "--bundle",
                          str(default_bundle_dir), "--out", str(tmp_path / "file" / "statements.tsv")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "give --out a writable path" in bad.stderr
