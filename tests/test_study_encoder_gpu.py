"""The way back from the shipped int8 encoder to a trainable checkpoint, and the GPU study's own parts
(scripts/study_encoder_gpu.py): what a training run on another machine depends on, checked on a CPU."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnx")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import study_encoder_gpu as G  # noqa: E402

SENTENCES = ["Nakayama's lemma", "Every finitely generated module over a principal ideal domain is a direct "
             "sum of cyclic modules.", "theorem Nat.Prime.two_le {p : ℕ} (hp : p.Prime) : 2 ≤ p",
             "the fundamental theorem of algebra"]


def test_the_dequantised_checkpoint_embeds_like_the_shipped_encoder(encoder_dir, tmp_path):
    from tokenizers import Tokenizer
    from transformers import BertModel

    from mathlas.encoder import Encoder
    from mathlas_build.training.from_onnx import checkpoint_from_int8_onnx

    out = checkpoint_from_int8_onnx(encoder_dir, tmp_path / "hf")
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    model = BertModel.from_pretrained(str(out), add_pooling_layer=False).eval()
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    ref = Encoder(encoder_dir).encode_queries(SENTENCES)
    with torch.no_grad():
        for s, r in zip(SENTENCES, ref):
            ids = torch.tensor([tok.encode(s).ids])
            h = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                      token_type_ids=torch.zeros_like(ids)).last_hidden_state[0].mean(0)
            cos = float((h / h.norm()).numpy() @ r)
            assert cos > 0.98, (s, cos)  # measured .992-.996: the export's int8 activations are the rest


def test_a_graph_that_is_not_an_int8_export_is_refused(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    from mathlas_build.training.from_onnx import dequantized_weights

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1, 0, 0, 1])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(ValueError, match="no quantised MatMul weights"):
        dequantized_weights(path)


def test_tune_folds_are_fixed_and_balanced():
    queries = [{"qid": f"q{i:03d}", "split": "tune" if i % 3 else "check"} for i in range(90)]
    a, b = G.tune_folds(queries, 2), G.tune_folds(list(reversed(queries)), 2)
    assert a == b  # the same on the GPU machine and here, whatever the order
    assert set(a) == {q["qid"] for q in queries if q["split"] == "tune"}
    assert sorted(np.bincount(list(a.values()))) == [30, 30]


def test_training_rows_keep_tune_out_of_the_mined_variant_and_mask_every_relevant_id():
    pairs = [{"kind": "k", "query": "q", "pos_id": "a", "pos": "A", "neg_id": "b", "neg": "B"}]
    queries = [{"qid": "t1", "split": "tune", "query": "tq", "relevant": ["a", "c"], "unrelated": ["b"]},
               {"qid": "c1", "split": "check", "query": "cq", "relevant": ["d"], "unrelated": []}]
    texts = {"a": "A", "b": "B", "c": "C", "d": "D"}
    assert [r["q"] for r in G.training_rows("mined", pairs, queries, texts, 2)] == ["q"]
    rows = G.training_rows("tune", pairs, queries, texts, 2)
    assert [(r["q"], r["pos_id"]) for r in rows] == [("tq", "a"), ("tq", "c")] * 2  # never a check query
    assert all(r["rel"] == ["a", "c"] and r["neg_id"] == "b" for r in rows)


def test_dense_eval_ranks_the_first_relevant_document():
    D = torch.eye(4)
    Q = torch.tensor([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.5]])
    queries = [{"qid": "x", "split": "tune", "relevant": ["d1"]}, {"qid": "y", "split": "check", "relevant": ["d3"]}]
    D = torch.cat([D, torch.zeros(96, 4)])  # topk(100) needs 100 documents
    key = {f"d{i}": i for i in range(4)}
    ev = G.dense_eval(torch, Q, D, queries, key)
    assert ev["ranks"]["x"] == 0 and ev["tune"]["mrr@20"] == 1.0
    assert ev["ranks"]["y"] == 1 and ev["check"]["mrr@20"] == 0.5 and ev["check"]["hit@10"] == 1.0
    assert json.dumps(ev)  # what result.json holds


def test_a_recipe_can_train_on_from_the_encoder_a_bundle_holds(encoder_dir, tmp_path):
    """`[train] base = "<bundle>/encoder"`: the int8 export is dequantised once into work/bases and reused."""
    from mathlas_build.recipe import RecipeError
    from mathlas_build.training.train import resolve_base

    first = resolve_base(str(encoder_dir), bases_root=tmp_path / "bases")
    assert (first / "config.json").is_file() and (first / "tokenizer.json").is_file()
    assert first.parent == tmp_path / "bases" and first.name.startswith(encoder_dir.name + "-")
    stamp = (first / "config.json").stat().st_mtime_ns
    assert resolve_base(str(encoder_dir), bases_root=tmp_path / "bases") == first  # converted once
    assert (first / "config.json").stat().st_mtime_ns == stamp
    not_int8 = tmp_path / "fp32-encoder"
    not_int8.mkdir()
    test_a_graph_that_is_not_an_int8_export_is_refused(not_int8)  # writes an fp32 model.onnx there
    with pytest.raises(RecipeError, match="no quantised MatMul weights"):
        resolve_base(str(not_int8), bases_root=tmp_path / "bases")


@pytest.mark.parametrize("args, says", [
    (["prepare", "--pairs", "{tmp}/none.jsonl", "--out", "{tmp}/out"], "mathlas-build pairs"),
    (["train", "--data", "{tmp}/none", "--out", "{tmp}/out", "--device", "cpu"], "run `prepare"),
    (["install", "--result", "{tmp}/none", "--bundle-out", "{tmp}/b"], "the OUT of a `train` run"),
])
def test_a_missing_input_is_one_line_with_the_next_step(tmp_path, args, says):
    import subprocess

    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "study_encoder_gpu.py"),
                        *[a.format(tmp=tmp_path) for a in args]], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()  # nothing half written


def test_vectors_travel_as_the_bundle_stores_them(tmp_path):
    """``_save_i8`` writes ``writer.quantize_i8``'s int8 rows in two halves; ``_load_i8`` reads back
    int8 x scale, the vectors a bundle searches with."""
    from mathlas_build.writer import quantize_i8

    V = np.random.default_rng(0).standard_normal((101, 8)).astype(np.float32)
    scale = G._save_i8(tmp_path, "v", V)
    q8, want = quantize_i8(V)
    assert len(np.load(tmp_path / "v-a.i8.npy")) == 50 and len(np.load(tmp_path / "v-b.i8.npy")) == 51
    assert np.array_equal(scale, want)
    assert np.array_equal(G._load_i8(tmp_path, "v", scale), q8.astype(np.float32) * want[:, None])


@pytest.mark.slow  # opens the default bundle and writes its 65,024 texts (about 3 s)
def test_prepare_holds_a_round_out(default_bundle_dir, tmp_path, monkeypatch):
    """``prepare --rounds 1,2,3 --hold-out 4``: the fourth round's queries are scored (split ``held``) and
    never trained on, and a mined pair whose positive is one of their relevant statements is dropped."""
    import gzip

    monkeypatch.setenv("MATHLAS_BUNDLE", str(default_bundle_dir))
    sys.path.insert(0, str(ROOT / "build"))
    from collection import records

    fourth = [r for r in records(rounds=(1, 2, 3, 4)) if r.get("round") == 4 and r["relevant"]]
    held_pos = fourth[0]["relevant"][0]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"kind": "docstring", "query": f"toy {i}", "pos_id": pos, "pos": "text",
                                         "neg_id": None, "neg": None}) + "\n"
                             for i, pos in enumerate([held_pos, "planetmath:PrimeNumber"])), encoding="utf-8")
    G.prepare(pairs, tmp_path / "out", 0, rounds=(1, 2, 3), hold_out=(4,))
    info = json.loads((tmp_path / "out" / "prepared.json").read_text(encoding="utf-8"))
    assert info["queries"]["held"] == len(fourth) and info["dropped"]["positive held out"] == 1
    with gzip.open(tmp_path / "out" / "queries.jsonl.gz", "rt", encoding="utf-8") as fh:
        queries = [json.loads(x) for x in fh]
    assert {q["qid"] for q in queries if q["split"] == "held"} == {r["id"] for r in fourth}
    assert not any(q["split"] == "tune" and q["qid"] in {r["id"] for r in fourth} for q in queries)
