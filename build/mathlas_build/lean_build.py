"""Formal bundles from Lean projects: ``mathlas-build lean PATH`` (and ``mathlas index build-lean PATH``).

A user's Lean project pins its own Mathlib; the bundle built here indexes exactly the sources on disk:
the project's own folders and every package under ``.lake/packages`` (Mathlib, Batteries, ...). No
Lean toolchain is needed (the reader parses the sources as text). The query encoder is the one that
ships in the default bundle (all-MiniLM-L6-v2, int8), so the build needs nothing beyond the runtime
dependencies; the repository's recipe ``build/recipes/mathlib.toml`` builds the same kind of bundle
from the Mathlib + Batteries copies in the corpora with the fp32 document model.

Naming and versioning (``project_name``, ``project_version``): a project is named after its Lake
package (``lake-manifest.json``'s or ``lakefile.toml``'s ``name``, ``lakefile.lean``'s ``package``),
else its folder; only Mathlib itself is named ``mathlib``. Its version is ``0.<date>.0``, with
``+<commit>`` when the project is in a repository of its own (the top of a git work tree) or in one
that ``index info`` names (a remote it links to): a project copied outside git, or lying in some
other checkout without a remote, gets no commit. The formal tools search every installed formal
bundle when none is named (``mathlas.formal``), so a project need not be called ``mathlib`` to be
searched. Building installs nothing but the bundle built (``default_encoder``).

The formal retrieval settings live here, once: ``FORMAL_OPTIONS`` / ``FORMAL_FUSION`` (a test checks
that the Mathlib recipe uses the same values). They are the measured best on
``shared/eval/formal-dev.jsonl`` (docs/formal.md).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, UTC
from pathlib import Path

from mathlas_build.recipe import Recipe, SourceSpec

FORMAL_OPTIONS = {
    "batch_size": 64,
    "threads": 2,
    # issue 22 (scripts/tune_formal.py, docs/formal.md): alias 3 and context 0.25 gain on both formal
    # sets; the gloss field (definitions a statement mentions) lost at every weight tried, so it is
    # built but not searched (0)
    "lexical_boosts": {"text": 1.0, "alias": 3.0, "context": 0.25, "gloss": 0.0},
    "lexical_symbols": "lean",
    "lexical_identifiers": "tokenizer",
    # 280k declarations: thermometer codes keep dense recall@10 >= 0.99 at the default pool
    # (signs: 0.942 at pool 800); docs/bundle-format.md, docs/formal.md
    "binary_codes": "thermometer3",
}
# Measured over the full Mathlib bundle on formal-dev.jsonl (titles) and formal-qr-dev.jsonl (asked the
# way people ask) together, objective the mean of their MRR@20 (scripts/tune_fusion.py; docs/formal.md).
# With the fine-tuned encoder (all-MiniLM-L6-v2-math) the channels weigh the same: k 5, lexical 1 gives
# formal-dev .525 / formal-qr-dev .367, where lexical 2 (tuned on titles alone with the old encoder)
# gives .550 / .332. The PageRank prior (log1, weight 0.01) then adds .526 / .382 (0.003: .526 / .374;
# 0.03: .506 / .395): it helps the queries that ask for well-used results in words and costs titles
# nothing at 0.01. (With the old encoder and lexical 2 it gained nothing on formal-dev alone.)
FORMAL_FUSION = {
    "k_rrf": 5,
    "weights": {"lexical": 1.0, "dense": 1.0},
    "priors": {"pagerank": {"column": "pagerank", "transform": "log1", "weight": 0.01}},
    # a query that reads as a noun phrase (mathlas.ranking.intent): definitions x1.25, the PageRank prior x3
    # (issue 22: formal-qr-dev MRR@20 +.036, name-style P@1 .31 -> .43; formal-dev -.010)
    "definition_intent": {"kinds": ["def", "abbrev", "structure", "class", "inductive"], "factor": 1.25,
                          "prior_factor": 3.0},
    # the answers' match (mathlas.ranking.confidence) fitted on Lean with round 2's encoder (what build-lean embeds
    # with since informal-1.3.0) and exact int8 arithmetic (mathlas.encoder.int8_kernel_saturates):
    # scripts/bench_match.py --set formal-qr-dev.jsonl --bundle mathlib --other-bundle informal-1.3.0
    # (leave-one-query-out, hybrid: false none .026 [.01, .05], none on the formal queries asked of the
    # informal bundle .184 [.14, .23]). docs/formal.md
    "match": {
        "hybrid": {"weights": [4.3602, -3.6314, 0.2476, 0.1555, 0.1056, 0.0136, 0.3368], "bias": -4.1337, "none_below": 0.2819, "strong_at": 0.7045},
        "dense": {"weights": [4.3829, 0.2834, 0.1811], "bias": -3.0742, "none_below": 0.2987, "strong_at": 0.6479},
        "lexical": {"weights": [0.1705, 0.1375, 0.1089], "bias": -1.2539, "none_below": 0.3663, "strong_at": 0.6707}
    },
}
# The learned ranking stage every formal bundle carries (mathlas.ranking.learned): trained on the full
# Mathlib bundle's pools of formal-qr-dev and formal-dev by scripts/train_ranker_formal.py, out-of-fold
# figures in docs/formal.md. It ships in the wheel (mathlas/artifacts/rankers/, the repository's
# artifacts/rankers/) so that build-lean attaches it with nothing to fetch; the Mathlib recipe names the
# same file and checksum (a test keeps them equal).
FORMAL_RANKER = "mathlib-ltr-2.json"
FORMAL_RANKER_SHA256 = "d53ddf160b5ff6a209ac3cccb06ae09442e9f1f9bb88b71a6098d5e6b39afda5"
MATHLIB = "mathlib"  # Mathlib's own package name, and the name of its bundle
DEFAULT_NAME = MATHLIB  # kept for callers that name the Mathlib bundle (recipes, scripts)
_NAME_CHARS = re.compile(r"[^a-z0-9._+-]+")


def project_name(path: Path) -> str:
    """The bundle name of the Lean project at ``path``: its Lake package name (``lake-manifest.json``,
    ``lakefile.toml`` ``name``, ``lakefile.lean`` ``package``), else its folder's name; lowercased,
    other characters than letters, digits and ``._+-`` as ``-``. Mathlib's own checkout is ``mathlib``."""
    path = Path(path).resolve()
    found = ""
    try:
        found = str(json.loads((path / "lake-manifest.json").read_text(encoding="utf-8")).get("name") or "")
    except (OSError, ValueError, AttributeError):
        pass
    if not found:
        try:
            m = re.search(r'(?m)^\s*name\s*=\s*"([^"]+)"', (path / "lakefile.toml").read_text(encoding="utf-8"))
            found = m.group(1) if m else ""
        except OSError:
            pass
    if not found:
        try:
            m = re.search(r"(?m)^\s*package\s+(?:«([^»]+)»|([A-Za-z_][\w.]*))",
                          (path / "lakefile.lean").read_text(encoding="utf-8"))
            found = (m.group(1) or m.group(2)) if m else ""
        except OSError:
            pass
    name = _NAME_CHARS.sub("-", (found or path.name).strip().lower()).strip("-._+")
    return name or "lean-project"


