"""Run an untrusted candidate program in a child interpreter and call its functions over a pipe.

The program is Python source an agent wrote (``def priority(el, n): ...``). It runs in a separate
process, and nothing it says is believed: the child only ever answers *calls* (``priority(...)``
on inputs the parent chooses), the parent reads those answers from a dedicated pipe and does all
the scoring itself (``problems.py``). What the child prints goes to a capped diagnostics file that
is shown to the caller and never parsed.

Layers, each set up by the trusted driver below *before the program's source is even read*:

1. **Interpreter**: ``python -I -S -B`` (isolated: no ``PYTHON*`` variables, no user site, no
   ``site`` at all, so only the standard library and numpy are importable), empty environment
   (plus ``OPENBLAS_NUM_THREADS=1``), a fresh working directory made with ``mkdtemp`` and removed
   afterwards.
2. **Resource limits** (``resource.setrlimit``, soft = hard, so they cannot be raised again): CPU
   seconds, address space, open files, file size, core dumps, and ``RLIMIT_NPROC = 0`` (no fork,
   no threads). The driver sets them itself instead of a ``preexec_fn``: ``preexec_fn`` is unsafe
   when the parent has threads, and the MCP server runs tools on worker threads. Root ignores
   ``RLIMIT_NPROC``, so a root parent's child drops to ``nobody`` (65534) first; common standard
   modules and numpy are imported before that, because root's stdlib may sit under ``/root``.
3. **Landlock** (Linux >= 5.13, unprivileged): the child may read only the standard library,
   numpy and the system library directories, and write only in its working directory; from ABI 4
   TCP bind/connect are refused, from ABI 6 it cannot signal processes outside its domain or
   reach abstract unix sockets. This is a kernel boundary: it holds against ctypes or native code.
4. **Network namespace**: ``unshare -n`` (root) or ``unshare --map-current-user -n`` when the
   kernel allows it: the child sees only a loopback interface that is down.
5. **Audit hook** (``sys.addaudithook``, cannot be removed): refuses sockets, subprocesses,
   ``exec``/``fork``/``kill``, importing ``ctypes`` and ``_posixsubprocess``, and file access
   outside the allowed directories. Audit hooks are *not* a security boundary on their own (native
   code bypasses them); here they are the last layer and the only one on a system without
   Landlock or user namespaces.
6. **Wall clock**: the parent kills the child's whole process group on timeout, and when the
   caller cancels the call (``mathlas.progress``; the parent reports progress while it waits).

Every run reports which layers were active (``Sandbox.isolation``), so a weaker host is visible
in the results rather than hidden.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from mathlas.errors import Cancelled
from mathlas.progress import TICK, tick

NOBODY = 65534
MAX_LINE = 64 << 20          # the longest reply line the parent accepts
DIAG_TAIL = 4000             # characters of the child's output shown to the caller


@dataclass
class Limits:
    """What one evaluation may use."""

    cpu_s: int = 20
    wall_s: float = 60.0
    memory_mb: int = 1024
    open_files: int = 64
    file_size_mb: int = 16


class SandboxFailure(Exception):
    """The program failed to answer: it raised, hit a limit, timed out or broke the protocol."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status      # error | timeout | killed | protocol_error


# ------------------------------------------------------------------------------ the trusted driver

