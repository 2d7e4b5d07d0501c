"""Shared fixtures. Nothing here touches the user's data directory: the whole session runs with
``MATHLAS_DATA_DIR`` pointing at a temporary directory.

``tiny_bundle`` is built once per session with the real pipeline (real source readers on the real
corpora, the real int8 MiniLM encoder that ships inside the default bundle, tantivy, usearch).
"""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build"))  # the build package, also when mathlas is not installed editable
CORPORA = Path(os.environ.get("MATHLAS_CORPORA", REPO.parent / "shared" / "corpora"))
EVAL = Path(os.environ.get("MATHLAS_EVAL", REPO.parent / "shared" / "eval"))

_SESSION_DATA = tempfile.mkdtemp(prefix="mathlas-test-data-")
os.environ["MATHLAS_DATA_DIR"] = _SESSION_DATA
os.environ.pop("MATHLAS_BUNDLE", None)

TINY_RECIPE = """
name = "tiny"
version = "0.1.0"
description = "test bundle: a few statements from each informal source"
[encoder]
path = "{encoder}"
[options]
batch_size = 16
threads = 2
[[sources]]
reader = "stacks"
path = "stacks-project"
limit = 8
options = {{ files = ["algebra.tex"] }}
[[sources]]
reader = "planetmath"
path = "planetmath"
limit = 6
[[sources]]
reader = "hott"
path = "hott-book"
limit = 5
[[sources]]
reader = "openlogic"
path = "open-logic"
limit = 5
[[sources]]
reader = "napkin"
path = "napkin"
limit = 3
[[sources]]
reader = "proofnet"
path = "proofnet"
limit = 4
"""


# Fixtures that take seconds to build: a full corpus read, a browser, a trained or exported model, a
# many-segment index. A test that needs one is slow whatever its own time (the fixture's cost falls on
# whichever test comes first), so the marker follows the fixture; a test slow on its own (a second or
# more: a subprocess, a build, a server of its own) carries @pytest.mark.slow. The fast lane,
# `python -m pytest -q -m "not slow"`, leaves both out (README).
SLOW_FIXTURES = frozenset({
    "browser", "page",                                        # Chromium (test_web_browser*.py)
    "stacks_docs", "planetmath_docs", "mm_docs", "pw_docs", "ol_docs",  # whole corpora read
    "pair_set", "dense_pair_set", "rr_run", "exported",       # training pairs, a trained reranker, exports
    "multi_segment",                                          # a BM25 index written in many segments
})


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_sessionstart(session):
    # A clean CI checkout has shared/ beside it; without it most tests would skip, so say so loudly.
    if os.environ.get("CI") and not CORPORA.is_dir():
        raise pytest.UsageError(f"CI run without the corpora: {CORPORA} is missing (set MATHLAS_CORPORA)")


def pytest_unconfigure(config):
    # the session's data directory holds an installed default bundle (~60 MB): leave nothing behind
    import shutil

    shutil.rmtree(_SESSION_DATA, ignore_errors=True)


def pytest_report_header(config):
    return f"mathlas test data dir: {_SESSION_DATA}; corpora: {CORPORA}"


@pytest.fixture(autouse=True)
def _library_loggers_restored():
    """The ``mathlas`` loggers as each test found them: a test that runs the mathlas command
    in-process (``mathlas.cli.main.main``) gives them a stderr handler and a level, which the next
    test would otherwise inherit (test_install's check that the library is silent failed after
    test_cli_messages)."""
    import logging

    loggers = [logging.getLogger(name) for name in ("mathlas", "mathlas.serve")]
    saved = [(list(lg.handlers), lg.level, lg.propagate) for lg in loggers]
    yield
    for lg, (handlers, level, propagate) in zip(loggers, saved, strict=True):
        lg.handlers[:] = handlers
        lg.setLevel(level)
        lg.propagate = propagate


@pytest.fixture
def cli_logging():
    """The library's messages on stderr, as the mathlas command shows them (the library itself only
    logs: without this, nothing reaches stderr)."""
    import logging

    from mathlas.cli.main import _log_to_stderr

    logger = logging.getLogger("mathlas")
    handlers, level = list(logger.handlers), logger.level
    _log_to_stderr(quiet=False)
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


def by_id(docs, what: str) -> dict:
    """Documents by id, asserting the ids are unique."""
    ids = [d.id for d in docs]
    assert len(ids) == len(set(ids)), f"duplicate {what} ids"
    return {d.id: d for d in docs}


def corpus(name: str) -> Path:
    """A corpus folder under shared/corpora, or skip the test saying where it was looked for."""
    root = CORPORA / name
    if not root.is_dir():
        pytest.skip(f"corpus {name!r} not found at {root} (set MATHLAS_CORPORA to shared/corpora)")
    return root


