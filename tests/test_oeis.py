"""identify_sequence and ``mathlas data pull oeis`` on small OEIS files written in the official formats.

The fixtures are real-format ``stripped.gz`` / ``names.gz`` (``#`` header lines, then ``A000045
,0,1,1,...,`` / ``A000045 Fibonacci numbers...``) with the rows that make lookups tricky: negative
terms, terms of hundreds of digits, one- and two-term sequences, a sequence without terms, and two
A-numbers with the same terms. The pull tests serve fixture files from an ``http.server`` on
loopback.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mathlas.errors import InstallError, UsageError
from mathlas.tools.oeis import identify_sequence, open_index, transformed_queries

HEADER = "# Greetings from The On-Line Encyclopedia of Integer Sequences! http://oeis.org/\n" \
         "# Last Modified: test fixture\n# Use of this content is governed by the\n"
BIG = [10**300 + 7, -(10**250) - 3, 3**600, 10**300 + 8]
FIB = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]
ROWS: dict[int, list[int]] = {
    4: [0] * 30,
    12: [1] * 30,
    27: list(range(1, 40)),
    45: FIB,
    79: [2**i for i in range(20)],
    217: [n * (n + 1) // 2 for n in range(25)],
    290: [n * n for n in range(25)],
    33999: [(-1) ** n for n in range(30)],
    50000: BIG,
    55000: [5],
    55001: [3, 9],
    55002: [],
    71000: [7, 11, 19, 42, -5, 0, 123456789012345678901234567890],
    71001: [7, 11, 19, 42, -5, 0, 123456789012345678901234567890],
    99999: [-4, -8, -15, -16, -23, -42],
}
NAMES = {4: "The zero sequence.", 12: "The simplest sequence of positive numbers: the all 1's sequence.",
         27: "The positive integers.", 45: "Fibonacci numbers: F(n) = F(n-1) + F(n-2) with F(0) = 0 and F(1) = 1.",
         79: "Powers of 2: a(n) = 2^n.", 217: "Triangular numbers: a(n) = binomial(n+1,2).",
         290: "The squares: a(n) = n^2.", 33999: "a(n) = (-1)^n.", 50000: "Huge terms (fixture).",
         55000: "One term (fixture).", 55001: "Two terms (fixture).", 71000: "Duplicate, first (fixture).",
         71001: "Duplicate, second (fixture).", 99999: "Negative terms (fixture).", 123456: "A name without terms."}


def write_oeis(d: Path, rows: dict[int, list[int]] = ROWS, names: dict[int, str] = NAMES) -> Path:
    """stripped.gz and names.gz in the official formats, each written whole then renamed."""
    d.mkdir(parents=True, exist_ok=True)
    stripped = HEADER + "".join(f"A{a:06d} ," + "".join(f"{t}," for t in terms) + "\n"
                                for a, terms in sorted(rows.items()))
    named = HEADER + "".join(f"A{a:06d} {n}\n" for a, n in sorted(names.items()))
    for name, text in (("stripped.gz", stripped), ("names.gz", named)):
        tmp = d / f"{name}.part"
        with gzip.open(tmp, "wt", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, d / name)
    return d


@pytest.fixture()
def oeis(tmp_path, monkeypatch) -> Path:
    d = write_oeis(tmp_path / "oeis")
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(d))
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    return d


def found(r) -> list[tuple[str, int]]:
    return [(m.a_number, m.offset) for m in r.matches]


# ------------------------------------------------------------------------------ no data, bad input

def test_no_data_says_so_and_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(tmp_path / "nothing"))
    r = identify_sequence([1, 1, 2, 3, 5, 8])
    assert r.data_available is False and r.matches == [] and r.transform is None
    assert "OEIS data not available" in r.message and "mathlas data pull oeis" in r.message
    assert "MATHLAS_OEIS_DIR" in r.message


def test_default_dir_is_under_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("MATHLAS_OEIS_DIR", raising=False)
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path))
    r = identify_sequence([1, 2, 3])
    assert not r.data_available and str(tmp_path / "oeis") in r.message


@pytest.mark.parametrize("terms", [[], [5], [1.5, 2], [1, 2.0], [True, 2, 3], [1, None], ["1", "x"], [[1], [2]],
                                   list(range(1001)), 12, ["1" * 1001, "2"], [10**1200, 1], "abc"])
def test_bad_terms_are_usage_errors(oeis, terms):
    with pytest.raises(UsageError) as e:
        identify_sequence(terms)
    assert "\n" not in str(e.value)


def test_a_bad_term_is_counted_from_one(oeis):
    """walk14: ``mathlas sequence a b`` said 'term 0 is 'a''; people count the first term as 1."""
    with pytest.raises(UsageError, match=r"^term 1 of 2 is 'a': terms must be integers"):
        identify_sequence(["a", "b"])
    with pytest.raises(UsageError, match=r"^term 3 of 3 has more than 1000 digits"):
        identify_sequence([1, 2, "9" * 1001])


@pytest.mark.slow
def test_cli_a_bad_term_is_counted_from_one(tmp_path):
    """The line a person reads: one line, exit 2, the term counted from 1."""
    env = {**os.environ, "MATHLAS_OEIS_DIR": str(tmp_path / "none"), "MATHLAS_DATA_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "mathlas", "sequence", "1", "2", "x", "4"], capture_output=True,
                       text=True, timeout=120, env=env)
    assert (p.returncode, p.stdout, p.stderr) == (
        2, "", "mathlas: term 3 of 4 is 'x': terms must be integers (or decimal integer strings)\n")


@pytest.mark.parametrize("kwargs", [{"max_results": 0}, {"max_results": 1001}, {"max_results": True},
                                    {"max_results": "3"}, {"transforms": "yes"}])
def test_bad_options_are_usage_errors(oeis, kwargs):
    with pytest.raises(UsageError):
        identify_sequence([1, 2, 3], **kwargs)


def test_terms_as_strings_or_one_string(oeis):
    assert found(identify_sequence(["3", "5", "+8", " 13 "])) == [("A000045", 4)]
    assert found(identify_sequence("3, 5, 8 13")) == [("A000045", 4)]


# ------------------------------------------------------------------------------ exact lookups

def test_exact_match_shape(oeis):
    r = identify_sequence([1, 1, 2, 3, 5, 8])
    assert r.data_available and r.transform is None and not r.more
    (m,) = r.matches
    assert (m.a_number, m.offset, m.transform) == ("A000045", 1, None)
    assert m.name.startswith("Fibonacci numbers") and m.terms == FIB and m.url == "https://oeis.org/A000045"


def test_offset_anywhere(oeis):
    assert found(identify_sequence([0, 1, 1, 2])) == [("A000045", 0)]
    assert found(identify_sequence([89, 144, 233, 377])) == [("A000045", 11)]
    assert found(identify_sequence([36, 49, 64])) == [("A000290", 6)]


def test_first_offset_of_a_repeating_sequence_and_ranking(oeis):
    r = identify_sequence([1, 1])
    assert found(r) == [("A000012", 0), ("A000045", 1)]


def test_negative_terms(oeis):
    assert found(identify_sequence([-8, -15, -16])) == [("A099999", 1)]
    assert found(identify_sequence([1, -1, 1, -1, 1], transforms=False)) == [("A033999", 0)]


def test_huge_terms_compared_exactly(oeis):
    assert found(identify_sequence(BIG[1:3])) == [("A050000", 1)]
    assert found(identify_sequence([str(t) for t in BIG])) == [("A050000", 0)]
    off_by_one = [BIG[0], BIG[1], BIG[2] + 1]
    assert identify_sequence(off_by_one, transforms=False).matches == []
    (m,) = identify_sequence(BIG[:2]).matches
    assert m.terms == BIG


def test_short_sequences(oeis):
    assert found(identify_sequence([3, 9])) == [("A055001", 0)]
    assert identify_sequence([3, 9, 27], transforms=False).matches == []  # longer than the sequence
    assert identify_sequence([5, 3], transforms=False).matches == []  # A055000's last term, A055001's first


def test_no_match_across_sequence_boundaries(oeis):
    # A000045 ends 233, 377 and A000079 starts 1, 2: no sequence holds 377, 1
    assert identify_sequence([233, 377, 1, 2], transforms=False).matches == []


def test_duplicates_both_returned_by_a_number(oeis):
    r = identify_sequence([19, 42, -5, 0])
    assert found(r) == [("A071000", 2), ("A071001", 2)]
    assert r.matches[0].name.startswith("Duplicate, first")


def test_max_results_and_more(oeis):
    r = identify_sequence([1, 2], max_results=2)
    assert found(r) == [("A000027", 0), ("A000045", 2)] and r.more
    r = identify_sequence([1, 2], max_results=10)
    assert [a for a, _ in found(r)] == ["A000027", "A000045", "A000079"] and not r.more


def test_many_candidates_are_intersected(oeis):
    # every pair of this query is frequent in A000004 / A000012, the whole query is nowhere
    assert identify_sequence([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1], transforms=False).matches == []
    assert found(identify_sequence([0] * 30)) == [("A000004", 0)]


# ------------------------------------------------------------------------------ transforms

@pytest.mark.parametrize("query, transform, expect", [
    ([-2, -3, -5, -8, -13], "negate", ("A000045", 3)),
    ([1, -2, 4, -8, 16, -32], "alternate signs", ("A000079", 0)),
    ([-1, 2, -4, 8, -16], "alternate signs from -", ("A000079", 0)),
    ([6, 9, 15, 24, 39], "divide by 3", ("A000045", 3)),
    ([-6, -9, -15, -24, -39], "divide by -3", ("A000045", 3)),
    ([7, 8, 11, 16, 23, 32], "subtract 7", ("A000290", 0)),   # least term to 0
    ([4, 6, 9, 13, 18], "subtract 3", ("A000217", 1)),          # least term to 1
    ([0, 3, 8, 15, 24], "add 1", ("A000290", 1)),
    ([1, 3, 5, 7, 9, 11], "partial sums", ("A000290", 1)),
    ([0, 1, 5, 14, 30, 55, 91], "first differences", ("A000290", 1)),
])
def test_each_transform(oeis, query, transform, expect):
    assert identify_sequence(query, transforms=False).matches == []
    r = identify_sequence(query)
    assert r.transform == transform, r
    assert (r.matches[0].a_number, r.matches[0].offset) == expect
    assert r.matches[0].transform == transform and transform in r.message


def test_transforms_skip_trivial_queries():
    names = [n for n, _ in transformed_queries([5, 5, 5])]
    assert "first differences" not in names  # all zeros would match the zero sequence trivially
    assert all(len(t) >= 2 and any(t) for _, t in transformed_queries([2, 4]))


def test_exact_match_tries_no_transform(oeis):
    r = identify_sequence([3, 6, 10, 15])
    assert r.transform is None and r.transforms_tried == [] and found(r) == [("A000217", 2)]


def test_nothing_found_lists_the_transforms_tried(oeis):
    r = identify_sequence([2, 7, 1, 8, 2, 8, 1, 8, 2, 8])
    assert r.data_available and r.matches == [] and "negate" in r.transforms_tried
    assert "no OEIS sequence" in r.message


# ------------------------------------------------------------------------------ the index

def test_index_is_memory_mapped_and_stamped(oeis):
    identify_sequence([1, 2, 3])
    idx = open_index(oeis)
    import numpy as np

    assert isinstance(idx.pair_hash, np.memmap) and isinstance(idx.pair_pos, np.memmap)
    stamp = json.loads((oeis / "index-v1" / "stamp.json").read_text())
    assert stamp["sequences"] == len(ROWS) and stamp["stripped.gz"]["sha256"]
    assert stamp["terms"] == sum(len(t) for t in ROWS.values())


def test_index_rebuilt_when_data_changes(oeis):
    assert identify_sequence([2, 3, 5, 7, 11, 13], transforms=False).matches == []
    write_oeis(oeis, {**ROWS, 40: [2, 3, 5, 7, 11, 13, 17, 19]}, {**NAMES, 40: "The prime numbers."})
    r = identify_sequence([2, 3, 5, 7, 11, 13])
    assert found(r) == [("A000040", 0)] and r.matches[0].name == "The prime numbers."
    assert not any(p.name.startswith((".tmp-", ".old-")) for p in oeis.iterdir())


def test_touched_but_unchanged_data_is_not_rebuilt(oeis):
    identify_sequence([1, 2, 3])
    stamp = oeis / "index-v1" / "stamp.json"
    before = stamp.stat().st_mtime_ns
    os.utime(oeis / "stripped.gz", ns=(1, 1))
    from mathlas.tools.oeis import index as ix

    assert ix.stamp_matches(oeis / "index-v1", oeis)  # same sha256
    open_index(oeis)
    assert stamp.stat().st_mtime_ns == before


def test_read_only_data_dir_puts_index_in_data_dir(oeis, tmp_path, monkeypatch):
    import mathlas.tools.oeis as tool

    monkeypatch.setattr(tool.os, "access", lambda p, mode: False)
    home = tool.index_home(oeis)
    assert home.parent == tmp_path / "data" / "oeis-index"
    assert found(identify_sequence([5, 8, 13])) == [("A000045", 5)]


def test_bad_data_is_a_clear_error(tmp_path, monkeypatch):
    from mathlas.errors import MathlasError

    d = tmp_path / "bad"
    d.mkdir()
    with gzip.open(d / "stripped.gz", "wt") as f:
        f.write(HEADER + "A000045 ,0,1,1,\nA000027 ,1,2,3,\n")
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(d))
    with pytest.raises(MathlasError, match="A-number order"):
        identify_sequence([1, 2, 3])


def test_no_names_file_still_works(tmp_path, monkeypatch):
    d = write_oeis(tmp_path / "o")
    (d / "names.gz").unlink()
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(d))
    (m,) = identify_sequence([5, 8, 13]).matches
    assert (m.a_number, m.name) == ("A000045", "")


_CHILD = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(message)s")  # the library logs its talk; show it
from mathlas.tools.oeis import identify_sequence
r = identify_sequence([19, 42, -5])
print(json.dumps([m.a_number for m in r.matches]))
"""


