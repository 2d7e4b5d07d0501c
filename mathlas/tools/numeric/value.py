"""Numeric inputs: a decimal string of any length (or an int / float) and the digits it carries; how
many leading digits two numbers share, counted as a person reads them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from mathlas.errors import UsageError

MAX_VALUE_CHARS = 100_000
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,9}))?")


@dataclass(frozen=True)
class DecimalValue:
    """A parsed decimal: ``sign * 0.<mantissa> * 10**lead`` with ``len(mantissa)`` significant digits."""

    text: str  # the number as given, normalised (no spaces, no trailing "...")
    negative: bool
    mantissa: str  # significant digits, no leading zeros ("" for zero)
    lead: int  # the leading digit sits at 10**(lead-1)

    @property
    def digits(self) -> int:
        """Significant digits given (trailing zeros count: 0.5000 carries 4)."""
        return len(self.mantissa)

    @property
    def is_zero(self) -> bool:
        return not self.mantissa.strip("0")

    def fraction(self) -> Fraction:
        """The exact rational the string denotes."""
        if self.is_zero:
            return Fraction(0)
        f = Fraction(int(self.mantissa)) * Fraction(10) ** (self.lead - len(self.mantissa))
        return -f if self.negative else f

    def ulp(self) -> Fraction:
        """One unit in the last given digit."""
        return Fraction(10) ** (self.lead - len(self.mantissa))

    def mpf(self):
        """The value as an mpmath number at the current precision."""
        from mpmath import mp

        if self.is_zero:
            return mp.mpf(0)
        s = ("-" if self.negative else "") + "0." + self.mantissa + f"e{self.lead}"
        return mp.mpf(s)

    def truncated(self, digits: int) -> DecimalValue:
        """The same number cut to its first ``digits`` significant digits."""
        if digits >= self.digits:
            return self
        m = self.mantissa[:digits]
        return DecimalValue(text=("-" if self.negative else "") + "0." + m + f"e{self.lead}",
                            negative=self.negative, mantissa=m, lead=self.lead)


def parse_value(value, *, name: str = "value") -> DecimalValue:
    """Read a number given as a decimal string, int or float; ``UsageError`` for anything else."""
    if isinstance(value, bool) or value is None:
        raise UsageError(f"{name} must be a decimal number such as '3.14159265358979', got {value!r}")
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise UsageError(f"{name} must be a finite number, got {value!r}")
        # a double carries 15.9 decimal digits; the 16th and 17th of its repr describe the binary
        # rounding, not the number the caller meant, so only 15 count
        text = f"{value:.14e}"
    elif isinstance(value, str):
        text = value
    else:
        raise UsageError(f"{name} must be a decimal string or a number, got {type(value).__name__}")
    if len(text) > MAX_VALUE_CHARS:
        raise UsageError(f"{name} is {len(text):,} characters long; the limit is {MAX_VALUE_CHARS:,}")
    text = re.sub(r"[\s_]", "", text)
    text = re.sub(r"(\.\.\.|…)$", "", text)
    if not text:
        raise UsageError(f"{name} is empty: give a decimal number such as '1.6449340668482264'")
    if text.lower().lstrip("+-") in ("nan", "inf", "infinity", "oo"):
        raise UsageError(f"{name} must be a finite number, got {text!r}")
    m = _DECIMAL.fullmatch(text)
    if not m or not (m.group(2) or m.group(3)):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise UsageError(f"{name} must be a decimal number such as '3.14159265358979', got {shown!r}")
    sign, whole, frac, exp = m.group(1), m.group(2) or "", m.group(3) or "", int(m.group(4) or 0)
    digits = (whole + frac).lstrip("0")
    if not digits:  # zero: keep the digits after the point as its precision
        return DecimalValue(text=text, negative=False, mantissa="0" * max(len(frac), 1), lead=exp + 1 - len(frac))
    lead = len(whole.lstrip("0")) + exp if whole.lstrip("0") else exp - (len(frac) - len(frac.lstrip("0")))
    return DecimalValue(text=text, negative=sign == "-", mantissa=digits, lead=lead)


def number_text(x: float) -> str:
    """The decimal a float (a JSON number) was written as: its shortest digits, those of Python's repr
    (3.14 -> "3.14", 1.6449340668 -> "1.6449340668"), for up to 15 significant digits exactly the ones
    written. A JSON number keeps no trailing zeros (3.140 arrives as 3.14), so none counts, not even those
    repr adds to a whole number (3.0 -> "3", 1500.0 -> "1.5e+3")."""
    text = repr(x)
    if text.endswith(".0"):
        text = str(Decimal(text).normalize()).lower()
    return text


def digits_text(n: int, what: str = "digit") -> str:
    """``1 digit``, ``3 digits``: a count with its noun in the right number."""
    return f"{n:,} {what}" if n == 1 else f"{n:,} {what}s"


def lead_of(m: Fraction) -> int:
    """The ``lead`` of a positive number: ``10**(lead - 1) <= m < 10**lead``."""
    e = math.floor(math.log10(m.numerator) - math.log10(m.denominator))
    while Fraction(10) ** e > m:
        e -= 1
    while Fraction(10) ** (e + 1) <= m:
        e += 1
    return e + 1


def _reads_as(v: Fraction, y: Fraction, unit: Fraction) -> bool:
    """Whether ``v`` rounds (half a unit, either way at a tie) or truncates (toward zero) to ``y``."""
    if 2 * abs(v - y) <= unit:
        return True
    q = math.floor(abs(v) / unit) * unit
    return (q if v >= 0 else -q) == y


def common_digits(a: Fraction, b: Fraction, limit: int, top: int | None = None) -> int:
    """The leading digits in which ``a`` and ``b`` agree, at most ``limit``.

    That is the largest k for which both round or truncate to one decimal of k significant digits and
    differ by at most one unit of its last digit. It is what a person reads: pi and 3.15 agree to 2
    digits (3.1), 2 and 3 to none, 19.9991 and 20 to 4 (both read 20.00), 3.14159 and 3.1416 to 5.
    Digits count from the leading digit of the larger of the two, or from ``10**(top - 1)`` when
    ``top`` is given (``top=0`` counts digits after the decimal point).
    """
    if a == b:
        return limit
    if top is None:
        top = lead_of(max(abs(a), abs(b)))
    d = abs(a - b)
    # agreeing to k digits needs d <= one unit of the k-th, so k <= top - lead(d) + 1; both conditions
    # only get easier as k falls, so the first k that passes from there down is the largest
    for k in range(min(limit, top - lead_of(d) + 1), 0, -1):
        unit = Fraction(10) ** (top - k)
        if d > unit:
            continue
        lo = math.floor(a / unit) * unit
        if any(_reads_as(a, y, unit) and _reads_as(b, y, unit) for y in (lo, lo + unit)):
            return k
    return 0