def need_corpora() -> None:
    if not CORPORA.is_dir():
        pytest.skip(f"corpora not found at {CORPORA} (set MATHLAS_CORPORA)")


@pytest.fixture
def http_root(tmp_path):
    """(directory, base URL) of a real HTTP server on the loopback interface."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def default_bundle_dir() -> Path:
    """The embedded default bundle, installed from artifacts/ into the session's data dir."""
    from mathlas.releases.install import resolve_bundle

    return resolve_bundle(None, quiet=True)


@pytest.fixture(scope="session")
def encoder_dir(request) -> Path:
    """The real int8 MiniLM encoder (from the default bundle; ``$MATHLAS_TEST_ENCODER`` overrides)."""
    env = os.environ.get("MATHLAS_TEST_ENCODER")
    return Path(env) if env else request.getfixturevalue("default_bundle_dir") / "encoder"


@pytest.fixture(scope="session")
def tiny_recipe(tmp_path_factory, encoder_dir) -> Path:
    need_corpora()
    path = tmp_path_factory.mktemp("recipe") / "tiny.toml"
    path.write_text(TINY_RECIPE.format(encoder=encoder_dir.as_posix()), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_bundle_dir(tmp_path_factory, tiny_recipe) -> Path:
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    out = tmp_path_factory.mktemp("bundles") / "tiny-0.1.0"
    return build(load_recipe(tiny_recipe, CORPORA), out, cache_dir=None, quiet=True)


@pytest.fixture(scope="session")
def tiny(tiny_bundle_dir):
    import mathlas

    return mathlas.open_bundle(tiny_bundle_dir)


# A few real Mathlib files, copied with their paths into a throwaway Lean project: the formal bundle
# of the tests (built exactly like `mathlas index build-lean PATH`, with the real int8 MiniLM encoder).
FORMAL_FILES = (
    "Mathlib/Data/Nat/Prime/Defs.lean",
    "Mathlib/Data/Nat/Prime/Basic.lean",
    "Mathlib/Algebra/Group/Defs.lean",
    "Mathlib/RingTheory/Ideal/Defs.lean",
    "Mathlib/FieldTheory/Tower.lean",
)


@pytest.fixture(scope="session")
def formal_bundle_dir(tmp_path_factory, encoder_dir) -> Path:
    import shutil

    from mathlas_build.pipeline import build
    from mathlas_build.lean_build import lean_recipe

    need_corpora()
    project = tmp_path_factory.mktemp("leanproj") / "proj"
    for rel in FORMAL_FILES:
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus("mathlib4") / rel, project / rel)
    recipe = lean_recipe(project, encoder_dir, name="formaltest", version="0.1.0")
    out = tmp_path_factory.mktemp("bundles") / "formaltest-0.1.0"
    return build(recipe, out, cache_dir=None, quiet=True)


def tiny_bert(root: Path, texts: list[str], vocab_size: int) -> Path:
    """A tiny random BERT (2 layers, 32 dims) with a WordPiece vocabulary made from ``texts``, saved
    as a Hugging Face checkpoint under ``root/tiny-bert``: what the export and training tests use
    where a real model would be too slow. The vocabulary is a pure function of ``texts`` (its
    characters, then its most frequent words up to ``vocab_size``, ties in alphabetical order): the
    tokenizers library's trainer breaks frequency ties in hash order, which differs between runs,
    and a test of a few training steps on another vocabulary can land elsewhere."""
    from collections import Counter

    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel

    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    words = Counter(w for t in texts for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(t)))
    chars = sorted({c for w in words for c in w})
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + chars + ["##" + c for c in chars]
    vocab += [w for w, _ in sorted(words.items(), key=lambda x: (-x[1], x[0])) if w not in vocab]
    vocab = vocab[:max(vocab_size, len(specials) + 2 * len(chars))]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    src = root / "tiny-bert"
    src.mkdir()
    tok.save(str(src / "tokenizer.json"))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, pad_token_id=0)
    BertModel(cfg).eval().save_pretrained(str(src), safe_serialization=True)
    return src


# tests/data/lean-project: a tiny Lean 4 project of the tests' own (no Mathlib, no package; MIT licensed),
# built with the real pipeline exactly like `mathlas index build-lean PATH` does, with the real int8
# MiniLM encoder. Its declarations have docstrings, binders, a structure with fields, a @[simp] lemma
# and theorems that use each other (dependencies both ways). It is copied out of the checkout first, so
# the build sees a project outside any git repository whatever the checkout is (no link, licence MIT).
LEAN_PROJECT = REPO / "tests" / "data" / "lean-project"


@pytest.fixture(scope="session")
def lean_project_dir() -> Path:
    """The test Lean project in the repository (read it, do not write into it)."""
    return LEAN_PROJECT