def _git_top(path: Path) -> Path | None:
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out).resolve() if out else None


def project_roots(path: Path) -> list[Path]:
    """The Lean source trees of a project: itself, then each package under ``.lake/packages``."""
    path = Path(path)
    if path.is_file():
        raise ValueError(f"{path} is a file; pass the project folder (the one holding lakefile.lean or lakefile.toml)")
    if not path.is_dir():
        raise FileNotFoundError(f"Lean project not found at {path}; pass the project folder")
    roots = [path]
    packages = path / ".lake" / "packages"
    if packages.is_dir():
        roots.extend(sorted(p for p in packages.iterdir() if p.is_dir()))
    return roots


def project_version(path: Path) -> str:
    """A version for the bundle, ``0.<yyyymmdd>.0`` so newer builds sort later, with ``+<commit>``
    (8 hex digits) when the project is at a commit of its own repository: the top of a git work
    tree, or a tree whose origin ``index info`` names (``tree_origin``: a remote it links to, a
    corpus copy's ``SOURCE.md``). A project outside git, or inside another checkout that names no
    repository, gets none: the enclosing checkout's commit says nothing about the project."""
    from mathlas_build.sources.lean import tree_origin

    path = Path(path).resolve()
    day = datetime.now(UTC).strftime("%Y%m%d")
    origin = tree_origin(path)
    commit = origin.commit if origin.url or _git_top(path) == path else ""
    commit = commit[:8] if re.fullmatch(r"[0-9a-f]{7,40}", commit or "") else ""
    return f"0.{day}.0" + (f"+{commit}" if commit else "")