DRIVER = r'''
import sys, os, json, resource, io
cfg = json.loads(sys.argv[1])
proto_fd = cfg["proto_fd"]
layers = []

def _lim(which, value):
    resource.setrlimit(which, (value, value))

_lim(resource.RLIMIT_CORE, 0)
_lim(resource.RLIMIT_CPU, cfg["cpu_s"])
_lim(resource.RLIMIT_FSIZE, cfg["fsize"])
_lim(resource.RLIMIT_AS, cfg["memory"])
layers.append("rlimits")

# modules a program may use, loaded while root's stdlib is still readable
import math, itertools, functools, collections, heapq, random, statistics, fractions, bisect, operator, array, string, re
if cfg["numpy"]:
    if cfg["numpy_path"]:
        sys.path.append(cfg["numpy_path"])
    try:
        import numpy
    except Exception as e:
        print("sandbox: numpy unavailable:", e, file=sys.stderr)

import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS

if os.geteuid() == 0:
    try:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        layers.append("uid nobody")
    except OSError as e:
        print("sandbox: cannot drop root:", e, file=sys.stderr)
_lim(resource.RLIMIT_NPROC, 0)

def _landlock():
    abi = libc.syscall(444, None, 0, 1)
    if abi < 1:
        return None
    fs = (1 << 13) - 1
    if abi >= 2: fs |= 1 << 13
    if abi >= 3: fs |= 1 << 14
    if abi >= 5: fs |= 1 << 15
    net = 3 if abi >= 4 else 0
    scoped = 3 if abi >= 6 else 0
    class Ruleset(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]
    class Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]
    attr = Ruleset(fs, net, scoped)
    rs = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if rs < 0:
        return None
    file_rights = (1 | 2 | 4 | (1 << 14) | (1 << 15)) & fs
    rules = [(p, 1 | 4 | 8) for p in cfg["read_dirs"]] + [(cfg["workdir"], fs), ("/dev/null", 2 | 4)]
    for path, rights in rules:
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        if not os.path.isdir(path):
            rights &= file_rights
        libc.syscall(445, rs, 1, ctypes.byref(Beneath(rights & fs, pfd)), 0)
        os.close(pfd)
    ok = libc.syscall(446, rs, 0) == 0
    os.close(rs)
    return "landlock abi %d" % abi if ok else None

try:
    ll = _landlock()
    if ll:
        layers.append(ll)
except Exception as e:
    print("sandbox: landlock failed:", e, file=sys.stderr)
del libc, ctypes
for name in [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.") or m == "_ctypes"]:
    del sys.modules[name]
import gc
gc.collect()
_lim(resource.RLIMIT_NOFILE, cfg["nofile"])

WORK = os.path.realpath(cfg["workdir"])
READ = tuple(os.path.realpath(p) for p in cfg["read_dirs"])
# refused at import on every host (a root host's child cannot even read most of the standard library;
# elsewhere it could import socket and only its use was refused): native code, processes, the network
BLOCKED_IMPORTS = {"ctypes", "_ctypes", "_posixsubprocess", "multiprocessing", "_multiprocessing", "cffi",
                   "subprocess", "pty", "socket", "_socket", "ssl", "_ssl", "select", "selectors", "asyncio",
                   "socketserver", "urllib", "http", "ftplib", "smtplib", "poplib", "imaplib", "nntplib",
                   "telnetlib", "xmlrpc", "webbrowser"}
BLOCKED_EVENTS = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                  "os.fork", "os.forkpty", "os.kill", "os.killpg", "pty.", "ctypes.", "resource.",
                  "os.chdir", "os.symlink", "os.link", "winreg.", "webbrowser.", "urllib.", "http.",
                  "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.", "telnetlib.")
PATH_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
               "os.utime", "os.listdir", "os.scandir", "os.chflags", "os.removexattr", "os.setxattr",
               "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.rmtree",
               "shutil.move", "shutil.chown", "os.mkfifo", "os.mknod"}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

def _inside(path, roots):
    try:
        p = os.path.realpath(os.fsdecode(path))
    except Exception:
        return False
    return any(p == r or p.startswith(r + os.sep) for r in roots)

def _hook(event, args):
    if event == "import":
        if args[0].split(".")[0] in BLOCKED_IMPORTS:
            raise PermissionError("sandbox: import of %s is not allowed" % args[0])
        return
    if event.startswith(BLOCKED_EVENTS):
        raise PermissionError("sandbox: %s is not allowed" % event)
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int):
            return
        write = bool(isinstance(flags, int) and flags & WRITE_FLAGS) or (
            isinstance(mode, str) and any(c in mode for c in "wax+"))
        if isinstance(flags, int) and flags & (getattr(os, "O_PATH", 0) | getattr(os, "O_DIRECTORY", 0)):
            if not _inside(path, (WORK,)):
                raise PermissionError("sandbox: opening directories outside the working directory is not allowed")
        if not _inside(path, (WORK,) if write else (WORK,) + READ):
            raise PermissionError("sandbox: access to %r is not allowed" % (path,))
        return
    if event in PATH_EVENTS:
        paths = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
        roots = (WORK,) + READ if event in ("os.listdir", "os.scandir") else (WORK,)
        for p in paths:
            if not _inside(p, roots):
                raise PermissionError("sandbox: %s on %r is not allowed" % (event, p))

sys.addaudithook(_hook)
layers.append("audit hook")

def _send(obj):
    data = (json.dumps(obj, separators=(",", ":"), default=_plain) + "\n").encode()
    while data:
        data = data[os.write(proto_fd, data):]

def _plain(v):
    if hasattr(v, "tolist"):
        return v.tolist()
    if isinstance(v, (set, frozenset)):
        return list(v)
    raise TypeError("result of type %s is not a number or a list of numbers" % type(v).__name__)

def _err(e):
    return {"error": "%s: %s" % (type(e).__name__, str(e)[:500])}

_stdin = sys.stdin.buffer
sys.stdin = io.StringIO("")
sys.stdout = sys.stderr
request = json.loads(_stdin.readline())
ns = {"__name__": "candidate", "__builtins__": __builtins__}
try:
    exec(compile(request["source"], "<program>", "exec"), ns)
except BaseException as e:
    _send(_err(e))
    raise SystemExit(0)
_send({"ready": True, "layers": layers, "names": sorted(k for k, v in ns.items() if callable(v))})

def _arg(v, as_array):
    if as_array and "numpy" in sys.modules:
        return sys.modules["numpy"].asarray(v)
    return tuple(v) if isinstance(v, list) and not as_array else v

while True:
    line = _stdin.readline()
    if not line:
        break
    req = json.loads(line)
    if "exit" in req:
        break
    fn = ns.get(req["fn"])
    arrays = set(req.get("arrays", ()))
    try:
        if not callable(fn):
            raise NameError("the program defines no function %s" % req["fn"])
        if "args" in req:
            out = fn(*[_arg(a, i in arrays) for i, a in enumerate(req["args"])])
        else:
            out = [fn(*[_arg(a, i in arrays) for i, a in enumerate(args)]) for args in req["args_list"]]
        reply = {"ok": out}
        _send(reply)
    except BaseException as e:
        _send(_err(e))
'''


