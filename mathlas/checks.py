"""Argument checks every tool shares: one place says what a finite number, a bounded integer or a
list of names is, and every message names the argument and what it got.

``UsageError`` (exit code 2 on the command line, a tool error over MCP) on bad input.
"""
from __future__ import annotations

import math
from typing import Any

from mathlas.errors import UsageError


def is_number(value: Any) -> bool:
    """True for a finite int or float (``bool`` is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def number(value: Any, what: str, *, minimum: float | None = None, maximum: float | None = None,
           hint: str = "") -> float:
    """``value`` as a float, or ``UsageError`` unless it is a finite number in [minimum, maximum]."""
    if not is_number(value) or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        bounds = (f" >= {minimum:g}" if minimum is not None and maximum is None else
                  f" <= {maximum:g}" if maximum is not None and minimum is None else
                  f" from {minimum:g} to {maximum:g}" if minimum is not None else "")
        raise UsageError(f"{what} must be a finite number{bounds}{hint}, got {value!r}")
    return float(value)


def integer(value: Any, what: str, minimum: int, maximum: int) -> int:
    """``value`` if it is an int (not a bool) in [minimum, maximum], else ``UsageError``."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise UsageError(f"{what} must be an integer from {minimum} to {maximum}, got {value!r}")
    return value


def text(value: str, what: str) -> str:
    """``value`` if it is text that can be written as UTF-8, else ``UsageError``: a lone surrogate
    (``"\\ud800"`` in JSON, ``%ED%A0%80`` in a URL) is no character, and the tokenizers refuse it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        bad = value[e.start]
        raise UsageError(f"{what} is not valid Unicode text (it holds a lone surrogate U+{ord(bad):04X} at "
                         f"character {e.start}); send UTF-8 text") from None
    return value


def strings(value: Any, what: str, example: str = "") -> tuple[str, ...]:
    """A name or a list of names as a tuple of stripped, non-empty, distinct strings (None: ())."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise UsageError(f"{what} must be a list of non-empty strings{example}, got {value!r}")
    return tuple(dict.fromkeys(text(v.strip(), what) for v in value))


def name_weights(items: list[str] | None, flag: str, example: str) -> dict[str, float] | None:
    """Repeated ``NAME=WEIGHT`` options (``--prior``, ``--kind-weight``, their HTTP parameters) as a
    dict, None for none; ``flag`` and ``example`` name them in the error. The values' own checks
    are the library's (``SearchRequest``)."""
    if not items:
        return None
    out = {}
    for item in items:
        name, sep, w = item.partition("=")
        try:
            out[name.strip()] = float(w)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise UsageError(f"{flag} takes NAME=WEIGHT, e.g. {example}, got {item!r}")
    return out
