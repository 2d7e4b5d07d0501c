"""The whitelist parser: a user's expression string becomes a small tree, never code.

Nothing a user types is ever handed to ``eval``, ``exec``, ``sympify`` or ``parse_expr``. The
tokenizer knows numbers, a fixed table of names (constants and functions, see ``CONSTANTS`` and
``FUNCTIONS``), operators and brackets; anything else is a ``UsageError`` naming the position.
The parser is recursive descent with a hard nesting limit, so deep or long inputs fail fast with a
clear message instead of exhausting the stack.

Grammar (``docs/numeric.md`` has the user-facing version)::

    claim   := expr ("=" | "==") expr
    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/" | juxtaposition) unary)*        # 2pi, 3 zeta(3), \\frac{1}{2}\\pi
    unary   := ("-" | "+") unary | power
    power   := postfix (("^" | "**") unary)?                       # right associative
    postfix := primary "!"*
    primary := number | name | call | "(" expr ")" | "{" expr "}" | bigop | \\frac{a}{b} | \\sqrt{a}
    bigop   := (sum | prod) "_" "{" var ("=" lo | ">=" lo) "}" ["^" hi] term
             | int "_" lo "^" hi expr "d"var
             | sum(body, var, lo, hi) | prod(...) | integral(...)
             | Sum(body, (var, lo, hi)) | Product(...) | Integral(...)   # sympy's spelling

A sum's or product's body is one product term (``sum_{n>=1} 1/n^2 + 1`` adds 1 after the sum);
put several terms in parentheses. An integral's body runs to its ``dx``.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mathlas.errors import UsageError

MAX_EXPRESSION_CHARS = 10_000
MAX_BRACKETS = 50  # bracket nesting; each level costs several parser frames
MAX_NESTING = 250  # parser recursion: brackets, unary signs and exponents together

# name -> canonical constant name. Canonical names are what the evaluators understand.
CONSTANTS: dict[str, str] = {
    "pi": "pi", "Pi": "pi", "PI": "pi", "π": "pi",
    "e": "e", "E": "e",
    "gamma": "euler_gamma", "EulerGamma": "euler_gamma", "eulergamma": "euler_gamma", "euler": "euler_gamma",
    "γ": "euler_gamma",
    "Catalan": "catalan", "catalan": "catalan",
    "phi": "golden_ratio", "varphi": "golden_ratio", "GoldenRatio": "golden_ratio", "golden": "golden_ratio",
    "φ": "golden_ratio",
    "inf": "inf", "infty": "inf", "infinity": "inf", "oo": "inf", "∞": "inf",
}

# name -> (canonical function name, allowed argument counts)
FUNCTIONS: dict[str, tuple[str, tuple[int, ...]]] = {}
for _canon, _arity, _aliases in [
    ("sin", (1,), ["sin"]), ("cos", (1,), ["cos"]), ("tan", (1,), ["tan"]), ("cot", (1,), ["cot"]),
    ("sec", (1,), ["sec"]), ("csc", (1,), ["csc"]),
    ("asin", (1,), ["asin", "arcsin"]), ("acos", (1,), ["acos", "arccos"]),
    ("atan", (1, 2), ["atan", "arctan"]),
    ("sinh", (1,), ["sinh"]), ("cosh", (1,), ["cosh"]), ("tanh", (1,), ["tanh"]), ("coth", (1,), ["coth"]),
    ("asinh", (1,), ["asinh", "arcsinh", "arsinh"]), ("acosh", (1,), ["acosh", "arccosh", "arcosh"]),
    ("atanh", (1,), ["atanh", "arctanh", "artanh"]),
    ("exp", (1,), ["exp"]), ("log", (1, 2), ["log", "ln"]), ("log10", (1,), ["log10", "lg"]),
    ("log2", (1,), ["log2"]),
    ("sqrt", (1,), ["sqrt", "√"]), ("cbrt", (1,), ["cbrt"]), ("root", (2,), ["root"]),
    ("abs", (1,), ["abs", "Abs"]), ("floor", (1,), ["floor"]), ("ceil", (1,), ["ceil", "ceiling"]),
    ("gamma", (1,), ["gamma", "Gamma", "Γ"]), ("loggamma", (1,), ["loggamma", "lgamma", "lngamma"]),
    ("digamma", (1,), ["digamma", "psi"]), ("polygamma", (2,), ["polygamma"]),
    ("zeta", (1, 2), ["zeta", "ζ"]), ("beta", (2,), ["beta", "Beta"]),
    ("erf", (1,), ["erf"]), ("erfc", (1,), ["erfc"]),
    ("binomial", (2,), ["binomial", "binom", "choose"]), ("factorial", (1,), ["factorial", "fact"]),
    ("polylog", (2,), ["polylog", "Li"]), ("li", (1,), ["li"]), ("Ei", (1,), ["Ei", "ei"]),
    ("besselj", (2,), ["besselj", "BesselJ"]), ("bessely", (2,), ["bessely", "BesselY"]),
    ("agm", (2,), ["agm"]), ("lambertw", (1,), ["lambertw", "LambertW"]),
    ("harmonic", (1,), ["harmonic"]), ("fibonacci", (1,), ["fibonacci", "fib"]),
    ("catalan_number", (1,), ["catalan_number"]),
]:
    for _a in _aliases:
        FUNCTIONS[_a] = (_canon, _arity)

BIG_OPERATORS = {"sum": "sum", "Sum": "sum", "nsum": "sum", "summation": "sum", "Σ": "sum",
                 "prod": "prod", "product": "prod", "Product": "prod", "nprod": "prod", "∏": "prod",
                 "int": "integral", "integral": "integral", "Integral": "integral", "integrate": "integral",
                 "quad": "integral", "∫": "integral"}

# \command -> replacement token text; spacing commands vanish.
_LATEX_WORDS = {"cdot": "*", "times": "*", "div": "/", "ge": ">=", "geq": ">=", "geqslant": ">=",
                "le": "<=", "leq": "<=", "to": "->", "infty": "inf", "left": "", "right": "", "big": "",
                "Big": "", "bigl": "", "bigr": "", "Bigl": "", "Bigr": "", "mathrm": "", "operatorname": "",
                "displaystyle": "", "limits": "", "quad": "", "qquad": "", "cdots": "", "dfrac": "frac",
                "tfrac": "frac", "iint": "int"}
_UNICODE = {"−": "-", "·": "*", "×": "*", "÷": "/", "≥": ">=", "≤": "<=", "⩾": ">=", "⩽": "<="}

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\\[,;:!\ ]) |
    (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?) |
    (?P<latex>\\[A-Za-z]+) |
    (?P<name>[A-Za-zπγφΓζ√∞Σ∏∫]) (?P<name_rest>(?<=[A-Za-z])[A-Za-z0-9]*)? |
    (?P<op>\*\*|==|>=|<=|->|[-+*/^()\[\]{},=!_<>|]) |
    (?P<uni>[−·×÷≥≤⩾⩽])
""", re.VERBOSE)