# ------------------------------------------------------------------------------ what a program may import

# The standard modules DRIVER imports for programs before it drops privileges: a root host's standard
# library may be unreadable to the child afterwards, so these (and numpy) are what a program can count on
PROGRAM_MODULES = ("math", "itertools", "functools", "collections", "heapq", "random", "statistics", "fractions",
                   "bisect", "operator", "array", "string", "re")
# standard modules for the network, other processes or the operating system: what the audit hook and
# Landlock refuse to do (said so when a program's import of one fails)
SYSTEM_MODULES = {"socket", "ssl", "select", "selectors", "asyncio", "socketserver", "subprocess", "multiprocessing",
                  "concurrent", "threading", "signal", "pty", "urllib", "http", "ftplib", "smtplib", "poplib",
                  "imaplib", "nntplib", "telnetlib", "xmlrpc", "webbrowser", "ctypes", "resource", "mmap", "fcntl",
                  "shutil", "tempfile", "pathlib", "glob"}
# the import failed (a module the child cannot read or that is not there), or the audit hook refused it
_NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'|PermissionError: sandbox: import of ([\w.]+) is not allowed")


def import_refused(error: str, numpy: bool) -> str:
    """``error`` (the child's ``Type: message``) with, for a module the program could not import, why
    and what it may import instead: the bare ``No module named 'socket'`` read as a broken host."""
    m = _NO_MODULE.match(error)
    if m is None:
        return error
    top = (m[1] or m[2]).split(".")[0]
    if top in SYSTEM_MODULES:
        why = f"the sandbox blocks network, process and OS modules such as {top}"
    elif top in sys.stdlib_module_names:
        why = f"{top} is not among the sandbox's modules"
    else:
        why = f"{top} is not installed in the sandbox"
    return f"{error}: {why}; a program may import {', '.join(PROGRAM_MODULES)}{' and numpy' if numpy else ''}"


