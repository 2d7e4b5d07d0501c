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
    # lines of the recipe's [[sources]] entry (BASE ends in it)
    ("limit = 'abc'\n", "sources[0].limit"),
    ("limit = -1\n", "sources[0].limit"),
    ("options = 3\n", "sources[0].options"),
    ("lmit = 3\n", "sources[0].lmit"),
])
def test_a_bad_recipe_value_is_refused_when_read(tmp_path, capsys, extra, key):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(BASE + extra, encoding="utf-8")
    rc, err = _run(capsys, recipe, "--out", tmp_path / "out")
    line = _one_line(err)
    assert rc == 2
    assert str(recipe) in line and f" {key} " in line, line
    assert not (tmp_path / "out").exists()


def test_unknown_keys_name_the_known_ones(tmp_path, capsys):
    recipe = tmp_path / "bad.toml"
    recipe.write_text(BASE + "[optoins]\nbatch_size = 8\n", encoding="utf-8")
    _, err = _run(capsys, recipe)
    assert "known: name, version, description, encoder, options" in err


# ------------------------------------------------------------------ paths: checked before any reading

@pytest.fixture()
def toy(tmp_path):
    """A recipe over a 2-document JSONL corpus with a stand-in encoder: everything checked before the
    corpus is read answers; reading itself would work, embedding would not."""
    enc = tmp_path / "enc"
    enc.mkdir()
    (enc / "encoder.json").write_text("{}", encoding="utf-8")
    (tmp_path / "toy.jsonl").write_text('{"id": "a", "statement": "x"}\n{"id": "b", "statement": "y"}\n',
                                        encoding="utf-8")
    recipe = tmp_path / "toy.toml"
    recipe.write_text(f'name = "toy"\nversion = "1"\n[encoder]\npath = "{enc.as_posix()}"\n[[sources]]\n'
                      f'reader = "generic"\npath = "{(tmp_path / "toy.jsonl").as_posix()}"\n'
                      'options = { source = "toy", license = "CC0" }\n', encoding="utf-8")
    return recipe


def test_force_replaces_only_a_bundle(toy, tmp_path, capsys):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "chapter1.tex").write_text("years of work", encoding="utf-8")
    afile = tmp_path / "notes.txt"
    afile.write_text("notes", encoding="utf-8")
    for out, kind in ((thesis, "a folder without manifest.json"), (afile, "a file")):
        rc, err = _run(capsys, toy, "--out", out, "--force")
        line = _one_line(err)
        assert rc == 2 and f"--out {out} is {kind}, not a bundle" in line and "choose another --out" in line
    assert (thesis / "chapter1.tex").read_text(encoding="utf-8") == "years of work"
    assert afile.read_text(encoding="utf-8") == "notes"


@pytest.mark.parametrize("args, says", [
    (["--out", "{tmp}/afile/sub"], "--out {tmp}/afile/sub cannot be made: {tmp}/afile is a file"),
    (["--out", "{tmp}/bundle"], "{tmp}/bundle exists; pass --force to replace it"),
    (["--out", "{tmp}/new", "--cache", "{tmp}/afile/cache"], "--cache {tmp}/afile/cache is not a folder"),
    (["--out", "{tmp}/new", "--pack", "{tmp}/afile"], "--pack {tmp}/afile is not a folder"),
])
def test_output_problems_are_refused_before_reading(toy, tmp_path, capsys, args, says):
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "manifest.json").write_text("{}", encoding="utf-8")
    rc, err = _run(capsys, toy, *[a.format(tmp=tmp_path) for a in args])
    line = _one_line(err)  # no "[read]" line: nothing was read
    assert rc == 2 and says.format(tmp=tmp_path) in line, line
    assert "Errno" not in line