@dataclass(frozen=True)
class Node:
    """One node of a parsed expression. ``kind`` says which; the other fields depend on it.

    kinds: num (text), const (name), var (name), add (items: (sign, node)), mul (items: (is_division,
    node)), neg (args), pow (args), call (name, args), fact (args), sum / prod / integral (name = bound
    variable, args = (low, high, body)).
    """

    kind: str
    name: str = ""
    text: str = ""
    args: tuple = ()
    items: tuple = ()


@dataclass
class _Tok:
    kind: str  # num, name, op, end
    text: str
    pos: int
    latex: bool = False


def tokenize(source: str) -> list[_Tok]:
    """Split a string into whitelisted tokens or raise ``UsageError`` at the first stranger."""
    if not isinstance(source, str):
        raise UsageError(f"expected an expression string, got {type(source).__name__}")
    if len(source) > MAX_EXPRESSION_CHARS:
        raise UsageError(f"expression is {len(source):,} characters long; the limit is {MAX_EXPRESSION_CHARS:,}")
    toks: list[_Tok] = []
    pos, depth = 0, 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if not m or m.end() == pos:
            raise UsageError(f"unexpected character {source[pos]!r} at position {pos} in {_clip(source)!r}")
        pos = m.end()
        if m.group("ws"):
            continue
        if m.group("num"):
            toks.append(_Tok("num", m.group("num"), m.start()))
        elif m.group("latex"):
            word = m.group("latex")[1:]
            word = _LATEX_WORDS.get(word, word)
            if word == "":
                continue
            if word in ("*", "/", ">=", "<=", "->"):
                toks.append(_Tok("op", word, m.start()))
            else:
                toks.append(_Tok("name", word, m.start(), latex=True))
        elif m.group("name"):
            toks.append(_Tok("name", m.group("name") + (m.group("name_rest") or ""), m.start()))
        else:
            text = m.group("op") or _UNICODE[m.group("uni")]
            if text in "([{":
                depth += 1
                if depth > MAX_BRACKETS:
                    raise UsageError(f"expression nests brackets more than {MAX_BRACKETS} deep")
            elif text in ")]}":
                depth -= 1
            toks.append(_Tok("op", text, m.start()))
    toks.append(_Tok("end", "", len(source)))
    return toks


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[:n] + "..."