# ------------------------------------------------------------------------------ host probing

_NETNS: list[str] | None = None


def _netns_prefix() -> list[str]:
    """The ``unshare`` command line that gives the child its own empty network namespace, or []."""
    global _NETNS
    if _NETNS is None:
        _NETNS = []
        exe = shutil.which("unshare")
        if exe:
            options = [["-n"]] if os.geteuid() == 0 else [["--map-current-user", "-n"], ["-r", "-n"]]
            for opt in options:
                try:
                    ok = subprocess.run([exe, *opt, "true"], capture_output=True, timeout=10).returncode == 0
                except (OSError, subprocess.SubprocessError):
                    ok = False
                if ok:
                    _NETNS = [exe, *opt]
                    break
    return _NETNS


def _numpy_path() -> tuple[str | None, list[str]]:
    """The directory to put on the child's ``sys.path`` for numpy, and the directories it reads."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        return None, []
    pkg = os.path.realpath(list(spec.submodule_search_locations)[0])
    site = os.path.dirname(pkg)
    dirs = [pkg] + [p for p in (pkg + ".libs", os.path.join(site, "numpy.libs")) if os.path.isdir(p)]
    return site, dirs


def _read_dirs(numpy_dirs: list[str]) -> list[str]:
    paths = sysconfig.get_paths()
    dirs = {paths["stdlib"], paths["platstdlib"], "/lib", "/lib64", "/usr/lib", "/usr/lib64",
            "/usr/local/lib", "/usr/share/zoneinfo", *numpy_dirs}
    return sorted(os.path.realpath(d) for d in dirs if os.path.isdir(d))


# ------------------------------------------------------------------------------ the parent side

class Sandbox:
    """A running candidate program: ``with Sandbox(source, limits) as box: box.call("priority", ...)``.

    Entering starts the child and loads the program (a syntax error or an exception at import
    raises ``SandboxFailure``); leaving kills whatever is left of it and removes its directory.
    """

    def __init__(self, source: str, limits: Limits | None = None, numpy: bool = True):
        self.source = source
        self.limits = limits or Limits()
        self.numpy = numpy
        self.isolation: list[str] = []
        self.names: list[str] = []
        self._numpy_offered = False
        self.started = 0.0
        self._proc: subprocess.Popen | None = None
        self._workdir: str | None = None
        self._buf = b""

    # -- lifecycle

    def __enter__(self) -> Sandbox:
        try:
            self._start()
            reply = self._recv()
            if "ready" not in reply:
                error = import_refused(str(reply.get("error", reply)), self._numpy_offered)
                raise SandboxFailure("error", f"the program failed to load: {error}")
        except BaseException:
            self.close()
            raise
        self.isolation = [str(x) for x in reply.get("layers", [])] + self._extra_layers
        self.names = [str(x) for x in reply.get("names", [])]
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _start(self) -> None:
        self._workdir = tempfile.mkdtemp(prefix="mathlas-funsearch-")
        if os.geteuid() == 0:
            os.chown(self._workdir, NOBODY, NOBODY)
        numpy_site, numpy_dirs = _numpy_path() if self.numpy else (None, [])
        self._numpy_offered = bool(numpy_site)
        use_numpy = bool(numpy_site) and ("numpy" in self.source or "np." in self.source)
        read_fd, self._proto_w = os.pipe()
        self._proto_r = read_fd
        cfg = {"proto_fd": self._proto_w, "cpu_s": int(self.limits.cpu_s),
               "memory": int(self.limits.memory_mb) << 20, "fsize": int(self.limits.file_size_mb) << 20,
               "nofile": int(self.limits.open_files), "workdir": self._workdir,
               "read_dirs": _read_dirs(numpy_dirs), "numpy": use_numpy, "numpy_path": numpy_site}
        prefix = _netns_prefix()
        self._extra_layers = ["network namespace"] if prefix else []
        self._diag = tempfile.TemporaryFile()
        env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
        self.started = time.monotonic()
        self._proc = subprocess.Popen(
            [*prefix, sys.executable, "-I", "-S", "-B", "-c", DRIVER, json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=self._diag, stderr=self._diag, cwd=self._workdir, env=env,
            pass_fds=(self._proto_w,), start_new_session=True, close_fds=True)
        os.close(self._proto_w)
        self._send({"source": self.source})

    def close(self) -> None:
        """Stop the child (politely, then by killing its process group) and remove its directory."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.write(b'{"exit":true}\n')
                proc.stdin.flush()
            except OSError:
                pass
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                self._kill()
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.wait()
        if getattr(self, "_proto_r", None) is not None:
            os.close(self._proto_r)
            self._proto_r = None
        if self._workdir:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        diag = getattr(self, "_diag", None)
        if diag is not None and not diag.closed:
            self._tail = self.diagnostics()
            diag.close()

    def _kill(self) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self._proc.kill()
        except OSError:
            pass

    def diagnostics(self) -> str:
        """The tail of what the program printed (never parsed)."""
        diag = getattr(self, "_diag", None)
        if diag is None or diag.closed:
            return getattr(self, "_tail", "")
        diag.flush()
        size = diag.seek(0, os.SEEK_END)
        diag.seek(max(0, size - DIAG_TAIL))
        return diag.read().decode("utf-8", "replace")

    @property
    def wall_s(self) -> float:
        return time.monotonic() - self.started if self.started else 0.0

    # -- protocol

    def call(self, fn: str, *args: Any, arrays: tuple[int, ...] = ()) -> Any:
        """``fn(*args)`` inside the sandbox; list arguments at positions ``arrays`` arrive as numpy arrays."""
        self._send({"fn": fn, "args": list(args), "arrays": list(arrays)})
        return self._answer()

    def map(self, fn: str, args_list: list[list[Any]]) -> list[Any]:
        """``[fn(*args) for args in args_list]`` inside the sandbox, in one round trip."""
        self._send({"fn": fn, "args_list": args_list})
        out = self._answer()
        if not isinstance(out, list) or len(out) != len(args_list):
            raise SandboxFailure("protocol_error", "the sandbox answered a batch with the wrong length")
        return out

    def _answer(self) -> Any:
        reply = self._recv()
        if "ok" in reply:
            return reply["ok"]
        raise SandboxFailure("error", import_refused(str(reply.get("error", "no answer")), self._numpy_offered))

    def _send(self, obj: dict) -> None:
        try:
            self._proc.stdin.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
            self._proc.stdin.flush()
        except OSError:
            raise self._death() from None

    def _recv(self) -> dict:
        deadline = self.started + self.limits.wall_s
        sel = selectors.DefaultSelector()
        sel.register(self._proto_r, selectors.EVENT_READ)
        try:
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._kill()
                    raise SandboxFailure("timeout", f"the program ran past the wall-clock limit of {self.limits.wall_s:g} s")
                if not sel.select(timeout=min(left, TICK)):
                    try:
                        tick(self.wall_s, self.limits.wall_s, "running the program")
                    except Cancelled:
                        self._kill()
                        raise
                    continue
                chunk = os.read(self._proto_r, 1 << 16)
                if not chunk:
                    raise self._death()
                self._buf += chunk
                if len(self._buf) > MAX_LINE:
                    self._kill()
                    raise SandboxFailure("protocol_error", "the program's answer is too long")
        finally:
            sel.close()
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            self._kill()
            raise SandboxFailure("protocol_error", "the sandbox's answer is not valid (did the program write to the result pipe?)")
        return reply

    def _death(self) -> SandboxFailure:
        """Why the child went away, as a failure to report."""
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
            code = self._proc.wait()
        if code < 0:
            sig = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            cpu = f"its CPU limit ({self.limits.cpu_s} s)"
            # RLIMIT_CPU's soft and hard limits are equal: the kernel sends SIGKILL, not SIGXCPU
            why = {"SIGXCPU": cpu, "SIGKILL": f"{cpu} or its memory limit ({self.limits.memory_mb} MB)",
                   "SIGXFSZ": f"its file size limit ({self.limits.file_size_mb} MB)"}.get(sig, sig)
            return SandboxFailure("killed", f"the program was stopped by {why}")
        return SandboxFailure("error", f"the program exited (code {code}) before answering")
