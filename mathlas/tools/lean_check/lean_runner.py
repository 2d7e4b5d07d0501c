"""Finding a Lean toolchain and running it on one file, sandboxed.

Discovery, first match wins:

1. ``$MATHLAS_LEAN``: an executable (``lean``, or any wrapper taking the file as its last argument),
   a command line (``lake env lean``), or the directory of a Lake project (then ``lake env lean``
   runs inside it, so the project's Mathlib is importable);
2. a Lake project around the current directory (``lakefile.lean`` / ``lakefile.toml`` here or in a
   parent) with ``lake`` on PATH or in ``~/.elan/bin``: ``lake env lean`` there;
3. ``lean`` on PATH, else ``~/.elan/bin/lean``.

The sandbox, every layer reported in the result (``Run.isolation``): a throwaway directory made
with ``mkdtemp`` (the file lives there and Lean runs there unless a Lake project needs its own
directory), resource limits set in the child before it execs Lean (``RLIMIT_DATA`` for memory, so
the read-only memory-mapped ``.olean`` files of Mathlib do not count; ``RLIMIT_CPU`` as a backstop;
``RLIMIT_FSIZE``; no core dumps), a wall-clock limit after which (or when the caller cancels, see
``mathlas.progress``) the whole process group is killed, and a network namespace with no interface up (``unshare -n``) where the kernel allows it.
Where it does not, the result says "no network isolation" rather than pretending. Lean code run
while elaborating (tactics are programs) still has the user's file permissions: this is a sandbox
against accidents and runaway proofs, not a jail for hostile code; ``scan.py`` refuses the
commands and code-running terms that would make that matter.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mathlas.progress import TICK, tick

FILE_NAME = "MathlasCheck.lean"
DEFAULT_MEMORY_MB = 8192
MAX_OUTPUT_HEAD = 1 << 20
MAX_OUTPUT_TAIL = 256 << 10
FILE_SIZE_LIMIT = 64 << 20

INSTALL_HINT = (
    "No Lean toolchain found. Install one with elan: "
    "`curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh` "
    "(then `lean` is in ~/.elan/bin). For Mathlib imports, make a Mathlib project: "
    "`lake new myproj math && cd myproj && lake exe cache get`, and run mathlas inside it or set "
    "MATHLAS_LEAN to its directory (or to any `lean` executable or `lake env lean` command line).")

# Runs in the child before Lean: limits that cannot be raised again (soft = hard), then exec.
_DRIVER = r"""
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
def lim(which, value):
    soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))
