"""Ordinary mistakes with ``mathlas-build``: each is refused in one line on stderr, naming what is wrong
and what to do, with the exit code docs/building.md gives, before any reading or embedding."""
from __future__ import annotations

import pytest

from mathlas_build.cli import main

# A recipe whose encoder and corpus do not exist: a check that runs before them is the one that answers
BASE = """name = "probe"
version = "0.0.1"
[encoder]
path = "/nonexistent/encoder"
[[sources]]
reader = "proofnet"
path = "/nonexistent/proofnet"
"""


def _run(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return rc, err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("extra, key", [
    ("[fusion]\nk_rrf = -5\n", "fusion.k_rrf"),
    ("[fusion]\nweights = { lexical = \"a\" }\n", "fusion.weights.lexical"),
    ("[fusion]\nweights = { lexcial = 1.0 }\n", "fusion.weights.lexcial"),
    ("[fusion]\nkrrf = 5\n", "fusion.krrf"),
    ("[fusion]\nshort_query_repeat = 99\n", "fusion.short_query_repeat"),
    ("[fusion.match.hybrid]\nweights = \"x\"\n", "fusion.match.hybrid.weights"),
    ("[options]\nlexical_boosts = { txet = 1.0 }\n", "options.lexical_boosts.txet"),
    ("[options]\nlexical_boosts = { text = 0.0 }\n", "options.lexical_boosts"),
    ("[options]\nbinary_codes = \"thermo3\"\n", "options.binary_codes"),
    ("[options]\nbatch_size = \"big\"\n", "options.batch_size"),
    ("[options]\nthreads = -3\n", "options.threads"),
    ("[options]\nchunk = 0\n", "options.chunk"),
    ("[options]\nbatchsize = 8\n", "options.batchsize"),
    ("[optoins]\nbatch_size = 8\n", "optoins"),
    ("[[source]]\nreader = \"proofnet\"\npath = \"proofnet\"\n", "source"),
    ("[reranker]\npath = \"x\"\ntop_n = 0\n", "reranker.top_n"),
    ("[ranker]\nmodle = \"x\"\n", "ranker.modle"),
])
def test_a_bad_recipe_value_is_refused_when_read(tmp_path, capsys, extra, key):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(BASE + extra, encoding="utf-8")
    rc, err = _run(capsys, recipe, "--out", tmp_path / "out")
    line = _one_line(err)
    assert rc == 2
    assert str(recipe) in line and f" {key} " in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("source, key", [
    ("limit = 'abc'\n", "sources[0].limit"),
    ("limit = -1\n", "sources[0].limit"),
    ("options = 3\n", "sources[0].options"),
    ("lmit = 3\n", "sources[0].lmit"),
])
def test_a_bad_source_entry_is_refused_when_read(tmp_path, capsys, source, key):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(BASE + source, encoding="utf-8")
    rc, err = _run(capsys, recipe)
    line = _one_line(err)
    assert rc == 2 and f" {key} " in line, line


def test_unknown_keys_name_the_known_ones(tmp_path, capsys):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(BASE + "[optoins]\nbatch_size = 8\n", encoding="utf-8")
    _, err = _run(capsys, recipe)
    assert "known: name, version, description, encoder, options" in err