def test_an_unwritable_out_is_refused_before_reading(toy, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        probe = ro / "probe"
        try:
            probe.mkdir()
            probe.rmdir()
            pytest.skip("this user writes anywhere (root): no folder it cannot write")
        except PermissionError:
            pass
        rc, err = _run(capsys, toy, "--out", ro / "b")
        assert rc == 2 and f"--out {ro / 'b'}: cannot write in {ro}" in _one_line(err)
    finally:
        ro.chmod(0o755)


def test_a_recipe_that_is_a_folder(tmp_path, capsys):
    rc, err = _run(capsys, tmp_path)
    assert rc == 2 and f"{tmp_path} is a folder, not a recipe: pass a recipe file" in _one_line(err)


@pytest.mark.parametrize("args, says", [
    (["--batch-size", "0"], "argument --batch-size: must be 1 or more, not 0"),
    (["--threads", "-3"], "argument --threads: must be 0 or more, not -3"),
    (["--max-batch-tokens", "x"], "argument --max-batch-tokens: 'x' is not an integer"),
])
def test_bad_numbers_are_refused_by_the_parser(toy, capsys, args, says):
    with pytest.raises(SystemExit) as e:
        main([str(toy), *args])
    assert e.value.code == 2 and says in capsys.readouterr().err


def test_shard_refuses_the_options_of_a_bundle(toy, tmp_path, capsys):
    rc, err = _run(capsys, toy, "--shard", "0/2", "--out", tmp_path / "b", "--install")
    line = _one_line(err)
    assert rc == 2 and "--out, --install are for the merge" in line


@pytest.mark.parametrize("name, says", [
    ('"../../up"', "name = '../../up' may hold only letters"),
    ('""', "name = '' must be a non-empty string"),
    ('"a/b"', "name = 'a/b' may hold only"),
    ('"a\\\\b"', "may hold only"),
])
def test_unsafe_names_are_refused(toy, tmp_path, capsys, name, says):
    toy.write_text(toy.read_text(encoding="utf-8").replace('name = "toy"', f"name = {name}"), encoding="utf-8")
    rc, err = _run(capsys, toy)
    assert rc == 2 and says in _one_line(err)
    assert not (tmp_path.parent / "up").exists()


def test_an_empty_version_is_refused(toy, capsys):
    toy.write_text(toy.read_text(encoding="utf-8").replace('version = "1"', 'version = ""'), encoding="utf-8")
    rc, err = _run(capsys, toy)
    assert rc == 2 and "version = '' must be a non-empty string" in _one_line(err)


# ------------------------------------------------------------------ build-lean (mathlas-build lean)

@pytest.fixture()
def lean_project(tmp_path):
    proj = tmp_path / "proj"
    (proj / "Toy").mkdir(parents=True)
    (proj / "lakefile.toml").write_text('name = "toy"\n', encoding="utf-8")
    (proj / "Toy" / "Basic.lean").write_text("theorem t : True := trivial\n", encoding="utf-8")
    enc = tmp_path / "enc"
    enc.mkdir()
    (enc / "encoder.json").write_text("{}", encoding="utf-8")
    return proj, ["--encoder", str(enc), "--workdir", str(tmp_path / "w"), "--no-cache"]


def test_lean_project_mistakes(lean_project, tmp_path, capsys):
    proj, opts = lean_project
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "README.md").write_text("x", encoding="utf-8")
    for argv, says in (
        ([empty], f"no .lean files under {empty}; pass the project's folder (or --dirs"),
        ([proj / "lakefile.toml"], "lakefile.toml is a file; pass the project folder"),
        ([tmp_path / "nope"], f"Lean project not found at {tmp_path / 'nope'}"),
        ([proj, "--dirs", "Nope"], "--dirs 'Nope': no such top folder"),
        ([proj, "--name", "../../escaped"], "--name '../../escaped' may hold only"),
        ([proj, "--name", "My Proj/x"], "--name 'My Proj/x' may hold only"),
        ([proj, "--version", ""], "--version '' must be a non-empty string"),
    ):
        rc, err = _run(capsys, "lean", *argv, *opts)
        assert rc == 2 and says in _one_line(err), err
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "w").exists()


@pytest.mark.parametrize("make, says", [
    (lambda p: (p / "Toy" / "Broken.lean").symlink_to(p / "nowhere"), "Broken.lean does not exist (a broken link?)"),
    (lambda p: (p / "Toy" / "Dir.lean").mkdir(), "Dir.lean is a folder where a file belongs"),
])
def test_lean_unreadable_files_end_in_one_line(lean_project, capsys, make, says):
    proj, opts = lean_project
    make(proj)
    rc, err = _run(capsys, "lean", proj, *opts, "-q")
    assert rc == 2 and says in _one_line(err), err


def test_ray_checks_the_bundle_folder_before_the_shards(toy, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    rc, err = _run(capsys, "ray", toy, "--shards", "2", "--out", afile / "b", "--shards-dir", tmp_path / "s")
    assert rc == 2 and f"--out {afile / 'b'} cannot be made" in _one_line(err)
    assert not (tmp_path / "s").exists()
