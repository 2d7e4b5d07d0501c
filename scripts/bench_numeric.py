"""Honesty benchmark for the numeric tools (figures go in docs/numeric.md).

identify_constant: 50 known constant expressions must be identified (and the answer must equal the
expression to far more digits than were given); random numbers with the same number of digits must
give zero identifications. Run at 15, 30 and 50 digits. conjecture_relation: random numbers must give
no relation; e, 4/pi, sqrt 2 and a few others must give theirs.

    python scripts/bench_numeric.py                    # the full run (about half an hour on 1 core)
    python scripts/bench_numeric.py --digits 30 --random 20 --conjecture-random 10   # a quick look

Progress goes to stderr, the markdown report to stdout.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from mpmath import mp

from mathlas.tools.numeric import conjecture_relation, identify_constant
from mathlas.tools.numeric.evaluate import evaluate
from mathlas.tools.numeric.parser import parse_expression

KNOWN = [
    "pi^2/6", "e + sqrt(2)", "log(2)/pi", "3*zeta(3)/4", "(1 + sqrt(5))/2",
    "pi", "e", "EulerGamma", "Catalan", "zeta(3)",
    "log(2)", "log(3)", "sqrt(2)", "sqrt(3)", "sqrt(5)",
    "pi^2/12", "pi^4/90", "pi/4", "2/pi", "pi*e",
    "pi/e", "e^pi", "sqrt(pi)", "pi*sqrt(2)", "pi/sqrt(3)",
    "sqrt(2) + sqrt(3)", "1/(pi + e)", "EulerGamma + log(2)", "Catalan/pi", "4*Catalan/pi",
    "pi*log(2)", "log(2)^2", "7*zeta(3)/8", "zeta(3)/pi^3", "e^2",
    "exp(1/3)", "2^(1/3)", "1 + sqrt(2)", "sqrt(3)/2", "3/7",
    "pi - 3", "pi + e", "1/e", "sqrt(2*pi)", "Catalan + pi/8",
    "2*log(2) - 1", "pi^2/6 - 1", "EulerGamma^2", "log(1 + sqrt(2))", "(3 + sqrt(13))/2",
]


def decimal(node, digits: int) -> str:
    """The value to ``digits`` significant digits, rounded, as a plain decimal string."""
    v = evaluate(node, digits + 30)
    with mp.workdps(digits + 30):
        return mp.nstr(v, digits, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)


def random_number(rng: random.Random, digits: int) -> str:
    """A random decimal with ``digits`` significant digits, magnitude between 0.01 and 1000."""
    mant = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(digits - 1))
    point = rng.randint(-1, 3)
    if point <= 0:
        return "0." + "0" * (-point) + mant
    return mant[:point] + "." + mant[point:]


def same_value(expression: str, node, digits: int) -> bool:
    """Whether a returned closed form equals the true expression to digits + 20 digits."""
    try:
        a = evaluate(parse_expression(expression), digits + 40)
    except Exception:  # a form our parser does not read (CRootOf): compare through sympy instead
        import sympy
        a = mp.mpf(str(sympy.N(sympy.sympify(expression), digits + 40)))  # trusted: our own output
    b = evaluate(node, digits + 40)
    with mp.workdps(digits + 40):
        return abs(a - b) <= abs(b) * mp.mpf(10) ** (-(digits + 20))


def bench_identify(digits: int, n_random: int, seed: int) -> dict:
    ok = wrong = refused = 0
    misses, times = [], []
    for i, text in enumerate(KNOWN):
        node = parse_expression(text)
        value = decimal(node, digits)
        t = time.monotonic()
        r = identify_constant(value)
        times.append(time.monotonic() - t)
        if r.identified and same_value(r.best.expression, node, digits):
            ok += 1
        elif r.identified:
            wrong += 1
            misses.append(f"{text} -> WRONG {r.best.expression}")
        else:
            refused += 1
            misses.append(f"{text} -> not identified ({(r.reason or '')[:60]})")
        print(f"[identify {digits}] known {i + 1}/{len(KNOWN)}", file=sys.stderr)
    rng = random.Random(seed + digits)
    false_pos, rtimes, fp_examples = 0, [], []
    for i in range(n_random):
        value = random_number(rng, digits)
        t = time.monotonic()
        r = identify_constant(value)
        rtimes.append(time.monotonic() - t)
        if r.identified:
            false_pos += 1
            fp_examples.append(f"{value} -> {r.best.expression}")
        if (i + 1) % 20 == 0:
            print(f"[identify {digits}] random {i + 1}/{n_random}", file=sys.stderr)
    return dict(digits=digits, ok=ok, wrong=wrong, refused=refused, misses=misses, known_times=times,
                false_pos=false_pos, n_random=n_random, random_times=rtimes, fp_examples=fp_examples)


CONJECTURE_KNOWN = {"e": "e", "4/pi": "4/pi", "sqrt(2)": "sqrt(2)", "golden ratio": "(1 + sqrt(5))/2",
                    "tanh(1)": "tanh(1)", "e^2": "e^2", "pi^2/6": "pi^2/6", "Catalan": "Catalan"}


def bench_conjecture(digits: int, n_random: int, seed: int) -> dict:
    known = []
    for name, text in CONJECTURE_KNOWN.items():
        value = decimal(parse_expression(text), digits)
        t = time.monotonic()
        r = conjecture_relation(value)
        known.append((name, r, time.monotonic() - t))
        print(f"[conjecture {digits}] known {name}", file=sys.stderr)
    rng = random.Random(seed * 7 + digits)
    found, times, examples = 0, [], []
    for i in range(n_random):
        value = random_number(rng, digits)
        t = time.monotonic()
        r = conjecture_relation(value)
        times.append(time.monotonic() - t)
        if r.found:
            found += 1
            examples.append(f"{value} -> {[x.expression for x in r.relations]}")
        if (i + 1) % 10 == 0:
            print(f"[conjecture {digits}] random {i + 1}/{n_random}", file=sys.stderr)
    return dict(digits=digits, known=known, found=found, n_random=n_random, times=times, examples=examples)


def fmt_times(ts: list[float]) -> str:
    if not ts:
        return "-"
    return f"median {statistics.median(ts):.2f} s, max {max(ts):.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--digits", default="15,30,50", help="comma-separated digit counts for identify_constant")
    ap.add_argument("--random", type=int, default=200, help="random numbers per digit count (identify)")
    ap.add_argument("--conjecture-digits", type=int, default=30)
    ap.add_argument("--conjecture-random", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()

    print("## identify_constant\n")
    print("| digits | known identified (of 50) | wrong answer | refused | random: identified | time, known | time, random |")
    print("|---|---|---|---|---|---|---|")
    details = []
    for d in [int(s) for s in args.digits.split(",") if s]:
        r = bench_identify(d, args.random, args.seed)
        print(f"| {d} | {r['ok']} | {r['wrong']} | {r['refused']} | {r['false_pos']} of {r['n_random']} | "
              f"{fmt_times(r['known_times'])} | {fmt_times(r['random_times'])} |", flush=True)
        details.append(r)
    for r in details:
        if r["misses"] or r["fp_examples"]:
            print(f"\n{r['digits']} digits, not identified or wrong:")
            for m in r["misses"] + r["fp_examples"]:
                print(f"- {m}")
    if args.conjecture_random or args.conjecture_digits:
        c = bench_conjecture(args.conjecture_digits, args.conjecture_random, args.seed)
        print(f"\n## conjecture_relation ({c['digits']} digits)\n")
        print("| input | found | kinds | simple CF pattern | time |")
        print("|---|---|---|---|---|")
        for name, r, t in c["known"]:
            kinds = ", ".join(sorted({x.kind for x in r.relations})) or "-"
            print(f"| {name} | {r.found} | {kinds} | {r.cf_pattern or '-'} | {t:.2f} s |")
        print(f"\nrandom numbers: {c['found']} of {c['n_random']} gave a relation; {fmt_times(c['times'])}")
        for e in c["examples"]:
            print(f"- {e}")


if __name__ == "__main__":
    main()