def test_concurrent_first_use_builds_once(oeis):
    env = {**os.environ}
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all(json.loads(o) == ["A071000", "A071001"] for o, _ in outs)
    assert sum(e.count("[oeis] indexing") for _, e in outs) == 1, outs  # the other waited and reused it
    assert sorted(p.name for p in oeis.iterdir()) == [".install.lock", "index-v1", "names.gz", "stripped.gz"]


def test_module_is_light_at_import():
    code = "import sys, mathlas.tools.oeis, mathlas.cli.data, mathlas.cli.sequence; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------------------ pull

def test_pull_installs_and_indexes(http_root, tmp_path, monkeypatch):
    from mathlas.tools.oeis.pull import pull

    www, base = http_root
    write_oeis(www)
    dest = tmp_path / "installed"
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(dest))
    assert pull(base, quiet=True) == dest
    assert (dest / "stripped.gz").read_bytes() == (www / "stripped.gz").read_bytes()
    assert (dest / "index-v1" / "stamp.json").is_file()
    assert found(identify_sequence([1, 1, 2, 3, 5, 8])) == [("A000045", 1)]


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released): a fetch from it fails at once, as offline."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_pull_that_cannot_fetch_says_how_to_install_by_hand_and_the_way_works(tmp_path, monkeypatch):
    """walk14: offline, 'could not fetch ... Name or service not known' and nothing to do next. The
    message says how to install the files fetched elsewhere; doing what it says installs them."""
    from mathlas.tools.oeis.pull import pull

    dest = tmp_path / "installed"
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(dest))
    base = f"http://127.0.0.1:{_closed_port()}"
    with pytest.raises(InstallError) as e:
        pull(base, quiet=True)
    line = str(e.value)
    assert line.startswith(f"could not fetch {base}/stripped.gz: ") and "\n" not in line
    assert (f"; without the network here, download stripped.gz and names.gz from {base} elsewhere, then run "
            f"`mathlas data pull oeis --url file:///FOLDER/WITH/THEM` to check and install them into {dest}, "
            "or copy them there yourself ($MATHLAS_OEIS_DIR sets the folder lookups read") in line
    fetched = write_oeis(tmp_path / "fetched elsewhere")
    assert pull(fetched.as_uri(), quiet=True) == dest
    assert found(identify_sequence([1, 1, 2, 3, 5, 8])) == [("A000045", 1)]
    with pytest.raises(InstallError, match=r"could not fetch file://.*; put stripped.gz and names.gz in that folder$"):
        pull((tmp_path / "empty").as_uri(), quiet=True)


