"""``mathlas index``: list, inspect, verify, install, choose and locate bundles.

stdout carries the data (tables, ``--json``, paths); progress and notes go to stderr. Failures are
raised as mathlas errors for the main CLI to report. Each subcommand is one ``add_parser`` block
that names its handler (``set_defaults(run=...)``): adding one touches nothing else.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mathlas.releases import catalog
from mathlas.releases import install as inst
from mathlas.bundle import (FORMAT_VERSION, MANIFEST, MIN_FORMAT_VERSION, Manifest, problems, read_manifest,
                            readable_format)
from mathlas.errors import MathlasError

_BUNDLE_HELP = ("bundle name, name@version or directory (default: $MATHLAS_BUNDLE or the default bundle; "
                "a bare name means the version chosen with `index use`, else the highest)")
_CATALOG_HELP = "a remote release catalog (URL or path of a catalog.json) besides the shipped one ($MATHLAS_CATALOG)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``index`` command and its subcommands to the main CLI's subparsers."""
    p = subparsers.add_parser("index", help="list, inspect, verify, install and choose bundles",
                              description="Manage mathlas bundles (the search indexes).")
    sub = p.add_subparsers(dest="index_command", metavar="SUBCOMMAND", required=True)

    s = sub.add_parser("list", help="installed bundles (* = in use), shipped and catalog releases")
    s.add_argument("--catalog", metavar="URL", help=_CATALOG_HELP + "; also list its releases")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(run=_cmd_list)

    s = sub.add_parser("info", help="what a bundle holds: sources, licenses, encoder, size")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)
    s.add_argument("--json", action="store_true", help="print the manifest as JSON")
    s.set_defaults(run=_cmd_info)

    s = sub.add_parser("verify", help="check that the bundle holds exactly its manifest's files, with their "
                                      "sha256, and its tables the manifest's document count")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)
    s.set_defaults(run=_cmd_verify)

    s = sub.add_parser("install", help="install a release: NAME[@VERSION] from a catalog, a URL or a path",
                       description="Install a release. NAME[@VERSION] is looked up in the shipped catalog and "
                                   "the remote one (--catalog, $MATHLAS_CATALOG); a URL or path names a "
                                   "<name>-<version>.tar.zst whose .sha256 sits beside it. Downloads resume "
                                   "after an interruption.")
    s.add_argument("source", metavar="NAME[@VERSION]|URL|PATH",
                   help="a catalog name, an http(s):// or file:// URL, or a local .tar.zst")
    s.add_argument("--catalog", metavar="URL", help=_CATALOG_HELP)
    s.add_argument("--sha256", metavar="HEX", help="expected sha256 of a URL or path (else its .sha256 file)")
    s.add_argument("--force", action="store_true", help="replace an installed bundle of the same name@version")
    s.set_defaults(run=_cmd_install)

    s = sub.add_parser("use", help="make NAME@VERSION what a bare NAME means (NAME alone: the highest again)")
    s.add_argument("spec", metavar="NAME[@VERSION]", help="an installed bundle version, e.g. informal@1.0.0")
    s.set_defaults(run=_cmd_use)

    s = sub.add_parser("path", help="print the bundle's directory")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)
    s.add_argument("--no-install", action="store_true",
                   help="only an installed bundle: exit 1 rather than install a shipped release")
    s.set_defaults(run=_cmd_path)

    s = sub.add_parser("remove", help="delete an installed bundle")
    s.add_argument("bundle", help="installed bundle: name@version (or a name installed in one version)")
    s.set_defaults(run=_cmd_remove)

    from mathlas.cli.lean import add_build_lean, run_build_lean

    add_build_lean(sub)  # `index build-lean PATH`: a formal bundle of exactly that Lean project
    sub.choices["build-lean"].set_defaults(run=run_build_lean)

    for name, s in sub.choices.items():
        if name not in ("list", "remove", "build-lean"):  # these talk (installs, progress): let -q silence them
            s.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                           help="no progress or notes on stderr")
    return p


def _quiet(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "quiet", False))


def _cmd_info(args: argparse.Namespace) -> int:
    return _info(inst.resolve_bundle(args.bundle, quiet=_quiet(args)), args.json)


def _cmd_verify(args: argparse.Namespace) -> int:
    root = inst.resolve_bundle(args.bundle, quiet=_quiet(args))
    m, found = problems(root, checksums=True)
    for line in found:  # one line per problem, each saying what to do
        print(f"mathlas: {line}", file=sys.stderr)
    if found:
        return 1
    print(f"OK {m.name}-{m.version}: exactly the {len(m.files)} files its manifest lists, "
          f"{_human(_total_size(root, m))}, match their checksums; {m.count:,} documents in every table ({root})")
    return 0


def _cmd_install(args: argparse.Namespace) -> int:
    print(inst.install_spec(args.source, catalog=args.catalog, expected_sha256=args.sha256, force=args.force,
                            quiet=_quiet(args)))
    return 0