@pytest.fixture(scope="session")
def lean_project_bundle_dir(tmp_path_factory, encoder_dir) -> Path:
    """A formal bundle (name ``toy``, version 0.1.0) of tests/data/lean-project."""
    import shutil

    from mathlas_build.lean_build import lean_recipe
    from mathlas_build.pipeline import build

    project = tmp_path_factory.mktemp("leanproject") / "toy"
    shutil.copytree(LEAN_PROJECT, project)
    recipe = lean_recipe(project, encoder_dir, name="toy", version="0.1.0")
    out = tmp_path_factory.mktemp("bundles") / "toy-0.1.0"
    return build(recipe, out, cache_dir=None, quiet=True)


# ------------------------------------------------------------------------------ fixtures several modules use
# Defined here, never imported from one test module into another: pytest builds an imported session
# fixture again in every module that imports it (the web server started up to six times).

@pytest.fixture(scope="session")
def papers_bundle_dir(tmp_path_factory, encoder_dir) -> Path:
    """A real bundle of a small parquet fixture in the TheoremSearch dataset's schema (papers with
    authors, categories, years, citations; test_sources_theoremsearch.build_papers_bundle)."""
    from test_sources_theoremsearch import build_papers_bundle

    return build_papers_bundle(tmp_path_factory, encoder_dir)


@pytest.fixture(scope="session")
def papers(papers_bundle_dir):
    """The papers bundle, open."""
    import mathlas

    return mathlas.open_bundle(papers_bundle_dir)


@pytest.fixture(scope="session")
def web(tiny_bundle_dir, papers_bundle_dir, formal_bundle_dir):
    """One ``mathlas serve`` for most web tests (test_web_serve.WebServer): the tiny bundle (default)
    and the papers bundle, and the formal test bundle for the Lean endpoints; no token."""
    from test_web_serve import WebServer, assert_clean

    server = WebServer("--bundle", str(tiny_bundle_dir), "--bundle", str(papers_bundle_dir),
                       "--formal-bundle", str(formal_bundle_dir))
    yield server
    server.stop()
    assert_clean(server)


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """A scratch data directory, no shipped artifacts, no default bundle named, loopback HTTP without
    a proxy: for the install tests (``pytestmark = pytest.mark.usefixtures("isolated")``)."""
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MATHLAS_ARTIFACTS", str(tmp_path / "no-artifacts"))
    monkeypatch.delenv("MATHLAS_BUNDLE", raising=False)
    monkeypatch.setenv("no_proxy", "*")  # loopback HTTP must not go through a proxy
    monkeypatch.setenv("NO_PROXY", "*")


# The browser tests (test_web_browser*.py) drive Debian's Chromium with Playwright's Python client
# (executable_path: no browser is downloaded); each of those modules skips, saying why, without them.
CHROMIUM = os.environ.get("MATHLAS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium with a scratch profile, one per test module."""
    if not CHROMIUM:
        pytest.skip("no Chromium installed (Debian: apt-get install -y chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                                   "(pip install -e '.[test]')")
    profile = tempfile.mkdtemp(prefix="mathlas-chromium-")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                       args=CHROMIUM_ARGS, viewport={"width": 1100, "height": 900})
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser):
    """A page that fails the test on a script error, a failed request or an HTTP error answer (a test
    that provokes one on purpose lists its status in ``pg.expected_statuses``)."""
    pg = browser.new_page()
    errors: list[str] = []
    pg.expected_statuses = set()
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # a fetch the page itself gives up when the test navigates on or closes it (net::ERR_ABORTED: the
    # bodies it loads for the hits in view) is no failure; any other (refused, reset, ...) is
    pg.on("requestfailed", lambda r: None if "ERR_ABORTED" in (r.failure or "")
          else errors.append(f"request failed: {r.url} ({r.failure})"))
    pg.on("response", lambda r: errors.append(f"{r.status} {r.url}")
          if r.status >= 400 and r.status not in pg.expected_statuses else None)
    yield pg
    pg.close()
    assert errors == []


# Training the learned ranking stage reads candidate pools and features exactly as search makes them: the
# trainer (and the recipe's check of a model's feature list) may use the ranking package and open a bundle.
TRAINING_MAY_IMPORT = {"mathlas.engine", "mathlas.groups", "mathlas.ranking.abbreviations", "mathlas.ranking.candidates",
                       "mathlas.ranking.filters", "mathlas.ranking.fusion", "mathlas.ranking.intent",
                       "mathlas.ranking.learned", "mathlas.ranking.lexical", "mathlas.ranking.pipeline"}
TRAINING_FILES = {"build/mathlas_build/training/ltr.py", "build/mathlas_build/training/mined.py",
                  "build/mathlas_build/recipe.py"}