def formal_ranker() -> dict:
    """The recipe's ``ranker`` block of a formal bundle: the shipped model (``FORMAL_RANKER``), checked
    against ``FORMAL_RANKER_SHA256``; a missing or changed file is refused in one line."""
    import mathlas
    from mathlas.bundle import sha256_file

    # the wheel's mathlas/artifacts, else a checkout's artifacts/ (as mathlas.releases.catalog.artifacts_dirs,
    # which build/ may not import: it holds to the bundle contract, tests/test_layout.py)
    package = Path(mathlas.__file__).resolve().parent
    model = next((p for d in (package / "artifacts", package.parent / "artifacts")
                  if (p := d / "rankers" / FORMAL_RANKER).is_file()), None)
    if model is None:
        raise FileNotFoundError(f"the formal ranking model {FORMAL_RANKER} is not installed with mathlas "
                                "(reinstall mathlas, or build with --no-ranker)")
    got = sha256_file(model)
    if got != FORMAL_RANKER_SHA256:
        raise ValueError(f"the formal ranking model {model} has sha256 {got}, expected {FORMAL_RANKER_SHA256} "
                         "(reinstall mathlas, or build with --no-ranker)")
    return {"model": model, "sha256": got, "license": "Apache-2.0"}


def check_project(path: Path, dirs: list[str] | None = None) -> None:
    """Refuse, before an encoder is unpacked or a file read, a path that is no Lean project: a file,
    a missing folder, ``dirs`` that are not its top folders, or no ``.lean`` file to read."""
    roots = project_roots(path)
    path = Path(path)
    if dirs:
        have = sorted(p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
        for d in dirs:
            if not d or "/" in d.strip("/") or d in (".", "..") or not (path / d).is_dir():
                raise ValueError(f"--dirs {d!r}: no such top folder in {path}; name some of its folders "
                                 f"({', '.join(have) or 'it has none'})")
        where = [path / d for d in dirs]
    else:
        where = roots
    if not any(next(r.rglob("*.lean"), None) for r in where):
        shown = ", ".join(str(r) for r in where) if dirs else str(path)
        raise ValueError(f"no .lean files under {shown}; pass the project's folder (or --dirs with its source "
                         f"folders)")


def lean_recipe(path: Path, encoder: Path, *, name: str | None = None, version: str | None = None,
                document_model: str | None = None, dirs: list[str] | None = None,
                license: str | None = None, ranker: bool = True) -> Recipe:
    """An in-memory recipe for the Lean project at ``path`` (see the module docstring); ``ranker``: attach
    the formal learned ranking model (``FORMAL_RANKER``), else the bundle keeps RRF."""
    path = Path(path).resolve()
    roots = project_roots(path)
    options: dict = {"extra_roots": [str(r) for r in roots[1:]]} if len(roots) > 1 else {}
    if dirs:
        options["dirs"] = list(dirs)
    if license:
        options["license"] = license
    # the Stacks statements of @[stacks TAG] attributes, from the default bundle beside the encoder
    stacks = Path(encoder).parent
    if (stacks / "meta" / "documents.parquet").is_file():
        options["stacks_bundle"] = str(stacks)
    # the manifest's attribution: the project as itself, then each package as itself
    from mathlas_build.sources.lean import tree_origin

    own = tree_origin(path, license=license)
    packages = [tree_origin(r, project=path) for r in roots[1:]]
    options["attribution"] = own.describe() + (
        "; packages: " + ", ".join(o.describe() for o in packages) if packages else "")
    from mathlas_build.recipe_checks import check_name

    name = check_name(project_name(path) if name is None else name, "--name")
    version = check_name(project_version(path) if version is None else version, "--version")
    raw = {"name": name, "version": version,
           "description": f"Lean declarations of {name} and its packages ({', '.join(r.name for r in roots[1:]) or 'none'})",
           "encoder": {"path": str(encoder), **({"document_model": document_model} if document_model else {})},
           "options": FORMAL_OPTIONS, "fusion": FORMAL_FUSION,
           **({"ranker": {"model": FORMAL_RANKER, "sha256": FORMAL_RANKER_SHA256, "license": "Apache-2.0"}}
              if ranker else {}),
           "sources": [{"reader": "lean", "path": str(path), "options": options}]}
    return Recipe(name=name, version=version, description=raw["description"], encoder=Path(encoder),
                  encoder_sha256=None, document_model=document_model,
                  sources=[SourceSpec("lean", path, 0, options)], options=dict(FORMAL_OPTIONS), raw=raw,
                  path=path, ranker=formal_ranker() if ranker else {})


def default_encoder(workdir: Path, *, quiet: bool = False) -> Path:
    """The query encoder of the default bundle, installing nothing in the user's data directory:
    the installed default bundle's when there is one, else the shipped release's, unpacked once
    into ``<workdir>/default-bundle`` (a data directory of the build's own; building a formal
    bundle installed the informal one as a side effect)."""
    from mathlas.bundle import ENCODER_DIR

    from mathlas_build.pipeline import run_mathlas

    have = run_mathlas("index", "path", "--no-install", capture=True, check=False)
    if have.returncode == 0:
        return Path(have.stdout.strip()) / ENCODER_DIR
    scratch = Path(workdir) / "default-bundle"
    if not quiet:
        print(f"build-lean: the default bundle is not installed; its shipped release's encoder is unpacked "
              f"under {scratch} (nothing is installed)", file=sys.stderr)
    got = run_mathlas("index", "path", "-q", capture=True, env={"MATHLAS_DATA_DIR": str(scratch)})
    return Path(got.stdout.strip()) / ENCODER_DIR


def main_lean(args) -> int:
    from mathlas_build.pipeline import build, check_paths
    from mathlas_build.recipe_checks import check_name

    workdir = Path(args.workdir)
    dirs = [d.strip() for d in args.dirs.split(",") if d.strip()] if args.dirs else None
    cache = None if args.no_cache else (args.cache or workdir / "embed-cache")
    try:
        # everything a user may have mistyped is refused before any encoder is unpacked or file read
        check_project(Path(args.path), dirs)
        for value, what in ((args.name, "--name"), (args.version, "--version")):
            if value is not None:
                check_name(value, what)
        check_paths(Path(args.out) if args.out else None, force=args.force, cache_dir=cache)
        encoder = Path(args.encoder) if args.encoder else default_encoder(workdir, quiet=args.quiet)
        recipe = lean_recipe(Path(args.path), encoder, name=args.name, version=args.version,
                             dirs=dirs, license=args.license, ranker=not args.no_ranker)
    except ValueError as e:  # not a project, a wrong name or --dirs; a missing or changed formal model
        print(f"mathlas-build lean: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        from mathlas_build.cli import os_error_line

        message, code = os_error_line(e)
        print(f"mathlas-build lean: {message}", file=sys.stderr)
        return code
    scratch = None
    if args.out:
        out = Path(args.out)
    elif args.install:  # built only to be installed: a temporary folder, removed once installed
        workdir.mkdir(parents=True, exist_ok=True)
        from mathlas_build import scratch as scratch_dirs

        scratch_dirs.sweep(workdir, "build-lean-", quiet=args.quiet)   # what a killed build-lean left
        scratch = scratch_dirs.make(workdir, "build-lean-")
        out = scratch / f"{recipe.name}-{recipe.version}"
    else:
        out = workdir / "bundles" / f"{recipe.name}-{recipe.version}"
    try:
        path = build(recipe, out, threads=args.threads, cache_dir=cache, force=args.force,
                     quiet=args.quiet)
        if args.install:
            from mathlas_build.pipeline import install_bundle

            install_bundle(path, quiet=args.quiet)  # prints the installed directory on stdout
        else:
            print(path)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def add_lean_parser(sub) -> None:
    p = sub.add_parser("lean", help="build a formal bundle from a Lean project (its folders and .lake/packages)")
    p.add_argument("path", type=Path, help="the Lean project (a folder with lakefile / lean sources)")
    p.add_argument("--name", help="bundle name (default: the project's Lake package name, else its folder; "
                                  "mathlib for Mathlib itself). The formal tools search every installed formal bundle")
    p.add_argument("--version", help="bundle version (default 0.<date>.0, +<commit> when the project is at a "
                                     "commit of its own repository)")
    p.add_argument("--dirs", help="comma-separated top folders to read (default: every folder with .lean files)")
    p.add_argument("--encoder", type=Path, help="encoder directory (default: the default bundle's query encoder)")
    p.add_argument("--license", metavar="SPDX",
                   help="licence of the project's own declarations (default: guessed from its LICENSE/COPYING "
                        "file, else unknown); packages keep their own")
    p.add_argument("--workdir", type=Path, default=Path("work"),
                   help="where the bundle and the embedding cache go by default (default work/; `mathlas index "
                        "build-lean` passes <mathlas data dir>/build)")
    p.add_argument("--out", type=Path, help="bundle directory (default <workdir>/bundles/<name>-<version>; with "
                                            "--install a temporary folder under <workdir>, removed once installed)")
    from mathlas_build.cli import count

    p.add_argument("--threads", type=count(0))
    p.add_argument("--cache", type=Path,
                   help="embedding cache (a vector per distinct text under <cache>/texts/), makes rebuilds "
                        "resumable (default <workdir>/embed-cache)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--install", action="store_true", help="install the bundle into the mathlas data directory")
    p.add_argument("--force", action="store_true")
    p.add_argument("--no-ranker", action="store_true",
                   help="leave out the learned ranking stage (FORMAL_RANKER): the bundle ranks by RRF")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=main_lean)


if __name__ == "__main__":  # pragma: no cover
    print("use: mathlas-build lean PATH", file=sys.stderr)
    sys.exit(2)