_CLOSE = {"(": ")", "[": "]", "{": "}"}


class _Parser:
    def __init__(self, source: str):
        self.source = source
        self.toks = tokenize(source)
        self.i = 0
        self.depth = 0
        self.stop: int | None = None  # token index that acts as the end (an integral's "dx")

    # -- token helpers -------------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok:
        j = self.i + k
        if self.stop is not None and j >= self.stop:
            return _Tok("end", "", self.toks[self.stop].pos)
        return self.toks[min(j, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.peek()
        if t.kind != "end":
            self.i += 1
        return t

    def at(self, text: str) -> bool:
        t = self.peek()
        return t.kind == "op" and t.text == text

    def expect(self, text: str) -> None:
        t = self.next()
        if t.kind != "op" or t.text != text:
            found = repr(t.text) if t.kind != "end" else "the end"
            raise UsageError(f"expected {text!r} at position {t.pos}, found {found} in {_clip(self.source)!r}")

    def error(self, what: str, t: _Tok | None = None) -> UsageError:
        t = t or self.peek()
        return UsageError(f"{what} at position {t.pos} in {_clip(self.source)!r}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise UsageError(f"expression nests more than {MAX_NESTING} levels deep")

    # -- grammar -------------------------------------------------------------------------------
    def expr(self) -> Node:
        self.enter()
        items = [(1, self.term())]
        while self.at("+") or self.at("-"):
            sign = 1 if self.next().text == "+" else -1
            items.append((sign, self.term()))
        self.depth -= 1
        return items[0][1] if len(items) == 1 else Node("add", items=tuple(items))

    def _starts_primary(self) -> bool:
        t = self.peek()
        if t.kind in ("num", "name"):
            return True
        return t.kind == "op" and t.text in ("(", "[", "{")

    def term(self) -> Node:
        items = [(False, self.unary())]
        while True:
            if self.at("*") or self.at("/"):
                div = self.next().text == "/"
                items.append((div, self.unary()))
            elif self._starts_primary():
                items.append((False, self.power()))
            else:
                break
        return items[0][1] if len(items) == 1 else Node("mul", items=tuple(items))

    def unary(self) -> Node:
        self.enter()
        if self.at("-"):
            self.next()
            node = Node("neg", args=(self.unary(),))
        elif self.at("+"):
            self.next()
            node = self.unary()
        else:
            node = self.power()
        self.depth -= 1
        return node

    def power(self) -> Node:
        base = self.postfix()
        if self.at("^") or self.at("**"):
            self.next()
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            return Node("pow", args=(base, exponent))
        return base

    def postfix(self) -> Node:
        node = self.primary()
        while self.at("!"):
            self.next()
            node = Node("fact", args=(node,))
        return node

    def group(self) -> Node:
        """A bracketed expression: (..), [..] or {..}."""
        t = self.next()
        if t.kind != "op" or t.text not in _CLOSE:
            raise self.error("expected a bracketed expression", t)
        self.enter()
        inner = self.expr()
        self.expect(_CLOSE[t.text])
        self.depth -= 1
        return inner

    def primary(self) -> Node:
        self.enter()
        try:
            return self._primary()
        finally:
            self.depth -= 1

    def _primary(self) -> Node:
        t = self.peek()
        if t.kind == "num":
            self.next()
            return Node("num", text=t.text)
        if t.kind == "op" and t.text in _CLOSE:
            return self.group()
        if t.kind == "op" and t.text == "|":
            self.next()
            inner = self.expr()
            self.expect("|")
            return Node("call", name="abs", args=(inner,))
        if t.kind != "name":
            found = repr(t.text) if t.kind != "end" else "the end of the expression"
            raise self.error(f"expected a number, name or '(' but found {found}", t)
        self.next()
        word = t.text
        if t.latex and word == "frac":
            return Node("mul", items=((False, self._latex_arg()), (True, self._latex_arg())))
        if t.latex and word == "binom":
            return Node("call", name="binomial", args=(self._latex_arg(), self._latex_arg()))
        if t.latex and word == "sqrt":
            if self.at("["):
                self.next()
                n = self.expr()
                self.expect("]")
                return Node("call", name="root", args=(self._latex_arg(), n))
            return Node("call", name="sqrt", args=(self._latex_arg(),))
        if word in BIG_OPERATORS:
            return self.bigop(BIG_OPERATORS[word], t)
        if word == "gamma" and t.latex:  # \gamma is Euler's constant; \Gamma(x) the function
            return Node("const", name="euler_gamma")
        if word in FUNCTIONS and (self.at("(") or self.at("^") or t.latex or word == "√"
                                  or (FUNCTIONS[word][0] == "log" and self.at("_"))
                                  or self._bare_function_arg(word)):
            return self.call(word, t)
        return Node("var", name=word, text=str(t.pos))  # resolved to a constant or bound variable later

    def _bare_function_arg(self, word: str) -> bool:
        # "sin x", "log 2": a function name followed by something that starts an argument.
        return word not in CONSTANTS and self._starts_primary()

    def _latex_arg(self) -> Node:
        return self.group() if self.at("{") else self.primary()

    def call(self, word: str, t: _Tok) -> Node:
        canon, arity = FUNCTIONS[word]
        base = None
        if canon == "log" and self.at("_"):  # log_2(x), \log_{10} x
            self.next()
            base = self._latex_arg()
        if self.at("("):
            self.next()
            args = [self.expr()]
            while self.at(","):
                self.next()
                args.append(self.expr())
            self.expect(")")
        else:
            if self.at("^"):  # \sin^2 x means (sin x)^2
                self.next()
                exponent = self.postfix()
                arg = self.power()
                return Node("pow", args=(Node("call", name=canon, args=(arg,)), exponent))
            args = [self.power()]
        if base is not None:
            args.append(base)
        if len(args) not in arity:
            raise self.error(f"{word} takes {' or '.join(map(str, arity))} argument(s), got {len(args)}", t)
        return Node("call", name=canon, args=tuple(args))

    def _bound_spec(self) -> tuple[str | None, Node | None, Node | None]:
        """``_{n=1}^{N}``, ``_{n>=1}``, ``_0^1``: (variable or None, low, high)."""
        var = low = high = None
        if self.at("_"):
            self.next()
            if self.at("{"):
                self.next()
                if self.peek().kind == "name" and self.peek(1).kind == "op" and self.peek(1).text in ("=", ">=", ">"):
                    var = self.next().text
                    rel = self.next().text
                    low = self.expr()
                    if rel == ">":
                        low = Node("add", items=((1, low), (1, Node("num", text="1"))))
                else:
                    low = self.expr()
                self.expect("}")
            else:
                low = self.postfix()
        if self.at("^"):
            self.next()
            high = self.group() if self.at("{") else self.postfix()
        return var, low, high

    def bigop(self, kind: str, t: _Tok) -> Node:
        if self.at("("):  # functional form: sum(body, n, low, high), or sympy's Sum(body, (n, low, high))
            self.next()
            body = self.expr()
            self.expect(",")
            tupled = self.at("(")
            if tupled:
                self.next()
            vt = self.next()
            if vt.kind != "name":
                raise self.error(f"{t.text}(body, variable, low, high) or {t.text}(body, (variable, low, high)): "
                                 "expected a variable name", vt)
            self.expect(",")
            low = self.expr()
            self.expect(",")
            high = self.expr()
            if tupled:
                self.expect(")")
            self.expect(")")
            return Node(kind, name=vt.text, args=(low, high, body))
        var, low, high = self._bound_spec()
        if low is None:
            raise self.error(f"{t.text} needs bounds, e.g. sum_{{n=1}}^{{inf}} or int_0^1")
        if kind == "integral":
            # the body runs to the first d<var> at this bracket level
            depth, j = 0, self.i
            while j < len(self.toks) and (self.stop is None or j < self.stop):
                tk = self.toks[j]
                if tk.kind == "op" and tk.text in _CLOSE:
                    depth += 1
                elif tk.kind == "op" and tk.text in ")]}":
                    depth -= 1
                    if depth < 0:
                        break
                elif depth == 0 and tk.kind == "name" and re.fullmatch(r"d[A-Za-z]\w*", tk.text) \
                        and tk.text not in FUNCTIONS and tk.text not in CONSTANTS:
                    break
                j += 1
            else:
                j = len(self.toks)
            if j >= len(self.toks) or self.toks[j].kind != "name":
                raise self.error("an integral needs its differential, e.g. int_0^1 x^2 dx")
            var = self.toks[j].text[1:]
            saved = self.stop
            self.stop = j
            body = self.expr()
            if self.i != j:
                raise self.error("unexpected text inside the integral")
            self.stop = saved
            self.i = j + 1
            if high is None:
                raise self.error("an integral needs both bounds, e.g. int_0^1 x^2 dx")
            return Node(kind, name=var, args=(low, high, body))
        if var is None:
            raise self.error(f"{t.text} needs its index, e.g. sum_{{n=1}}^{{inf}} or sum_{{n>=1}}")
        if high is None:
            high = Node("const", name="inf")
        body = self.term()
        return Node(kind, name=var, args=(low, high, body))


# What an unknown name's message lists: the constants by their usual names, and functions as they are called
KNOWN_NAMES = ("the constants are pi, e, gamma (Euler's), Catalan and phi, and a function takes its argument in "
               "parentheses, as in zeta(3), log(2), sqrt(2) (docs/numeric.md lists them)")


def _meant(name: str) -> str | None:
    """What an unknown ``name`` likely means: a function with its argument run on (``zeta3``: zeta(3),
    ``sqrt2``: sqrt(2)), or a constant spelt a little differently (``Pii``: pi)."""
    if (m := re.fullmatch(r"(.*?\D)_?(\d+)", name)) and 1 in FUNCTIONS.get(m[1], ((), ()))[1]:
        return f"{m[1]}({m[2]})"
    constants = [c for c, canon in CONSTANTS.items() if canon != "inf"]
    by_case = {c.lower(): c for c in reversed(constants)}
    close = difflib.get_close_matches(name.lower(), list(by_case), n=1, cutoff=0.75)
    return by_case[close[0]] if close else None


def _unknown_name(name: str, source: str, hint: str) -> str:
    """One line for a name that is neither a constant, a function nor a bound variable: the name (and
    the expression, when it is more than the name), what it likely means, and the names that work."""
    where = "" if source.strip() == name else f" in {_clip(source)!r}"
    meant = _meant(name)
    if meant:
        return f"unknown name {name!r}{where}{hint}; did you mean {meant}? {KNOWN_NAMES[0].upper()}{KNOWN_NAMES[1:]}"
    return f"unknown name {name!r}{where}{hint}; {KNOWN_NAMES}"


def _resolve(node: Node, bound: frozenset[str], source: str) -> Node:
    """Turn every ``var`` node into a bound variable or a named constant, or fail clearly."""
    k = node.kind
    if k == "var":
        if node.name in bound:
            return node
        if node.name in CONSTANTS:
            return Node("const", name=CONSTANTS[node.name])
        if node.name in FUNCTIONS:
            meant = _meant(node.name)  # log2 is log to base 2; log(2) is a constant
            raise UsageError(f"{node.name} is a function: call it with an argument, e.g. {node.name}(2)"
                             + (f"; or did you mean {meant}?" if meant else ""))
        hint = ""
        if len(node.name) <= 2 and any(w in source for w in ("sum", "prod", "Σ", "∏")):
            hint = (" (a sum's body is one product term; write sum_{n>=1} (a + b) to sum several terms)")
        raise UsageError(_unknown_name(node.name, source, hint))
    if k in ("sum", "prod", "integral"):
        low, high, body = node.args
        return Node(k, name=node.name, args=(_resolve(low, bound, source), _resolve(high, bound, source),
                                              _resolve(body, bound | {node.name}, source)))
    if k in ("add", "mul"):
        return Node(k, items=tuple((s, _resolve(n, bound, source)) for s, n in node.items))
    if node.args:
        return Node(k, name=node.name, text=node.text, args=tuple(_resolve(a, bound, source) for a in node.args))
    return node


def _check_infinity(node: Node, source: str, allowed: bool = False) -> None:
    if node.kind == "const" and node.name == "inf" and not allowed:
        raise UsageError(f"infinity may only be a bound of a sum, product or integral in {_clip(source)!r}")
    if node.kind in ("sum", "prod", "integral"):
        low, high, body = node.args
        for b in (low, high):
            if b.kind == "neg" and b.args[0].kind == "const" and b.args[0].name == "inf":
                continue
            _check_infinity(b, source, allowed=True)
        _check_infinity(body, source)
        return
    for _, n in node.items:
        _check_infinity(n, source)
    for a in node.args:
        _check_infinity(a, source)


def parse_expression(source: str) -> Node:
    """Parse one expression (no ``=``) into a resolved tree, or raise ``UsageError``."""
    p = _Parser(source.strip() if isinstance(source, str) else source)
    if p.peek().kind == "end":
        raise UsageError("the expression is empty; write a number or closed form, e.g. pi, zeta(3) or sqrt(2)/2")
    node = p.expr()
    if p.peek().kind != "end":
        t = p.peek()
        raise p.error(f"unexpected {t.text!r}")
    node = _resolve(node, frozenset(), source)
    _check_infinity(node, source)
    return node


def parse_claim(source: str) -> tuple[Node, Node]:
    """Parse ``left = right`` into two resolved trees, or raise ``UsageError``."""
    if not isinstance(source, str) or not source.strip():
        raise UsageError("empty claim: write it as 'left = right', e.g. 'sum_{n>=1} 1/n^2 = pi^2/6'")
    p = _Parser(source.strip())
    left = p.expr()
    if not (p.at("=") or p.at("==")):
        t = p.peek()
        raise UsageError(f"a claim needs one '=' between two expressions (at position {t.pos} in "
                         f"{_clip(source)!r}); to check one expression against a value give expression and value "
                         "(--expression and --value on the command line)")
    p.next()
    right = p.expr()
    if p.peek().kind != "end":
        raise p.error(f"unexpected {p.peek().text!r}")
    out = []
    for side in (left, right):
        side = _resolve(side, frozenset(), source)
        _check_infinity(side, source)
        out.append(side)
    return out[0], out[1]


def has_binders(node: Node) -> bool:
    """Whether the tree holds a sum, product or integral (evaluations that can be slow or fail)."""
    if node.kind in ("sum", "prod", "integral"):
        return True
    return any(has_binders(n) for _, n in node.items) or any(has_binders(a) for a in node.args)


def to_text(node: Node) -> str:
    """A plain, parseable rendering of a tree (used in messages and results)."""
    k = node.kind
    if k == "num":
        return node.text
    if k in ("const", "var"):
        return {"euler_gamma": "EulerGamma", "golden_ratio": "GoldenRatio", "catalan": "Catalan"}.get(node.name, node.name)
    if k == "add":
        out = ""
        for i, (s, n) in enumerate(node.items):
            txt = to_text(n)
            out += (("-" if s < 0 else "") if i == 0 else (" - " if s < 0 else " + ")) + txt
        return f"({out})"
    if k == "mul":
        out = ""
        for i, (div, n) in enumerate(node.items):
            out += ("" if i == 0 else ("/" if div else "*")) + to_text(n)
        return f"({out})"
    if k == "neg":
        return f"(-{to_text(node.args[0])})"
    if k == "pow":
        return f"{to_text(node.args[0])}^{to_text(node.args[1])}"
    if k == "fact":
        return f"{to_text(node.args[0])}!"
    if k == "call":
        return f"{node.name}({', '.join(to_text(a) for a in node.args)})"
    low, high, body = node.args
    return f"{k}({to_text(body)}, {node.name}, {to_text(low)}, {to_text(high)})"
