"""``mathlas index``: list, inspect, verify, install and locate bundles.

stdout carries the data (tables, ``--json``, paths); progress and notes go to stderr. Failures are
raised as mathlas errors for the main CLI to report.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mathlas import install as inst
from mathlas.bundle import MANIFEST, Manifest, read_manifest, verify

_BUNDLE_HELP = "bundle name, name-version or directory (default: $MATHLAS_BUNDLE or the default bundle)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``index`` command and its subcommands to the main CLI's subparsers."""
    p = subparsers.add_parser("index", help="list, inspect, verify and install bundles",
                              description="Manage mathlas bundles (the search indexes).")
    sub = p.add_subparsers(dest="index_command", metavar="SUBCOMMAND", required=True)

    s = sub.add_parser("list", help="installed bundles, and shipped ones not yet installed")
    s.add_argument("--json", action="store_true", help="print JSON")

    s = sub.add_parser("info", help="what a bundle holds: sources, licenses, encoder, size")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)
    s.add_argument("--json", action="store_true", help="print the manifest as JSON")

    s = sub.add_parser("verify", help="recompute every file's sha256 against the manifest")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)

    s = sub.add_parser("install", help="install a release archive (<name>-<version>.tar.zst)")
    s.add_argument("source", metavar="PATH_OR_URL", help="local path, file://, http:// or https:// URL")
    s.add_argument("--sha256", metavar="HEX", help="expected sha256 of the archive (else its .sha256 file)")
    s.add_argument("--force", action="store_true", help="replace an installed bundle of the same name-version")

    s = sub.add_parser("path", help="print the bundle's directory")
    s.add_argument("bundle", nargs="?", help=_BUNDLE_HELP)

    s = sub.add_parser("remove", help="delete an installed bundle")
    s.add_argument("bundle", help="installed bundle name or name-version")

    for name, s in sub.choices.items():
        if name not in ("list", "remove"):  # these talk (installs, progress): let -q silence them
            s.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                           help="no progress or notes on stderr")
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run an ``index`` subcommand; returns the exit code (errors are raised)."""
    quiet = bool(getattr(args, "quiet", False))
    cmd = args.index_command
    if cmd == "list":
        return _list(args.json)
    if cmd == "info":
        return _info(inst.resolve_bundle(args.bundle, quiet=quiet), args.json)
    if cmd == "verify":
        root = inst.resolve_bundle(args.bundle, quiet=quiet)
        m = verify(root, checksums=True)
        print(f"OK {m.name}-{m.version}: {len(m.files)} files, {_human(_total_size(root, m))} match their "
              f"checksums ({root})")
        return 0
    if cmd == "install":
        print(inst.install(args.source, expected_sha256=args.sha256, force=args.force, quiet=quiet))
        return 0
    if cmd == "path":
        print(inst.resolve_bundle(args.bundle, quiet=quiet))
        return 0
    if cmd == "remove":
        path = inst.remove(args.bundle)
        print(f"removed {path}", file=sys.stderr)
        return 0
    raise AssertionError(f"unknown index subcommand {cmd!r}")  # argparse rejects it first


def _list(as_json: bool) -> int:
    rows: list[dict[str, Any]] = []
    have = set()
    for b in inst.installed():
        have.add((b.name, b.version))
        rows.append({"name": b.name, "version": b.version, "status": "installed",
                     "documents": b.manifest.count if b.manifest else None,
                     "size": _total_size(b.path, b.manifest) if b.manifest else None,
                     "path": str(b.path), "problem": b.problem})
    for r in inst.shipped():
        if (r.name, r.version) not in have:
            rows.append({"name": r.name, "version": r.version, "status": "shipped",
                         "documents": None, "size": r.size, "path": str(r.archive), "problem": None})
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no bundles installed in {inst.bundles_dir()}; install one with "
              "`mathlas index install PATH_OR_URL`", file=sys.stderr)
        return 0
    table = [("NAME", "VERSION", "DOCUMENTS", "SIZE", "PATH")]
    for r in rows:
        docs = f"{r['documents']:,}" if r["documents"] is not None else "-"
        where = r["path"]
        if r["status"] == "shipped":
            where += "  (shipped, not installed; installs on first use)"
        elif r["problem"]:
            where += f"  (unusable: {r['problem']})"
        table.append((r["name"], r["version"], docs, _human(r["size"]) if r["size"] is not None else "-", where))
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        print("  ".join(c.ljust(w) if i != 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
              + "  " + row[4])
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
