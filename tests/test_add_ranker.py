"""``mathlas-build add-ranker``: a learned ranking model attached to a built bundle, optionally as a
patch release of it (the default bundle 1.5.1 is 1.5.0 with a refitted ``match``: docs/building.md)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "artifacts" / "rankers" / "informal-ltr-1.json"


def build_cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathlas_build.cli", *argv], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def test_a_model_attached_as_a_patch_release(tiny_bundle_dir, tmp_path):
    from mathlas.bundle import read_manifest, sha256_file, verify
    from mathlas.engine import open_bundle
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.request import SearchRequest

    copy = tmp_path / "tiny-patched"
    shutil.copytree(tiny_bundle_dir, copy)
    before = read_manifest(copy)
    p = build_cli("add-ranker", str(copy), str(MODEL), "--version", "9.9.9")
    assert p.returncode == 0, p.stderr
    assert "attached to" in p.stderr and "(now version 9.9.9)" in p.stderr
    assert json.loads(p.stdout)["kind"] == "trees"
    m = verify(copy)                    # every file's size and sha256 as the manifest lists them
    assert m.version == "9.9.9" and m.name == before.name
    assert m.recipe["patched"] == {"from": f"{before.name}-{before.version}", "ranker": MODEL.name,
                                   "sha256": sha256_file(MODEL)}
    spec = json.loads(MODEL.read_text(encoding="utf-8"))
    assert m.ranker["match"] == spec["match"] and m.ranker["trees"] == len(spec["trees"])
    # the patched bundle searches with the model: its answers are ordered by the learned stage
    ranked = pipeline_for(open_bundle(copy)).rank(SearchRequest.make("Nakayama's lemma", 5))
    assert ranked.hits and "learned" in ranked.notes
    assert "learned" not in pipeline_for(open_bundle(tiny_bundle_dir)).rank(SearchRequest.make("Nakayama's lemma", 5)).notes
    # a second model is refused unless asked, in one line
    p = build_cli("add-ranker", str(copy), str(MODEL))
    assert p.returncode != 0 and "already has a ranking model; pass --force" in p.stderr


def test_a_model_of_other_features_is_refused_and_the_bundle_left_as_it_was(tiny_bundle_dir, tmp_path):
    from mathlas.bundle import read_manifest

    copy = tmp_path / "tiny-copy"
    shutil.copytree(tiny_bundle_dir, copy)
    spec = json.loads(MODEL.read_text(encoding="utf-8"))
    spec["features"] = [*spec["features"][:-1], "no_such_feature"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(spec), encoding="utf-8")
    before = (copy / "manifest.json").read_bytes()
    p = build_cli("add-ranker", str(copy), str(bad), "--version", "9.9.9", "--force")
    assert p.returncode != 0
    assert (copy / "manifest.json").read_bytes() == before and read_manifest(copy).version != "9.9.9"


@pytest.mark.parametrize("version", ["../../evil", "x/y", "1.5.1 ", "", "0.1.0"])
def test_a_version_that_is_no_version_or_the_same_is_refused(tiny_bundle_dir, tmp_path, version):
    copy = tmp_path / "tiny-v"
    shutil.copytree(tiny_bundle_dir, copy)
    before = (copy / "manifest.json").read_bytes()
    p = build_cli("add-ranker", str(copy), str(MODEL), "--version", version)
    assert p.returncode != 0 and "--version" in p.stderr.strip().splitlines()[-1], p.stderr
    assert (copy / "manifest.json").read_bytes() == before


@pytest.mark.parametrize("argv, says", [
    (["add-ranker"], "mathlas-build add-ranker: error: the following arguments are required: bundle, model"),
    (["add-ranker", "nosuchdir", str(MODEL)], "mathlas-build: no bundle directory at nosuchdir"),
])
def test_bad_arguments_say_what_is_wrong(argv, says):
    p = build_cli(*argv)
    assert p.returncode != 0 and p.stderr.strip().splitlines()[-1] == says, p.stderr