lim(resource.RLIMIT_CORE, 0)
lim(resource.RLIMIT_DATA, cfg["data"])
lim(resource.RLIMIT_CPU, cfg["cpu"])
lim(resource.RLIMIT_FSIZE, cfg["fsize"])
argv = sys.argv[2:]
os.execv(argv[0], argv)
"""


@dataclass
class Toolchain:
    """How to run Lean: ``command`` + the file path; in ``cwd`` (a Lake project) or else in the
    throwaway directory. ``origin`` says how it was found."""

    command: list[str]
    cwd: str | None
    origin: str

    def describe(self) -> str:
        where = f" in {self.cwd}" if self.cwd else ""
        return f"{' '.join(self.command)}{where} ({self.origin})"


@dataclass
class Run:
    """One finished (or killed) Lean run: merged stdout+stderr, exit code, and the path of the
    file exactly as Lean saw it (the prefix of its messages)."""

    output: str
    returncode: int | None
    timed_out: bool
    wall_s: float
    file_name: str
    isolation: list[str] = field(default_factory=list)


def _elan_bin(name: str) -> str | None:
    home = os.environ.get("ELAN_HOME") or os.path.join(os.path.expanduser("~"), ".elan")
    path = os.path.join(home, "bin", name)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def _which(name: str) -> str | None:
    return shutil.which(name) or _elan_bin(name)


def _lake_project(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / "lakefile.lean").is_file() or (d / "lakefile.toml").is_file():
            return d
    return None


def find_toolchain() -> tuple[Toolchain | None, str]:
    """The toolchain to use and how it was found, or (None, why not) with the install hint."""
    env = os.environ.get("MATHLAS_LEAN", "").strip()
    if env:
        p = Path(env).expanduser()
        if p.is_dir():
            if _lake_project(p) != p:
                return None, f"MATHLAS_LEAN={env} is a directory without lakefile.lean or lakefile.toml. {INSTALL_HINT}"
            lake = _which("lake")
            if not lake:
                return None, f"MATHLAS_LEAN={env} is a Lake project but `lake` is not on PATH nor in ~/.elan/bin. {INSTALL_HINT}"
            return Toolchain([lake, "env", "lean"], str(p), "MATHLAS_LEAN (Lake project)"), ""
        if p.is_file():
            if not os.access(p, os.X_OK):
                return None, f"MATHLAS_LEAN={env} is not executable"
            return Toolchain([str(p.resolve())], None, "MATHLAS_LEAN"), ""
        argv = shlex.split(env)
        exe = _which(argv[0]) if argv else None
        if not exe:
            return None, f"MATHLAS_LEAN={env}: no such executable, Lake project or command. {INSTALL_HINT}"
        return Toolchain([exe, *argv[1:]], None, "MATHLAS_LEAN (command line)"), ""
    project = _lake_project(Path.cwd())
    lake = _which("lake")
    if project is not None and lake:
        return Toolchain([lake, "env", "lean"], str(project), "Lake project around the current directory"), ""
    lean = _which("lean")
    if lean:
        return Toolchain([lean], None, "lean on PATH" if shutil.which("lean") else "~/.elan/bin/lean"), ""
    return None, INSTALL_HINT


def memory_limit_mb() -> int:
    """``$MATHLAS_LEAN_MEMORY_MB`` or 8192: the data-segment limit of the Lean process."""
    raw = os.environ.get("MATHLAS_LEAN_MEMORY_MB", "")
    try:
        return max(256, int(raw)) if raw else DEFAULT_MEMORY_MB
    except ValueError:
        return DEFAULT_MEMORY_MB


def _read_capped(f) -> str:
    size = f.seek(0, os.SEEK_END)
    f.seek(0)
    if size <= MAX_OUTPUT_HEAD + MAX_OUTPUT_TAIL:
        return f.read().decode("utf-8", "replace")
    head = f.read(MAX_OUTPUT_HEAD).decode("utf-8", "replace")
    f.seek(size - MAX_OUTPUT_TAIL)
    tail = f.read().decode("utf-8", "replace")
    return f"{head}\n[mathlas: {size - MAX_OUTPUT_HEAD - MAX_OUTPUT_TAIL} bytes of output omitted]\n{tail}"


def _wait(proc: subprocess.Popen, started: float, timeout_s: float) -> int | None:
    """Lean's exit code, or None when ``timeout_s`` ran out; reports progress while it waits and
    raises ``Cancelled`` when the caller cancels (``mathlas.progress``)."""
    while True:
        waited = time.monotonic() - started
        if waited >= timeout_s:
            return None
        try:
            return proc.wait(timeout=min(TICK, timeout_s - waited))
        except subprocess.TimeoutExpired:
            tick(time.monotonic() - started, timeout_s, "Lean is checking")


def run_lean(tc: Toolchain, source: str, timeout_s: float, memory_mb: int | None = None) -> Run:
    """Write ``source`` to a fresh directory and check it with ``tc`` under the sandbox limits."""
    from mathlas.tools.funsearch.sandbox import _netns_prefix  # the same probe the FunSearch sandbox uses

    memory_mb = memory_mb or memory_limit_mb()
    cpu_s = int(timeout_s * max(os.cpu_count() or 1, 1)) + 10
    work = tempfile.mkdtemp(prefix="mathlas-lean-")
    try:
        path = os.path.join(work, FILE_NAME)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        cwd = tc.cwd or work
        file_arg = path if tc.cwd else FILE_NAME
        cfg = {"data": memory_mb << 20, "cpu": cpu_s, "fsize": FILE_SIZE_LIMIT}
        net = _netns_prefix()
        argv = [*net, sys.executable, "-I", "-S", "-c", _DRIVER, json.dumps(cfg), *tc.command, file_arg]
        isolation = ["throwaway directory", f"memory limit {memory_mb} MB (RLIMIT_DATA)", f"CPU limit {cpu_s} s",
                     f"wall-clock limit {timeout_s:g} s", "file size limit 64 MB", "no core dumps",
                     "network namespace (unshare -n)" if net else
                     "NO network isolation: `unshare -n` is not permitted on this machine"]
        started = time.monotonic()
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, close_fds=True)
            timed_out = False
            rc: int | None = None
            try:
                rc = _wait(proc, started, timeout_s)
            finally:
                if rc is None:  # timed out, or the caller cancelled (Cancelled propagates)
                    timed_out = True
                    try:
                        os.killpg(proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        proc.kill()
                    proc.wait()
                try:  # whatever Lean started and left behind goes too
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            wall = time.monotonic() - started
            output = _read_capped(out)
        return Run(output, rc, timed_out, wall, file_arg, isolation)
    finally:
        shutil.rmtree(work, ignore_errors=True)