def test_pull_that_fails_here_does_not_say_to_download_elsewhere(http_root, tmp_path, monkeypatch):
    """Every failed download ended with 'without the network here, download ... elsewhere', a full
    disk and a download cut short too: only a network failure says so now."""
    import errno
    import socket
    import threading

    from mathlas.releases import archive
    from mathlas.tools.oeis.pull import pull

    www, base = http_root
    write_oeis(www)
    dest = tmp_path / "installed"

    class FullDisk:  # the edge of the machine: the disk fills up as the download is written
        def __init__(self, path, mode="r", *args, **kwargs):
            self.inner = open(path, mode, *args, **kwargs)

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.inner.close()

    with monkeypatch.context() as m:
        m.setattr(archive, "open", FullDisk, raising=False)
        with pytest.raises(InstallError) as e:
            pull(base, dest, quiet=True)
    assert "No space left on device" in str(e.value) and "elsewhere" not in str(e.value), e.value

    # a server that announces more bytes than it sends, then closes
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        with server:
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n" + b"x" * 10)

    threading.Thread(target=serve, daemon=True).start()
    short = f"http://127.0.0.1:{server.getsockname()[1]}"
    with pytest.raises(InstallError) as e:
        pull(short, dest, quiet=True)
    assert str(e.value) == f"download of {short}/stripped.gz stopped after 10 of 100000 bytes; try again"
    assert sorted(p.name for p in dest.iterdir()) == [".install.lock"]


