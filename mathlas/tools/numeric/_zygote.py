"""The numeric worker server: imports mpmath and sympy once, then forks one child per job.

Started by ``timebound.py`` as ``python -m mathlas.tools.numeric._zygote FD`` with a control socket on
file descriptor FD. Each request arrives on that socket as a pickled ``(function, args, kwargs)`` together with the
write end of a pipe (passed with SCM_RIGHTS). The server forks; the child runs the job and writes
length-prefixed pickled messages into the pipe; the server answers the parent with the child's pid so the
parent can kill it on timeout. The server is single-threaded, so forking it is safe, and it exits when the
parent closes the control socket.
"""
from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import sys

MEMORY_LIMIT_BYTES = 4 << 30


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


def _run_child(fd: int, fn, args, kwargs) -> None:
    from mathlas.errors import UsageError

    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    except (ImportError, ValueError, OSError):
        pass

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
        fn, args, kwargs = pickle.loads(body)
        out_fd = fds[0]
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                sock.close()
                _run_child(out_fd, fn, args, kwargs)
            finally:
                os._exit(0)
        os.close(out_fd)
        sock.sendall(struct.pack("!Q", pid))


if __name__ == "__main__":
    sys.stdout = sys.stderr
    main(int(sys.argv[1]))