def _cmd_use(args: argparse.Namespace) -> int:
    name, version = inst.split_spec(args.spec.strip())
    print(inst.use(name, version, quiet=_quiet(args)))
    return 0


def _cmd_path(args: argparse.Namespace) -> int:
    print(inst.resolve_bundle(args.bundle, quiet=_quiet(args), install=not args.no_install))
    return 0


def _cmd_remove(args: argparse.Namespace) -> int:
    path = inst.remove(args.bundle)
    print(f"removed {path}", file=sys.stderr)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = []
    have = set()
    for b in inst.installed():
        have.add((b.name, b.version))
        rows.append({"name": b.name, "version": b.version, "status": "installed",
                     "documents": b.manifest.count if b.manifest else None,
                     "size": _total_size(b.path, b.manifest) if b.manifest else None,
                     "path": str(b.path), "problem": b.problem})
    shipped = catalog.shipped()
    try:
        known = catalog.releases(args.catalog) if catalog.remote_catalog(args.catalog) else shipped
    except MathlasError as e:  # a catalog out of reach must not hide what is installed
        print(f"mathlas: {e}", file=sys.stderr)
        known = shipped
    for r in known:
        if (r.name, r.version) not in have:
            local = r in shipped
            problem = None if readable_format(r.format_version) else (
                f"format_version {r.format_version}; this mathlas reads {MIN_FORMAT_VERSION}-{FORMAT_VERSION}")
            rows.append({"name": r.name, "version": r.version, "status": "shipped" if local else "available",
                         "documents": r.counts.get("documents"), "size": r.size, "path": r.url,
                         "problem": problem})
    current = {name: inst.in_use_version(name) for name in {r["name"] for r in rows}}
    pinned = inst.in_use()
    for r in rows:
        r["in_use"] = current[r["name"]] == r["version"]
        r["chosen"] = pinned.get(r["name"]) == r["version"]
    rows.sort(key=lambda r: (r["name"], catalog.version_key(r["version"])))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no bundles installed in {inst.bundles_dir()}; install one with "
              "`mathlas index install NAME[@VERSION] | URL | PATH`", file=sys.stderr)
        return 0
    table = [("", "NAME", "VERSION", "DOCUMENTS", "SIZE", "PATH")]
    for r in rows:
        docs = f"{r['documents']:,}" if r["documents"] is not None else "-"
        where = r["path"]
        if r["status"] == "shipped":
            where += "  (shipped, not installed; installs on first use)"
        elif r["status"] == "available":
            where += "  (in the catalog; `mathlas index install " + f"{r['name']}@{r['version']}`)"
        if r["problem"]:
            where += f"  (unusable: {r['problem']})"
        if r["chosen"]:
            where += "  (chosen with `index use`)"
        table.append(("*" if r["in_use"] else "", r["name"], r["version"], docs,
                      _human(r["size"]) if r["size"] is not None else "-", where))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    for row in table:
        print("  ".join(c.ljust(w) if i != 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
              + "  " + row[5])
    print("* = what the bare name means (`mathlas index use NAME@VERSION` changes it)", file=sys.stderr)
    return 0


def _info(root: Path, as_json: bool) -> int:
    m = read_manifest(root)
    size = _total_size(root, m)
    if as_json:
        data = asdict(m)
        data = {"format_version": data.pop("format_version"), **data, "path": str(root), "total_size": size}
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    print(f"{m.name} {m.version}  (format {m.format_version}, created {m.created or '?'}, "
          f"builder {m.builder or '?'})")
    if m.description:
        print(m.description)
    print(f"path       {root}")
    print(f"documents  {m.count:,}")
    width = max((len(k) for k in m.sources), default=0)
    for key, src in sorted(m.sources.items()):
        count = src.get("count")
        line = f"  {key.ljust(width)}  {count:>10,}" if isinstance(count, int) else f"  {key.ljust(width)}  {'?':>10}"
        print(f"{line}  {src.get('license') or 'license unknown'}"
              + (f"  {src['attribution']}" if src.get("attribution") else ""))
    enc = m.encoder or {}
    name = enc.get("name") or enc.get("model") or enc.get("model_id") or "?"
    dims = enc.get("dims") or enc.get("output_dims") or (m.vectors or {}).get("dims") or "?"
    print(f"encoder    {name}, {dims} dims, {enc.get('pooling', '?')} pooling"
          + (f", vectors {m.vectors['float_dtype']}" if (m.vectors or {}).get("float_dtype") else ""))
    print(f"files      {len(m.files)} files, {_human(size)}")
    return 0


def _total_size(root: Path, m: Manifest | None) -> int:
    """Bytes of every file the manifest lists, plus the manifest itself."""
    listed = sum(e.size for e in m.files.values()) if m else 0
    try:
        return listed + (root / MANIFEST).stat().st_size
    except OSError:
        return listed


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # unreachable
