"""The GPU embedding benchmark and what it taught the embedder: a dynamic int8 model on CUDA is said to
run at a CPU's speed, and the benchmark's own steps run end to end on the CPU (its CUDA runs fall back to
the CPU here, with the embedder's message; the GPU figures are in docs/building.md)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from mathlas_build.embed import DocumentEncoder, dynamic_int8

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("bench_embed_gpu", ROOT / "scripts" / "bench_embed_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _float_model(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_dynamic_int8_is_told_from_a_float_model(encoder_dir, tmp_path):
    assert dynamic_int8(encoder_dir / "model.onnx")  # the shipped MiniLM query/document model
    assert not dynamic_int8(_float_model(tmp_path / "float.onnx"))
    assert not dynamic_int8(tmp_path / "missing.onnx")


def test_int8_on_cuda_is_said_once_on_stderr(encoder_dir, capsys):
    enc = DocumentEncoder(encoder_dir, provider="cpu")
    enc.warn_int8_on_cuda()
    assert capsys.readouterr().err == ""  # on the CPU the int8 model is the fast one
    enc._device = "cuda"  # the one thing this machine cannot reach: a session running on CUDA
    enc.warn_int8_on_cuda()
    err = capsys.readouterr().err
    assert err.startswith("[embed] model.onnx is a dynamic int8 model: on CUDA it runs about as fast as a CPU")
    assert "scripts/bench_embed_gpu.py fp16" in err and err.count("\n") == 1
    quiet = DocumentEncoder(encoder_dir, provider="cpu", quiet=True)
    quiet._device = "cuda"
    quiet.warn_int8_on_cuda()
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_the_benchmark_runs_end_to_end_on_the_cpu(default_bundle_dir, tmp_path, capsys):
    bench = _script()
    data, out = tmp_path / "data", tmp_path / "out"
    bench.main(["prepare", "--bundle", str(default_bundle_dir), "--out", str(data)])
    texts = json.loads(__import__("gzip").open(data / "texts.json.gz", "rt").read())
    assert len(texts) == json.loads((default_bundle_dir / "manifest.json").read_text())["count"]
    bench.main(["run", "--data", str(data), "--out", str(out), "--sample", "48", "--cpu-sample", "48",
                "--keep", "16", "--whole", "200", "--budget", "600"])
    result = json.loads((out / "result.json").read_text())
    assert [r["batch_size"] for r in result["runs"]] == [32, 128, 256, 1024, 2048, 32]
    assert all(r["docs_per_s"] > 0 and r["texts"] == 48 for r in result["runs"])
    assert result["runs"][0]["device"] == "cpu"  # no CUDA here: the fallback, said on stderr
    assert "has no CUDAExecutionProvider" in capsys.readouterr().err
    assert result["whole"]["texts"] == 200 and result["whole"]["rerun_equal"] is True
    bench.main(["compare", "--result", str(out), "--data", str(data)])
    shown = capsys.readouterr().out
    assert "| cpu | 2048 | 131072 | 48 |" in shown
    # the same texts on the same CPU, batched alike: the two runs' vectors agree
    assert "cosine, CUDA vs the same machine's CPU (16 texts): min 1.0000" in shown


def test_a_bundle_with_the_vectors_of_another_run_searches_alike(tiny_bundle_dir, tmp_path):
    """``vectors`` (both parts, here on the CPU) and ``bundle``: a copy of the tiny bundle whose vectors
    were embedded again and written by the build's own writer opens, checks out against its manifest,
    holds each document's vector within int8's batching drift, and finds the same dense hits (the
    first, and four of five: near ties may swap)."""
    from mathlas.engine import open_bundle
    from mathlas.request import SearchRequest
    from mathlas.service import search

    bench = _script()
    data = tmp_path / "data"
    bench.main(["prepare", "--bundle", str(tiny_bundle_dir), "--out", str(data)])
    for part in (0, 1):
        bench.main(["vectors", "--data", str(data), "--out", str(tmp_path / f"out{part}"), "--part", str(part),
                    "--work", str(tmp_path / "work")])
    assert len(list((tmp_path / "out0").glob("rows-*.npy"))) == len(list((tmp_path / "out1").glob("rows-*.npy"))) == 4
    copy = tmp_path / "copy"
    bench.main(["bundle", "--bundle", str(tiny_bundle_dir), "--parts", str(tmp_path / "out0"), str(tmp_path / "out1"),
                "--out", str(copy)])
    from mathlas import bundle as fmt

    fmt.verify(copy)  # every file listed with its size and sha256, nothing unlisted: raises otherwise
    a, b = open_bundle(tiny_bundle_dir, shared=False), open_bundle(copy, shared=False)
    import numpy as np

    # the same documents in the same rows, each within the int8 drift of two batchings (cosine ~.99)
    va = a.dense._rows.astype(np.float32) * a.dense._scales[:, None]
    vb = b.dense._rows.astype(np.float32) * b.dense._scales[:, None]
    cos = (va * vb).sum(1) / np.linalg.norm(va, axis=1) / np.linalg.norm(vb, axis=1)
    assert cos.min() > 0.97, cos.min()
    for query in ("every finitely generated module over a local ring", "prime numbers"):
        got = [search(SearchRequest.make(query, 5, mode="dense"), x) for x in (a, b)]
        assert got[0].hits[0].id == got[1].hits[0].id, query
        assert len({h.id for h in got[0].hits} & {h.id for h in got[1].hits}) >= 4, query


def test_a_missing_folder_is_one_line(tmp_path):
    bench = _script()
    for argv in (["compare", "--result", str(tmp_path / "no"), "--data", str(tmp_path / "no")],
                 ["prepare", "--bundle", str(tmp_path / "no"), "--out", str(tmp_path / "out")],
                 ["bundle", "--bundle", str(tmp_path / "no"), "--parts", str(tmp_path / "a"), str(tmp_path / "b"),
                  "--out", str(tmp_path / "copy")]):
        with pytest.raises(SystemExit) as e:
            bench.main(argv)
        msg = str(e.value)
        assert msg.startswith(f"bench_embed_gpu.py {argv[0]}: FileNotFoundError") and "\n" not in msg, msg
        assert "prepare" in msg  # where the folders come from