@pytest.mark.slow
def test_cli_pull_that_cannot_fetch_is_one_line_with_the_next_step(tmp_path):
    env = {**os.environ, "MATHLAS_OEIS_DIR": str(tmp_path / "oeis"), "MATHLAS_DATA_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "mathlas", "data", "pull", "oeis", "--url",
                        f"http://127.0.0.1:{_closed_port()}", "-q"], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 1 and p.stdout == "" and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.startswith("mathlas: could not fetch http://127.0.0.1:") and "--url file:///FOLDER/WITH/THEM" in p.stderr


def _truncated(www: Path) -> None:
    data = (www / "stripped.gz").read_bytes()
    (www / "stripped.gz").write_bytes(data[: len(data) // 2])


def _garbage(www: Path) -> None:
    (www / "names.gz").write_bytes(b"<html>Service unavailable</html>")


def _flipped_crc(www: Path) -> None:
    data = bytearray((www / "stripped.gz").read_bytes())
    data[-6] ^= 0xFF  # inside the CRC32 trailer
    (www / "stripped.gz").write_bytes(bytes(data))


def _unordered(www: Path) -> None:
    with gzip.open(www / "stripped.gz", "wt") as f:
        f.write(HEADER + "A000045 ,0,1,1,\nA000027 ,1,2,3,\n")


def _no_header(www: Path) -> None:
    with gzip.open(www / "stripped.gz", "wt") as f:
        f.write("A000027 ,1,2,3,\n")


def _not_integers(www: Path) -> None:
    with gzip.open(www / "stripped.gz", "wt") as f:
        f.write(HEADER + "A000027 ,1,2,x,\n")


def _missing(www: Path) -> None:
    (www / "names.gz").unlink()


@pytest.mark.parametrize("damage", [_truncated, _garbage, _flipped_crc, _unordered, _no_header, _not_integers,
                                    _missing])
def test_pull_of_a_bad_download_installs_nothing(http_root, tmp_path, damage):
    from mathlas.tools.oeis.pull import pull

    www, base = http_root
    write_oeis(www)
    damage(www)
    dest = tmp_path / "installed"
    with pytest.raises(InstallError) as e:
        pull(base, dest, quiet=True)
    assert "\n" not in str(e.value)
    assert sorted(p.name for p in dest.iterdir()) == [".install.lock"]


def test_failed_pull_keeps_the_installed_files(http_root, tmp_path, monkeypatch):
    from mathlas.tools.oeis.pull import pull

    www, base = http_root
    dest = write_oeis(tmp_path / "installed")
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(dest))
    before = (dest / "stripped.gz").read_bytes()
    write_oeis(www, {27: [1, 2, 3]}, {27: "x"})
    _truncated(www)
    with pytest.raises(InstallError, match="truncated or corrupt"):
        pull(base, quiet=True)
    assert (dest / "stripped.gz").read_bytes() == before
    assert found(identify_sequence([1, 1, 2, 3, 5, 8])) == [("A000045", 1)]


# ------------------------------------------------------------------------------ CLI

def _cli(argv: list[str]) -> int:
    from mathlas.cli import data as cli_data
    from mathlas.cli import sequence as cli_sequence

    p = argparse.ArgumentParser(prog="mathlas")
    sub = p.add_subparsers(dest="command", required=True)
    cli_data.add_parser(sub)
    cli_sequence.add_parser(sub)
    args = p.parse_args(argv)
    return args.run(args)


def test_cli_sequence_json(oeis, capsys):
    assert _cli(["sequence", "1", "1", "2", "3", "5", "8", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["data_available"] and out["matches"][0]["a_number"] == "A000045"


def test_cli_sequence_negative_and_comma_terms(oeis, capsys):
    assert _cli(["sequence", "-8", "-15", "-16"]) == 0
    assert "A099999" in capsys.readouterr().out
    assert _cli(["sequence", "--", "-8,-15,-16"]) == 0  # a comma list starting with '-' needs '--'
    assert "A099999" in capsys.readouterr().out
    assert _cli(["sequence", "5,8", "13"]) == 0
    assert "A000045" in capsys.readouterr().out


def test_cli_sequence_without_data(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(tmp_path / "none"))
    assert _cli(["sequence", "1", "2", "3"]) == 1
    assert "mathlas data pull oeis" in capsys.readouterr().err


def test_cli_data_pull(http_root, tmp_path, monkeypatch, capsys):
    www, base = http_root
    write_oeis(www)
    dest = tmp_path / "via-cli"
    monkeypatch.setenv("MATHLAS_OEIS_DIR", str(dest))
    assert _cli(["data", "pull", "oeis", "--url", base, "-q"]) == 0
    assert capsys.readouterr().out.strip() == str(dest)
    assert _cli(["data", "path", "oeis"]) == 0
    assert capsys.readouterr().out.strip() == str(dest)
