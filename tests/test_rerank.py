"""The reranker (issue 12 part 4): the cross-encoder trainer on a tiny random BERT and synthetic pairs,
its ONNX export against torch, a bundle carrying it (``add-reranker``, a recipe's ``[reranker]``),
and search with it: the first ``top_n`` fused hits reordered by its scores, the rest kept.

Training and export take seconds on a CPU; the bundles are the session's tiny bundle, copied.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import CORPORA, TINY_RECIPE

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from test_training import (  # noqa: E402
    HELD, TEMPLATES_D, TEMPLATES_Q, WORDS, _pairs_file, _tiny_checkpoint, assert_resumes_to_the_same_weights)

from mathlas.bundle import RERANKER_DIR, sha256_file, verify  # noqa: E402
from mathlas.engine import Bundle  # noqa: E402
from mathlas.errors import BundleCorruptError, UsageError  # noqa: E402
from mathlas.request import SearchRequest  # noqa: E402
from mathlas.ranking.rerank import Reranker  # noqa: E402
from mathlas_build.recipe import RecipeError  # noqa: E402
from mathlas_build.training.recipe import load_training_recipe, recipe_sha256  # noqa: E402
from mathlas_build.training.rerank import DEFAULTS, CrossEncoder, train_reranker  # noqa: E402
from mathlas_build.writer import add_reranker  # noqa: E402

QUERY = "a local ring with a finitely generated module"


def _recipe(root: Path, base: Path, **rerank) -> Path:
    settings = {"run": "tiny-rr", "base": str(base), "name": "tiny-reranker", "license": "Apache-2.0",
                "max_tokens": 32, "query_tokens": 12, "group": 4, "batch_size": 16, "epochs": 4, "lr": 1e-3,
                "warmup": 2, "heldout": 24, "eval_group": 6, "checkpoint_every": 8, "log_every": 8, **rerank}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in settings.items())
    path = root / "rerank.toml"
    path.write_text(f'name = "tiny"\nversion = "0"\nseed = 3\n[pairs]\n[rerank]\n{body}\n')
    return path


def _held_aside(model: CrossEncoder) -> tuple[list[int], list[float]]:
    """For each word the pairs leave out, its positive among the other words' negatives: its rank and
    its softmax probability (what the loss raises)."""
    ranks, probs = [], []
    for w in HELD:
        docs = [TEMPLATES_D[0].format(w=w)] + [TEMPLATES_D[1].format(w=x) for x in WORDS if x != w]
        s = model.score([(TEMPLATES_Q[0].format(w=w), d) for d in docs]).astype(np.float64)
        ranks.append(1 + int((s[1:] > s[0]).sum()))
        probs.append(float(np.exp(s[0] - s.max()) / np.exp(s - s.max()).sum()))
    return ranks, probs


@pytest.fixture(scope="module")
def rr_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("rerank")
    base = _tiny_checkpoint(root)
    pairs = _pairs_file(root)
    recipe = load_training_recipe(_recipe(root, base))
    torch.manual_seed(recipe.seed)  # the run's own start: the same seed, then the model
    before = _held_aside(CrossEncoder(base, {**DEFAULTS, **recipe.rerank}))
    summary = train_reranker(recipe, pairs_path=pairs, runs_root=root / "runs", rerankers_root=root / "rerankers",
                             quiet=True)
    return root, base, pairs, recipe, before, summary


def test_training_moves_held_aside_pairs_up(rr_run):
    # What a 32-wide random BERT learns in seconds: positives are phrased one way, negatives another;
    # the words HELD never occur in a training pair, so their pairs measure what carries over.
    root, _, pairs, recipe, before, summary = rr_run
    cfg = {**DEFAULTS, **recipe.rerank}
    assert summary["step"] == summary["total"] == (len(pairs.read_text().splitlines()) - 24) // 16 * 4
    after = _held_aside(CrossEncoder(root / "runs" / "tiny-rr" / "hf", cfg))
    assert after[0] == [1] * len(HELD) and sum(before[0]) >= sum(after[0]), (before, after)
    assert min(after[1]) > 2 * max(before[1]), (before, after)  # from about uniform (1/35)
    ev = summary["eval"]
    assert set(ev) == {"before", "end"} and ev["end"]["queries"] == 24 and ev["end"]["step"] == summary["total"]


def test_export_matches_torch_and_records_the_recipe(rr_run):
    root, _, _, recipe, _, summary = rr_run
    check = summary["export"]["check"]
    assert check["fp32_max_abs_diff"] <= 1e-4, check
    assert check["int8_spearman"] >= 0.9 and check["int8_top1_agreement"] >= 0.5, check  # 32 wide: int8 is coarse
    out = root / "rerankers" / "tiny-rr"
    meta = json.loads((out / "reranker.json").read_text())
    assert meta["max_tokens"] == 32 and meta["query_tokens"] == 12 and meta["output"] == "scores"
    assert meta["training"]["recipe_sha256"] == recipe_sha256(recipe.raw)
    assert meta["training"]["data_licenses"] == ["CC0-1.0"]
    assert {p.name for p in out.iterdir()} >= {"model.onnx", "tokenizer.json", "reranker.json", "fp32"}


def test_runtime_scores_pairs_as_the_trainer_did(rr_run):
    root, _, _, recipe, _, _ = rr_run
    out = root / "rerankers" / "tiny-rr"
    model = CrossEncoder(root / "runs" / "tiny-rr" / "hf", {**DEFAULTS, **recipe.rerank})
    query = TEMPLATES_Q[1].format(w="zorp") + " with far more words than the query may keep " * 3
    docs = [TEMPLATES_D[0].format(w=w) * 4 for w in WORDS[:6]] + ["", "zorp"]  # cut, empty and short documents
    ref = model.score([(query, d) for d in docs])
    fp32 = Reranker(out, model_file=str((out / "fp32" / "model.onnx").resolve())).score(query, docs)
    assert np.abs(fp32 - ref).max() <= 1e-4
    assert Reranker(out).score(query, []).shape == (0,)


def test_an_interrupted_run_resumes_to_the_same_weights(rr_run, tmp_path):
    root, base, pairs, _, _, _ = rr_run
    recipe = load_training_recipe(_recipe(tmp_path, base))
    assert_resumes_to_the_same_weights(train_reranker, recipe, pairs, tmp_path / "runs" / "tiny-rr", stop=9,
                                       checkpoint=8, whole=root / "runs" / "tiny-rr" / "hf")
    with pytest.raises(RecipeError, match="lr"):
        train_reranker(load_training_recipe(_recipe(tmp_path, base, lr=5e-4)), pairs_path=pairs,
                       runs_root=tmp_path / "runs", max_steps=1, export=False, quiet=True)


# ---------------------------------------------------------------- a bundle with a reranker

@pytest.fixture(scope="module")
def reranked_dir(rr_run, tiny_bundle_dir, tmp_path_factory) -> Path:
    root = rr_run[0]
    copy = tmp_path_factory.mktemp("reranked") / "tiny-0.1.0"
    shutil.copytree(tiny_bundle_dir, copy)
    add_reranker(copy, root / "rerankers" / "tiny-rr", top_n=5, quiet=True)
    return copy


def test_rank_reorders_the_top_n_by_the_reranker_and_keeps_the_rest(reranked_dir):
    b = Bundle.open(reranked_dir)
    plain = b.search(QUERY, k=10)                      # default off: the fused order
    assert [h.ranks.get("rerank") for h in plain] == [None] * 10 and "rerank" not in plain[0].ranks
    texts = [b.get(h.id).text for h in plain[:5]]
    scores = Reranker(reranked_dir / RERANKER_DIR).score(QUERY, texts)
    assert len(set(scores.tolist())) > 1
    expect = [plain[i].id for i in np.argsort(-scores, kind="stable")]
    hits = b.search(QUERY, k=10, rerank=True)
    assert [h.id for h in hits[:5]] == expect
    assert [h.id for h in hits[5:]] == [h.id for h in plain[5:]]
    assert [h.ranks["rerank"] for h in hits] == [1, 2, 3, 4, 5, None, None, None, None, None]
    assert [h.score for h in hits[:5]] == pytest.approx(sorted(scores.tolist(), reverse=True), abs=1e-5)
    # a short page still reranks the top 5 first; paging is over the reranked list
    assert [h.id for h in b.search(QUERY, k=2, rerank=True)] == expect[:2]
    assert [h.id for h in b.search(QUERY, k=3, offset=2, rerank=True)] == expect[2:5]
    assert [h.id for h in b.search(QUERY, k=3, mode="lexical", rerank=True)] == \
        [h.id for h in b.search(QUERY, k=5, mode="lexical", rerank=True)][:3]


def test_rerank_true_needs_a_reranker(tiny):
    with pytest.raises(UsageError, match="no reranker"):
        tiny.search(QUERY, rerank=True)
    assert tiny.search(QUERY, k=3, rerank=False) == tiny.search(QUERY, k=3)
    with pytest.raises(UsageError, match="rerank must be"):
        SearchRequest.make(QUERY, rerank="yes")


def test_the_manifest_lists_the_reranker_and_verification_catches_tampering(rr_run, reranked_dir, tmp_path):
    manifest = verify(reranked_dir)
    assert manifest.reranker == {"name": "tiny-reranker", "license": "Apache-2.0", "max_tokens": 32, "top_n": 5,
                                 "default": False}
    for name in ("model.onnx", "tokenizer.json", "reranker.json"):
        entry = manifest.files[f"{RERANKER_DIR}/{name}"]
        assert entry.sha256 == sha256_file(reranked_dir / RERANKER_DIR / name)
    with pytest.raises(FileExistsError):
        add_reranker(reranked_dir, rr_run[0] / "rerankers" / "tiny-rr", quiet=True)
    bad = tmp_path / "bad"
    shutil.copytree(reranked_dir, bad)
    model = bad / RERANKER_DIR / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    with pytest.raises(BundleCorruptError, match="reranker/model.onnx"):
        verify(bad)


def test_a_bundle_may_rerank_by_default(rr_run, reranked_dir, tmp_path):
    on = tmp_path / "on"
    shutil.copytree(reranked_dir, on)
    add_reranker(on, rr_run[0] / "rerankers" / "tiny-rr", top_n=3, default=True, force=True, quiet=True)
    b = Bundle.open(on)
    assert verify(on).reranker["default"] is True
    assert [h.ranks["rerank"] for h in b.search(QUERY, k=4)] == [1, 2, 3, None]
    assert "rerank" not in b.search(QUERY, k=4, rerank=False)[0].ranks


def test_cli_search_rerank(reranked_dir, tiny_bundle_dir):
    def search(*args):
        return subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, "-k", "3", "--json", *args],
                              capture_output=True, text=True, timeout=300)

    p = search("--bundle", str(reranked_dir), "--rerank")
    assert p.returncode == 0, p.stderr
    assert [h["ranks"]["rerank"] for h in json.loads(p.stdout)["hits"]] == [1, 2, 3]
    p = search("--bundle", str(reranked_dir), "--no-rerank")
    assert p.returncode == 0 and "rerank" not in json.loads(p.stdout)["hits"][0]["ranks"]
    p = search("--bundle", str(tiny_bundle_dir), "--rerank")
    assert p.returncode == 2 and "no reranker" in p.stderr


def test_a_recipe_builds_the_reranker_into_the_bundle(rr_run, encoder_dir, tmp_path):
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    recipe = tmp_path / "r.toml"
    text = TINY_RECIPE.format(encoder=encoder_dir.as_posix()).replace('version = "0.1.0"', 'version = "0.2.0"')
    text = text.split("[[sources]]")[0] + "[[sources]]" + text.split("[[sources]]")[1]  # stacks only
    reranker = (rr_run[0] / "rerankers" / "tiny-rr").as_posix()
    recipe.write_text(text + f'\n[reranker]\npath = "{reranker}"\ntop_n = 7\n', encoding="utf-8")
    out = build(load_recipe(recipe, CORPORA), tmp_path / "tiny-0.2.0", cache_dir=None, quiet=True)
    manifest = verify(out)
    assert manifest.reranker["top_n"] == 7 and manifest.reranker["default"] is False
    assert f"{RERANKER_DIR}/model.onnx" in manifest.files
    assert Bundle.open(out).search("ring", k=2, rerank=True)[0].ranks["rerank"] == 1
