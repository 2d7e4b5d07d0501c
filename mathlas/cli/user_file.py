"""Reading a file a user names on the command line (``-``: stdin) as text, bounded.

A tool refuses input over its size limit, but a command that read the whole file first never got
to refuse ``/dev/zero`` or an endless pipe: it hung. :func:`read_text` reads at most ``SLACK`` + 1
characters past the limit and answers each failure (missing file, a directory, bytes that are not
UTF-8, too long) in one line that says what to do, as a :class:`UsageError` (exit 2).

The slack is for trailing whitespace: ``echo``, a heredoc or an editor ends the text with a newline
the limit does not count (the tools strip it, or read it as nothing), so a statement exactly at its
limit is taken from stdin as it is taken as an argument. A tool that strips its text at both ends (a
finding's statement) passes ``strips=True``: leading whitespace is slack too. The others keep it, since
a Lean file's or a program's first lines number its messages.
"""
from __future__ import annotations

import io
import sys

from mathlas.errors import UsageError

SLACK = 1_000  # trailing whitespace read past the limit before the text counts as too long


def read_text(name: str, limit: int, what: str, *, strips: bool = False) -> str:
    """The UTF-8 text of the file ``name`` (``-``: standard input), at most ``limit`` characters
    once trailing whitespace past the limit is dropped (the tool that gets it judges the rest);
    with ``strips`` (the tool strips its text at both ends), leading whitespace too.

    ``what`` names the input in the messages ("the program", "the Lean file"). Raises UsageError when
    the file cannot be opened or read, is not UTF-8, or holds more than ``limit`` characters before
    its trailing whitespace (after reading ``limit + SLACK + 1`` of them, never the rest)."""
    shown = f"{what} from stdin" if name == "-" else f"{what} {name}"
    try:
        if name == "-":
            text = _read_stdin(limit + SLACK + 1)
        else:
            with open(name, encoding="utf-8") as f:
                text = f.read(limit + SLACK + 1)
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {shown}: not UTF-8 text; save it as UTF-8 and try again") from None
    except OSError as e:
        raise UsageError(f"cannot read {shown}: {e.strerror or e}"
                         + ("" if name == "-" else "; give the path of a readable file, or - for stdin")) from None
    if len(text) > limit:
        kept = text.strip() if strips else text[:limit] + text[limit:].strip()
        if len(text) > limit + SLACK or len(kept) > limit:
            raise UsageError(f"{shown} is longer than the limit of {limit:,} characters; shorten it")
        text = kept if strips else text[:limit]  # only whitespace was cut
    return text


def _read_stdin(n: int) -> str:
    """At most ``n`` characters of standard input, decoded as UTF-8 whatever the locale says."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # stdin replaced by a text stream (a test, an embedding program)
        return sys.stdin.read(n)
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8")
    try:
        return wrapper.read(n)
    finally:
        wrapper.detach()  # leave sys.stdin's buffer open
