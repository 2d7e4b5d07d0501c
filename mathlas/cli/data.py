"""``mathlas data``: fetch the data sets some tools read (today: the OEIS bulk files).

``mathlas data pull oeis [--url BASE] [--dir DIR]`` downloads stripped.gz and names.gz, checks and
installs them atomically, then builds the lookup index. ``mathlas data path oeis`` prints where they
are read from. Progress goes to stderr; the installed directory is printed on stdout.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DATASETS = ("oeis",)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``data`` command and its subcommands to the main CLI's subparsers."""
    p = subparsers.add_parser("data", help="download the data sets tools read (OEIS)",
                              description="Fetch and locate the data sets some tools read.")
    sub = p.add_subparsers(dest="data_command", metavar="SUBCOMMAND", required=True)
    s = sub.add_parser("pull", help="download, verify and install a data set",
                       description="Download the OEIS bulk files stripped.gz and names.gz, verify them "
                                   "(gzip integrity, format, A-number order), install them atomically into "
                                   "$MATHLAS_OEIS_DIR or <data dir>/oeis, and build the lookup index.")
    s.add_argument("dataset", choices=DATASETS)
    s.add_argument("--url", default="https://oeis.org", metavar="BASE",
                   help="where BASE/stripped.gz and BASE/names.gz are (default https://oeis.org)")
    s.add_argument("--dir", type=Path, default=None,
                   help="install here (default: $MATHLAS_OEIS_DIR or <data dir>/oeis)")
    s.add_argument("--no-index", action="store_true", help="do not build the index now (the first lookup will)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress or notes on stderr")
    s = sub.add_parser("path", help="print where a data set is read from")
    s.add_argument("dataset", choices=DATASETS)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run a ``data`` subcommand; returns the exit code (errors are raised)."""
    from mathlas.tools.oeis import oeis_dir

    if args.data_command == "path":
        print(oeis_dir())
        return 0
    if args.data_command == "pull":
        from mathlas.tools.oeis.pull import pull

        print(pull(args.url, args.dir, quiet=args.quiet, build_index=not args.no_index))
        return 0
    raise AssertionError(f"unknown data subcommand {args.data_command!r}")  # argparse rejects it first
