"""The numeric worker server: imports mpmath and sympy once, then forks one child per job.

Started by ``timebound.py`` as ``python -m mathlas.tools.numeric._zygote FD`` with a control socket on
file descriptor FD. Each request arrives on that socket as a pickled ``(function, args, kwargs, seconds)``
together with the write end of a pipe (passed with SCM_RIGHTS). The server forks; the child runs the job and
writes length-prefixed pickled messages into the pipe; the server answers the parent with the child's pid so
the parent can kill it on timeout. The server is single-threaded, so forking it is safe, and it exits when the
parent closes the control socket.

Two backstops for a caller that dies without killing its child (``kill -9``, a crash): the child's CPU time
is limited to the job's seconds and a little more (RLIMIT_CPU), and on Linux a child is killed when the
server exits (PR_SET_PDEATHSIG), which it does as soon as the caller's end of the socket closes.
"""
from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import sys

MEMORY_LIMIT_BYTES = 4 << 30
CPU_GRACE_SECONDS = 5  # past the job's own time bound, before the kernel stops an orphaned child


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent exits (a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _recv_exact(sock: socket.socket, n: int, fds: list[int]) -> bytes | None:
    buf = b""
    while len(buf) < n:
        msg, got, _flags, _addr = socket.recv_fds(sock, n - len(buf), 4)
        fds.extend(got)
        if not msg:
            return None
        buf += msg
    return buf


def write_message(fd: int, kind: str, payload) -> None:
    """One length-prefixed pickled (kind, payload) message."""
    data = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
    data = struct.pack("!Q", len(data)) + data
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _limit(seconds: float) -> None:
    """Memory and CPU time for one job: the CPU limit only matters when the caller could not kill the
    child at its deadline (the kernel sends SIGXCPU, which ends it)."""
    try:
        import resource
    except ImportError:
        return
    cpu = int(seconds) + 1 + CPU_GRACE_SECONDS
    for what, value in ((resource.RLIMIT_AS, MEMORY_LIMIT_BYTES), (resource.RLIMIT_CPU, cpu)):
        try:
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):
            pass


def _run_child(fd: int, fn, args, kwargs, seconds: float) -> None:
    from mathlas.errors import UsageError

    _die_with_parent()
    _limit(seconds)

    def send(item) -> None:
        write_message(fd, "partial", item)

    try:
        result = fn(*args, send=send, **kwargs)
        write_message(fd, "done", result)
    except UsageError as exc:
        write_message(fd, "usage", str(exc))
    except MemoryError:
        write_message(fd, "crash", "ran out of memory")
    except RecursionError:
        write_message(fd, "crash", "the expression is too deeply nested to evaluate")
    except BaseException as exc:  # report every failure instead of leaving the parent waiting
        try:
            write_message(fd, "error", f"{type(exc).__name__}: {exc}")
        except BaseException:
            pass


def main(control_fd: int) -> None:
    import mpmath  # noqa: F401  (imported once here, inherited by every child)
    import sympy  # noqa: F401

    from . import conjecture, identify, verify  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    sock = socket.socket(fileno=control_fd)
    while True:
        fds: list[int] = []
        head = _recv_exact(sock, 8, fds)
        if head is None:
            return
        (n,) = struct.unpack("!Q", head)
        body = _recv_exact(sock, n, fds)
        if body is None or not fds:
            return
        fn, args, kwargs, seconds = pickle.loads(body)
        out_fd = fds[0]
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                sock.close()
                _run_child(out_fd, fn, args, kwargs, seconds)
            finally:
                os._exit(0)
        os.close(out_fd)
        sock.sendall(struct.pack("!Q", pid))


if __name__ == "__main__":
    sys.stdout = sys.stderr
    main(int(sys.argv[1]))
