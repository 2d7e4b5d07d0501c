"""LaTeX -> readable words for retrieval text.

API (stable, used by every source reader):
    Macros = dict[str, tuple[int, str]]      # macro name without backslash -> (number of args, replacement)
    parse_macros(tex) -> Macros              # \\newcommand, \\renewcommand, \\providecommand, \\def, \\let,
                                             # \\DeclareMathOperator (definitions TeX can't be told apart from
                                             # programming, e.g. bodies using \\@ifnextchar, are left out so the
                                             # macro name survives as a word)
    latex_to_text(tex, macros=None) -> str   # expand macros, drop markup, keep words and symbol names
    expand_macros(tex, macros) -> str        # expand macros only, the rest as written (display text)
    split_environments(tex, names) -> list[Environment(name, optional_arg, content, start_line)]
    strip_comments(tex) -> str               # drop % comments (not \\%), keeping line numbers

Design: one regex tokenizer, then (1) inline definitions are collected and removed, (2) macros are expanded
with a bounded number of expansions, (3) a single pass turns commands into words ("\\otimes" -> "tensor",
"\\varphi" -> "phi", unknown "\\Spec" -> "Spec"), keeps the text of font/formatting commands
("\\mathcal{O}" -> "O") and drops references, labels, citations and layout.  Never raises on malformed input.
"""
from __future__ import annotations

import bisect
import re
import unicodedata
from typing import NamedTuple
from collections.abc import Iterable

Macros = dict[str, tuple[int, str]]

__all__ = [
    "Macros",
    "MacroDef",
    "Environment",
    "parse_macros",
    "latex_to_text",
    "split_environments",
    "strip_comments",
    "label_words",
    "expand_macros",
]


class MacroDef(tuple):
    """``(nargs, body)`` like any Macros value, plus ``optional_default`` (str or None) when the first
    argument is optional (``\\newcommand{\\x}[2][default]{...}``).  Plain tuples work everywhere too."""

    optional_default: str | None

    def __new__(cls, nargs: int, body: str, optional_default: str | None = None):
        self = super().__new__(cls, (nargs, body))
        self.optional_default = optional_default
        return self

    def __getnewargs__(self):
        return (self[0], self[1], self.optional_default)


# --------------------------------------------------------------------------------------------------------
# Tokenizer

# control word | control symbol | lone backslash | parameter | whitespace | word | any other char
_TOKEN_RE = re.compile(r"\\[A-Za-z]+|\\.|\\$|#[1-9]|\s+|[^\W_]+|.", re.S)
_TOKEN_AT_RE = re.compile(r"\\[A-Za-z@]+|\\.|\\$|#[1-9]|\s+|[^\W_]+|.", re.S)
_WS_ANY_RE = re.compile(r"\s+")


def strip_comments(tex: str) -> str:
    """Remove ``%`` comments (an escaped ``\\%`` stays); newlines are kept so line numbers still hold."""
    pos = tex.find("%")
    if pos < 0:
        return tex
    out = []
    start = 0
    n = len(tex)
    while pos >= 0:
        k = pos - 1
        while k >= 0 and tex[k] == "\\":
            k -= 1
        if (pos - 1 - k) % 2 == 0:  # an even number of backslashes before it: a real comment
            out.append(tex[start:pos])
            eol = tex.find("\n", pos)
            if eol < 0:
                start = n
                break
            start = eol
            pos = tex.find("%", eol)
        else:
            pos = tex.find("%", pos + 1)
    out.append(tex[start:])
    return "".join(out)


def _tokenize(tex: str, at_letter: bool = False) -> list[str]:
    return (_TOKEN_AT_RE if at_letter else _TOKEN_RE).findall(_WS_ANY_RE.sub(" ", tex))


def _skip_ws(toks: list[str], i: int) -> int:
    n = len(toks)
    while i < n and toks[i] == " ":
        i += 1
    return i


def _close_index(toks: list[str], k: int, close: str) -> int:
    """Index of the ``close`` (``}`` or ``]``) ending a group whose content starts at toks[k]; brace groups
    inside are balanced.  len(toks) when it is never closed."""
    depth = 0
    n = len(toks)
    while k < n:
        t = toks[k]
        if t == "{":
            depth += 1
        elif t == "}":
            if depth == 0 and close == "}":
                return k
            depth -= 1
        elif t == close and depth <= 0:
            return k
        k += 1
    return n


def _group_end(toks: list[str], i: int) -> int:
    """toks[i] == '{': index of the matching '}' (len(toks) when unbalanced)."""
    return _close_index(toks, i + 1, "}")


def _read_arg(toks: list[str], i: int) -> tuple[list[str], int]:
    """A mandatory argument at i (after spaces): a braced group's content or one token."""
    i = _skip_ws(toks, i)
    if i >= len(toks):
        return [], i
    t = toks[i]
    if t == "{":
        j = _group_end(toks, i)
        return toks[i + 1:j], j + 1
    if t == "}":
        return [], i
    if len(t) > 1 and t[0] != "\\" and t[0] != "#":
        toks[i] = t[1:]  # TeX takes one character of a word as an undelimited argument
        return [t[0]], i
    return [t], i + 1


def _read_opt(toks: list[str], i: int) -> tuple[list[str] | None, int]:
    """An optional ``[...]`` argument at i (after spaces), or (None, i)."""
    j = _skip_ws(toks, i)
    if j >= len(toks) or toks[j] != "[":
        return None, i
    k = _close_index(toks, j + 1, "]")
    return toks[j + 1:k], min(k + 1, len(toks))


# --------------------------------------------------------------------------------------------------------
# Macro definitions

_DEF_CMDS = {"\\newcommand", "\\renewcommand", "\\providecommand", "\\DeclareRobustCommand",
             "\\def", "\\gdef", "\\edef", "\\xdef", "\\let", "\\DeclareMathOperator",
             "\\newcommand*", "\\renewcommand*", "\\providecommand*"}
# Definitions whose bodies contain these are TeX programming; such macros are not expanded.
_COMPLEX = {"\\futurelet", "\\expandafter", "\\ifx", "\\if", "\\ifnum", "\\ifdim", "\\ifcase", "\\else",
            "\\fi", "\\csname", "\\endcsname", "\\def", "\\edef", "\\gdef", "\\let", "\\newcommand",
            "\\renewcommand", "\\afterassignment", "\\aftergroup", "\\noexpand", "\\string", "\\detokenize",
            "\\ifthenelse", "\\IfFileExists", "\\ifdef", "\\ifdefined", "\\ifcsname", "\\ifmmode",
            "\\setbox", "\\newbox", "\\futurenonspacelet", "\\makeatletter", "\\makeatother"}
# other declarations to skip (name: (optional args, mandatory args)) in running text
_SKIP_DECL = {
    "\\newtheorem": None,  # special: {name}[counter]{Title}[within]
    "\\newenvironment": None, "\\renewenvironment": None,
    "\\theoremstyle": (0, 1), "\\usepackage": (1, 1), "\\RequirePackage": (1, 1),
    "\\documentclass": (1, 1), "\\setlength": (0, 2), "\\addtolength": (0, 2), "\\setcounter": (0, 2),
    "\\addtocounter": (0, 2), "\\newcounter": (1, 1), "\\numberwithin": (1, 2), "\\crefname": (0, 3),
    "\\Crefname": (0, 3), "\\newlength": (0, 1), "\\DeclareMathSymbol": (0, 4), "\\newif": (0, 1),
    "\\externaldocument": (1, 1), "\\pagestyle": (0, 1), "\\thispagestyle": (0, 1),
    "\\bibliographystyle": (0, 1), "\\bibliography": (0, 1), "\\input": (0, 1), "\\include": (0, 1),
    "\\xyoption": (0, 1), "\\SelectTips": (0, 2), "\\graphicspath": (0, 1), "\\hypersetup": (0, 1),
    "\\definecolor": (0, 3), "\\swapnumbers": (0, 0), "\\makeatletter": (0, 0), "\\makeatother": (0, 0),
    "\\newsavebox": (0, 1), "\\DeclareFontFamily": (0, 3), "\\DeclareFontShape": (0, 6),
    "\\DeclareSymbolFont": (0, 5), "\\SetSymbolFont": (0, 4), "\\DeclareMathAlphabet": (0, 5),
}


def _parse_def(toks: list[str], i: int):
    """toks[i] is a definition command.  Returns (name or None, MacroDef or alias-name or None, end index).

    name None: not a usable definition (skip tokens up to end).  For ``\\let`` the second value is the
    aliased name as a str starting with a backslash.
    """
    cmd = toks[i]
    n = len(toks)
    j = i + 1
    if j < n and toks[j] == "*" and cmd in ("\\newcommand", "\\renewcommand", "\\providecommand",
                                            "\\DeclareMathOperator", "\\DeclareRobustCommand"):
        j += 1
    if cmd == "\\let":
        j = _skip_ws(toks, j)
        if j >= n:
            return None, None, n
        name = toks[j]
        j = _skip_ws(toks, j + 1)
        if j < n and toks[j] == "=":
            j = _skip_ws(toks, j + 1)
        if j >= n:
            return None, None, n
        target = toks[j]
        if name.startswith("\\") and len(name) > 2 and target.startswith("\\"):
            return name[1:], target, j + 1
        return None, None, j + 1
    if cmd in ("\\def", "\\gdef", "\\edef", "\\xdef"):
        j = _skip_ws(toks, j)
        if j >= n:
            return None, None, n
        name = toks[j]
        j += 1
        # parameter text up to the body's '{'
        params = []
        while j < n and toks[j] != "{":
            params.append(toks[j])
            j += 1
        if j >= n:
            return None, None, n
        end = _group_end(toks, j)
        body = toks[j + 1:end]
        end = min(end + 1, n)
        ps = [p for p in params if p != " "]
        if not (name.startswith("\\") and len(name) > 1):
            return None, None, end
        if ps != ["#%d" % (k + 1) for k in range(len(ps))]:
            return None, None, end  # delimited parameters: TeX programming
        return name[1:], (len(ps), body, None), end
    if cmd == "\\DeclareMathOperator":
        arg, j = _read_arg(toks, j)
        name = "".join(t for t in arg if t != " ")
        body, j = _read_arg(toks, j)
        if not name.startswith("\\"):
            return None, None, j
        return name[1:], (0, ["\\operatorname", "{"] + body + ["}"], None), j
    # \newcommand family: \newcommand{\name}[n][default]{body} or \newcommand\name...
    arg, j = _read_arg(toks, j)
    name = "".join(t for t in arg if t != " ")
    nargs = 0
    opt, j = _read_opt(toks, j)
    if opt is not None:
        try:
            nargs = int("".join(opt).strip())
        except ValueError:
            nargs = 0
    default = None
    if nargs:
        opt2, j = _read_opt(toks, j)
        if opt2 is not None:
            default = opt2
    body, j = _read_arg(toks, j)
    if not (name.startswith("\\") and len(name) > 1):
        return None, None, j
    return name[1:], (max(0, min(nargs, 9)), body, default), j


def _is_complex(body: list[str]) -> bool:
    return any(t[0] == "\\" and (t in _COMPLEX or "@" in t) for t in body)


def _join(toks: Iterable[str]) -> str:
    out = []
    prev_cw = False
    for t in toks:
        if prev_cw and (t[0].isalpha()):
            out.append(" ")
        out.append(t)
        prev_cw = t[0] == "\\" and len(t) > 1 and t[1].isalpha()
    return "".join(out)


def _collect_defs(toks: list[str], macros: dict, keep_rest: bool, provide_keeps: bool = True):
    """Walk toks; add definitions to ``macros`` (in place).  When keep_rest, return the tokens that are
    not definitions / declarations, else None."""
    rest: list[str] | None = [] if keep_rest else None
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        if t in _DEF_CMDS:
            name, val, end = _parse_def(toks, i)
            if name is not None:
                if isinstance(val, str):  # \let
                    tgt = val[1:]
                    if tgt in macros:
                        macros[name] = macros[tgt]
                    elif "@" not in tgt:
                        macros[name] = MacroDef(0, val)
                    else:
                        macros.pop(name, None)
                else:
                    nargs, body, default = val
                    if _is_complex(body) or (default is not None and _is_complex(default)):
                        macros.pop(name, None)
                    elif t.startswith("\\providecommand") and name in macros and provide_keeps:
                        pass
                    else:
                        macros[name] = MacroDef(
                            nargs, _join(body), None if default is None else _join(default))
            i = max(end, i + 1)
            continue
        if rest is not None and t in _SKIP_DECL:
            spec = _SKIP_DECL[t]
            j = i + 1
            if j < n and toks[j] == "*":
                j += 1
            if spec is None:
                if t == "\\newtheorem":
                    _, j = _read_arg(toks, j)
                    _, j = _read_opt(toks, j)
                    _, j = _read_arg(toks, j)
                    _, j = _read_opt(toks, j)
                else:  # \newenvironment{name}[n][default]{begin}{end}
                    _, j = _read_arg(toks, j)
                    _, j = _read_opt(toks, j)
                    _, j = _read_opt(toks, j)
                    _, j = _read_arg(toks, j)
                    _, j = _read_arg(toks, j)
            else:
                nopt, nman = spec
                for _ in range(nopt):
                    _, j = _read_opt(toks, j)
                for _ in range(nman):
                    _, j = _read_arg(toks, j)
            rest.append(" ")
            i = max(j, i + 1)
            continue
        if rest is not None:
            rest.append(t)
        i += 1
    return rest


def parse_macros(tex: str) -> Macros:
    """Macro definitions in ``tex``: name (no backslash) -> (number of args, replacement body).

    Handles ``\\newcommand``/``\\renewcommand``/``\\providecommand`` (also starred, ``\\newcommand\\x``,
    ``[n]`` and an optional first argument's default, kept on ``MacroDef.optional_default``), ``\\def\\x{..}``
    and ``\\def\\x#1#2{..}``, ``\\let\\a\\b``, ``\\DeclareMathOperator(*)``.  Definitions made of TeX
    programming (``\\@ifnextchar``, delimited parameters, ``\\if...``) are left out.
    """
    macros: dict = {}
    try:
        toks = _tokenize(strip_comments(tex), at_letter=True)
        _collect_defs(toks, macros, keep_rest=False, provide_keeps=True)
    except Exception:  # never raise on malformed input
        pass
    return macros


# --------------------------------------------------------------------------------------------------------
# Expansion

_BODY_CACHE: dict[str, list[str]] = {}


def _body_tokens(body: str) -> list[str]:
    toks = _BODY_CACHE.get(body)
    if toks is None:
        toks = _tokenize(body, at_letter=True)
        if len(_BODY_CACHE) > 50000:
            _BODY_CACHE.clear()
        _BODY_CACHE[body] = toks
    return toks


def _pop_group(stack: list[str], close: str) -> list[str]:
    """The tokens of a group whose opening ``{`` or ``[`` was just popped (the top of ``stack`` is the next
    token), popped up to its ``close`` (``}`` or ``]``, dropped); brace groups inside are balanced.  An
    unclosed group takes the rest of the stack."""
    out: list[str] = []
    depth = 0
    pop = stack.pop
    while stack:
        x = pop()
        if x == "{":
            depth += 1
        elif x == "}":
            if depth == 0 and close == "}":
                break
            depth -= 1
        elif x == close and depth <= 0:
            break
        out.append(x)
    return out


def _expand(toks: list[str], macros: dict) -> list[str]:
    if not macros:
        return toks
    for t in set(toks):
        if t[0] == "\\" and t[1:] in macros:
            break
    else:
        return toks  # nothing to expand
    out: list[str] = []
    stack = toks[::-1]
    budget = 2000 + 20 * len(toks)
    max_stack = 200000 + 4 * len(toks)
    pop = stack.pop
    while stack:
        t = pop()
        if t[0] == "\\" and len(t) > 1:
            m = macros.get(t[1:])
            if m is not None and budget > 0 and len(stack) < max_stack:
                budget -= 1
                try:
                    nargs, body = m[0], m[1]
                    nargs = int(nargs)
                except Exception:
                    out.append(t)
                    continue
                default = getattr(m, "optional_default", None)
                args: list[list[str]] = []
                if nargs:
                    # read arguments from the stack (top = next token)
                    if default is not None:
                        k = len(stack) - 1
                        while k >= 0 and stack[k] == " ":
                            k -= 1
                        if k >= 0 and stack[k] == "[":
                            del stack[k:]  # drop spaces and '['
                            args.append(_pop_group(stack, "]"))
                        else:
                            args.append(_body_tokens(default))
                    while len(args) < nargs:
                        while stack and stack[-1] == " ":
                            pop()
                        if not stack or stack[-1] == "}":
                            args.append([])
                            continue
                        x = pop()
                        if len(x) > 1 and x[0] != "\\" and x[0] != "#" and x != "{":
                            stack.append(x[1:])
                            x = x[0]
                        if x == "{":
                            args.append(_pop_group(stack, "}"))
                        else:
                            args.append([x])
                btoks = _body_tokens(body) if isinstance(body, str) else list(body)
                if nargs:
                    sub: list[str] = []
                    for b in btoks:
                        if len(b) == 2 and b[0] == "#" and b[1].isdigit():
                            k = int(b[1]) - 1
                            if 0 <= k < len(args):
                                sub.extend(args[k])
                        else:
                            sub.append(b)
                    btoks = sub
                stack.extend(reversed(btoks))
                continue
        out.append(t)
    return out


def definitions_out(tex: str) -> tuple[dict, str]:
    """The macro definitions made inside ``tex`` (``\\newcommand``, ``\\def``, ``\\DeclareMathOperator`` ...)
    and ``tex`` without them or the other declarations (``\\newtheorem``, ``\\usepackage`` ...): what a
    display text does with a PlanetMath entry that defines its macros in its body (they showed as
    ``[0]{K}``). Never raises: ``({}, tex)`` when it cannot."""
    if not tex or not _DEF_HINT_RE.search(tex):
        return {}, tex or ""
    try:
        toks = [("\n\n" if t.count("\n") > 1 else " ") if t.isspace() else t for t in _TOKEN_RE.findall(tex)]
        found: dict = {}
        rest = _collect_defs(toks, found, keep_rest=True, provide_keeps=True)
        return found, "".join(rest or [])
    except Exception:  # pragma: no cover - the parser is bounded; keep the text as written
        return {}, tex


def expand_macros(tex: str, macros: Macros) -> str:
    """``tex`` with ``macros`` expanded and everything else left as written (the display text of
    ``mathlas_build.display``; ``latex_to_text`` goes on to words). Never raises."""
    if not tex or not macros:
        return tex or ""
    try:
        # white space as latex_to_text sees it (one space, which macro arguments skip), but a blank line stays
        toks = [("\n\n" if t.count("\n") > 1 else " ") if t.isspace() else t for t in _TOKEN_RE.findall(tex)]
        toks = _expand(toks, macros)
        out: list[str] = []
        for t in toks:   # a control word right before a letter (a body's last word): keep them apart
            if out and out[-1][:1] == "\\" and out[-1][1:2].isalpha() and t[:1].isalpha():
                out.append(" ")
            out.append(t)
        return "".join(out)
    except Exception:  # pragma: no cover - the expander is bounded; keep the text as written
        return tex


# --------------------------------------------------------------------------------------------------------
# Words

_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
          "upsilon phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega digamma").split()

SYMBOL_WORDS: dict[str, str] = {g: g for g in _GREEK}
SYMBOL_WORDS.update({
    "varepsilon": "epsilon", "vartheta": "theta", "varpi": "pi", "varrho": "rho", "varsigma": "sigma",
    "varphi": "phi", "varkappa": "kappa", "varGamma": "Gamma", "varDelta": "Delta", "varOmega": "Omega",
    "varPhi": "Phi", "varPsi": "Psi", "varSigma": "Sigma", "varLambda": "Lambda", "varTheta": "Theta",
    "ell": "l", "aleph": "aleph", "beth": "beth", "hbar": "hbar", "imath": "i", "jmath": "j", "wp": "p",
    # relations
    "to": "to", "rightarrow": "to", "longrightarrow": "to", "Rightarrow": "implies", "Longrightarrow": "implies",
    "implies": "implies", "impliedby": "implied by", "leftarrow": "from", "longleftarrow": "from",
    "gets": "from", "Leftarrow": "implied by", "Longleftarrow": "implied by",
    "leftrightarrow": "iff", "Leftrightarrow": "iff", "longleftrightarrow": "iff", "Longleftrightarrow": "iff",
    "iff": "iff", "mapsto": "maps to", "longmapsto": "maps to", "hookrightarrow": "injects into",
    "hookleftarrow": "injects into", "twoheadrightarrow": "onto", "rightarrowtail": "injects into",
    "xrightarrow": "to", "xleftarrow": "from", "leadsto": "to", "rightsquigarrow": "to", "uparrow": "up",
    "downarrow": "down", "nearrow": "to", "searrow": "to", "swarrow": "to", "nwarrow": "to",
    "rightleftarrows": "to", "leftrightarrows": "to", "rightrightarrows": "to",
    "subset": "subset", "subseteq": "subset", "subsetneq": "proper subset", "subsetneqq": "proper subset",
    "subseteqq": "subset", "supset": "superset", "supseteq": "superset", "supsetneq": "proper superset",
    "sqsubset": "subset", "sqsubseteq": "subset", "nsubseteq": "not subset",
    "in": "in", "notin": "not in", "ni": "contains", "owns": "contains",
    "cong": "isomorphic", "simeq": "equivalent", "sim": "~", "approx": "approx", "equiv": "equiv",
    "neq": "!=", "ne": "!=", "le": "<=", "leq": "<=", "leqq": "<=", "leqslant": "<=", "ge": ">=",
    "geq": ">=", "geqq": ">=", "geqslant": ">=", "lt": "<", "gt": ">", "ll": "<<", "gg": ">>",
    "nless": "not <", "ngtr": "not >", "nleq": "not <=", "ngeq": "not >=",
    "prec": "prec", "preceq": "preceq", "succ": "succ", "succeq": "succeq", "propto": "proportional to",
    "mid": "|", "nmid": "does not divide", "divides": "divides", "parallel": "parallel", "perp": "perp",
    "vdash": "proves", "models": "models", "vDash": "models", "dashv": "dashv", "asymp": "asymp",
    "doteq": "=", "triangleq": "=", "coloneqq": ":=", "eqqcolon": "=:", "coloneq": ":=", "defeq": ":=",
    "colon": ":", "vcentcolon": ":", "smallsetminus": "minus",
    # operators
    "otimes": "tensor", "bigotimes": "tensor", "oplus": "direct sum", "bigoplus": "direct sum",
    "ominus": "minus", "odot": "odot", "boxtimes": "boxtimes", "times": "times", "cdot": "*", "ast": "*",
    "star": "*", "circ": "circ", "bullet": "*", "centerdot": "*", "div": "/", "pm": "+-", "mp": "-+",
    "setminus": "minus", "backslash": "minus", "cup": "union", "bigcup": "union", "cap": "intersection",
    "bigcap": "intersection", "sqcup": "disjoint union", "bigsqcup": "disjoint union",
    "coprod": "coproduct", "amalg": "coproduct", "prod": "product", "sum": "sum", "int": "integral",
    "iint": "integral", "iiint": "integral", "oint": "integral", "partial": "partial", "nabla": "nabla",
    "wedge": "and", "land": "and", "bigwedge": "wedge", "vee": "or", "lor": "or", "bigvee": "vee",
    "neg": "not", "lnot": "not", "forall": "for all", "exists": "exists", "nexists": "does not exist",
    "emptyset": "empty set", "varnothing": "empty set", "infty": "infinity", "top": "top", "bot": "bottom",
    "angle": "angle", "triangle": "triangle", "square": "square", "Box": "box", "Diamond": "diamond",
    "dagger": "dagger", "ddagger": "dagger", "prime": "'", "surd": "sqrt", "sqrt": "sqrt",
    "langle": "<", "rangle": ">", "lvert": "|", "rvert": "|", "vert": "|", "Vert": "||", "lVert": "||",
    "rVert": "||", "lfloor": "floor(", "rfloor": ")", "lceil": "ceil(", "rceil": ")", "lbrace": "{",
    "rbrace": "}", "lbrack": "[", "rbrack": "]",
    "ldots": "...", "dots": "...", "cdots": "...", "vdots": "...", "ddots": "...", "dotsc": "...",
    "dotsb": "...", "dotsm": "...", "dotso": "...", "dotsi": "...",
    "lim": "lim", "varinjlim": "colim", "varprojlim": "lim", "injlim": "colim", "projlim": "lim",
    "colim": "colim", "pmod": "mod", "bmod": "mod", "mod": "mod",
    "S": "section", "P": "paragraph", "copyright": "(c)", "dag": "dagger", "textbackslash": "\\",
    "o": "o", "O": "O", "ss": "ss", "ae": "ae", "AE": "AE", "oe": "oe", "OE": "OE", "aa": "a", "AA": "A",
    "l": "l", "L": "L", "i": "i", "j": "j",
    # HoTT-style binder macros whose definitions are TeX programming
    "prd": "product", "sm": "sum", "lam": "lambda", "lamu": "lambda", "fall": "for all", "exis": "exists",
    "tprd": "product", "dprd": "product", "lprd": "product", "tsm": "sum", "dsm": "sum", "lsm": "sum",
    "textendash": "-", "textemdash": "-",
})

# commands that vanish, leaving whatever follows (their braced argument's text stays)
_TRANSPARENT = set("""
text textit textbf textrm textsf texttt textsc textup textsl textnormal textmd emph em it bf rm sf tt sc sl
up normalfont mathrm mathit mathbf mathsf mathtt mathcal mathscr mathfrak mathbb mathbbm mathbbmss mathds
EuScript Bbb bold boldsymbol bm pmb operatorname operatornamewithlimits cal blue red green qedhere ensuremath mbox hbox fbox vbox
underline overline widetilde widehat tilde hat bar check breve dot ddot dddot vec acute grave mathring
overrightarrow overleftarrow underbrace overbrace
mathop mathord mathbin mathrel mathopen mathclose mathpunct mathinner displaystyle textstyle scriptstyle
scriptscriptstyle small large Large LARGE huge Huge tiny footnotesize scriptsize normalsize
noindent indent par medskip smallskip bigskip medbreak bigbreak smallbreak newline linebreak pagebreak
nopagebreak newpage clearpage nolimits limits xspace relax phantomsection maketitle centering raggedright
raggedleft hfill vfill hfil vfil hss left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr
Biggl Biggr bigm Bigm protect nonumber notag section subsection subsubsection paragraph subparagraph chapter
part caption footnote footnotetext title item quad qquad enspace thinspace negthinspace negmedspace
medspace thickspace allowbreak displaybreak strut mathstrut null unskip ignorespaces noexpand
leavevmode tableofcontents appendix frontmatter mainmatter backmatter hline cline toprule midrule
bottomrule centerline underset overset stackrel boxed cancel text sout xymatrix xy
smash lefteqn substack begingroup endgroup bgroup egroup selectfont upshape itshape bfseries mdseries
rmfamily sffamily ttfamily scshape slshape narrowbreak textsuperscript textsubscript mathnormal
indexspace nobreak noalign
""".split())

_SPACE = set("""quad qquad enspace item newline linebreak par medskip smallskip bigskip hline hfill
medbreak bigbreak smallbreak noindent""".split())

# commands dropped together with their arguments: (optional args, mandatory args)
_DROP = {
    "label": (0, 1), "ref": (0, 1), "eqref": (0, 1), "cref": (0, 1), "Cref": (0, 1), "autoref": (0, 1),
    "pageref": (0, 1), "nameref": (0, 1), "vref": (0, 1), "crefrange": (0, 2), "hyperref": (1, 0),
    "cite": (2, 1), "citep": (2, 1), "citet": (2, 1), "citealt": (2, 1), "citeauthor": (2, 1),
    "citeyear": (2, 1), "nocite": (0, 1), "index": (1, 1), "indexdef": (0, 1), "indexsee": (0, 2),
    "indexsee*": (0, 2), "glossary": (0, 1), "hspace": (0, 1), "vspace": (0, 1), "hspace*": (0, 1),
    "vspace*": (0, 1), "includegraphics": (1, 1), "bibitem": (1, 1), "url": (0, 1), "color": (1, 1),
    "pagecolor": (1, 1), "phantom": (0, 1), "hphantom": (0, 1), "vphantom": (0, 1), "rule": (1, 2),
    "kern": (0, 0), "tag": (0, 1), "tag*": (0, 1), "setlength": (0, 2), "setcounter": (0, 2),
    "addtocounter": (0, 2), "addcontentsline": (0, 3), "markright": (0, 1), "markboth": (0, 2),
    "pdfbookmark": (1, 2), "vskip": (0, 0), "hskip": (0, 0), "PMlinkescapeword": (0, 1),
    "PMlinkescapephrase": (0, 1), "pmrelated": (0, 1), "pmkeywords": (0, 1), "pmcomment": (0, 1),
    "arabic": (0, 1), "roman": (0, 1), "Roman": (0, 1), "alph": (0, 1), "fnsymbol": (0, 1), "value": (0, 1),
    "stepcounter": (0, 1), "refstepcounter": (0, 1), "newblock": (0, 0), "psset": (0, 1),
    "ifthenelse": (0, 0), "sectionNotes": (0, 0), "sectionExercises": (0, 1), "symlabel": (0, 1),
    "verb": (0, 0), "input": (0, 1), "include": (0, 1), "footnotemark": (1, 0),
    "theoremstyle": (0, 1), "usepackage": (1, 1), "documentclass": (1, 1), "begin": (0, 0),
    "end": (0, 0), "pmowner": (0, 2), "pmmodifier": (0, 2), "pmauthor": (0, 2), "pmrecord": (0, 2),
    "pmcreated": (0, 1), "pmmodified": (0, 1), "pmprivacy": (0, 1), "pmcanonicalname": (0, 1),
    "pmclassification": (0, 2), "pmtype": (0, 1), "pmtitle": (0, 1), "pmdefines": (0, 1),
    "pmsynonym": (0, 2), "endmetadata": (0, 0),
}

# commands keeping some of their arguments: name -> (optional args skipped, mandatory args, kept indexes)
_KEEP = {
    "href": (0, 2, (1,)), "textcolor": (1, 2, (1,)), "colorbox": (1, 2, (1,)), "mathchoice": (0, 4, (0,)),
    "raisebox": (0, 2, (1,)), "PMlinkname": (0, 2, (0,)), "PMlinkid": (0, 2, (0,)),
    "PMlinkexternal": (0, 2, (0,)), "PMlinktofile": (0, 2, (0,)), "PMlinkescapetext": (0, 1, (0,)),
    "PMlinkrefname": (0, 2, (0,)), "hyperlink": (0, 2, (1,)), "hypertarget": (0, 2, (1,)),
    "makebox": (2, 1, (0,)), "framebox": (2, 1, (0,)), "parbox": (1, 2, (1,)), "resizebox": (0, 3, (2,)),
    "scalebox": (1, 2, (1,)), "texorpdfstring": (0, 2, (0,)), "emph*": (0, 1, (0,)),
    "section*": (1, 1, (0,)), "subsection*": (1, 1, (0,)), "subsubsection*": (1, 1, (0,)),
    "chapter*": (1, 1, (0,)), "paragraph*": (1, 1, (0,)), "operatorname*": (0, 1, (0,)),
    "multicolumn": (0, 3, (2,)), "htmladdnormallink": (0, 2, (0,)), "multirow": (1, 3, (2,)),
}

_SKIP_ENVS = {"reference", "history", "comment", "verbatim", "verbatim*", "lstlisting", "pspicture",
              "pspicture*", "picture", "tikzpicture", "tikzcd", "figure*", "filecontents",
              "minted", "asy", "asydef", "displaymath*"}
_ENV_SPEC = {"array", "tabular", "tabular*", "tabularx", "longtable", "alignat", "alignat*", "xalignat",
             "minipage", "multicols", "subarray", "wrapfigure", "thebibliography"}

_CTRL_SYM = {
    "\\\\": " ", "\\,": " ", "\\;": " ", "\\:": " ", "\\>": " ", "\\ ": " ", "\\\n": " ", "\\\t": " ",
    "\\!": "", "\\/": "", "\\-": "", "\\@": "", "\\{": "{", "\\}": "}", "\\%": "%", "\\&": "&",
    "\\$": "$", "\\#": "#", "\\_": "_", "\\|": " || ", "\\[": " ", "\\]": " ", "\\(": " ", "\\)": " ",
    "\\'": "", '\\"': "", "\\`": "", "\\^": "", "\\~": "", "\\=": "", "\\.": "", "\\*": "",
}
_ACCENT_WORDS = {"v", "u", "H", "c", "r", "k", "d", "b", "t"}
# Text accents and letters (issue 31): ``G\"odel`` -> Gödel, ``Weierstra\ss`` -> Weierstraß, ``\v{S}ilov``
# -> Šilov, as a reader writes them; the lexical index also finds them by their ASCII letters
# (``mathlas.bundle.lexical_words`` adds ``Godel``, ``Weierstrass``).
_ACCENT_MARKS = {"\\'": "\u0301", "\\`": "\u0300", "\\^": "\u0302", '\\"': "\u0308", "\\~": "\u0303",
                 "\\=": "\u0304", "\\.": "\u0307", "\\c": "\u0327", "\\v": "\u030c", "\\u": "\u0306",
                 "\\H": "\u030b", "\\k": "\u0328", "\\r": "\u030a"}   # not \\d, \\b: macros elsewhere
_TEXT_LETTERS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å",
                 "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "SS": "SS"}
_DASHES = re.compile(r"(?<=\w)-{2,3}(?=\w)|(?<= )---?(?= )")


def _accented(mark: str, arg: list[str]) -> str:
    """``\\"{o}`` / ``\\"o`` -> ``ö``: the accent on the first letter of its argument (``\\i`` as i)."""
    base = "".join(_TEXT_LETTERS.get(t[1:], "") if t[:1] == "\\" else t for t in arg).strip()
    if base[:1] in ("ı", "ȷ"):
        base = {"ı": "i", "ȷ": "j"}[base[0]] + base[1:]
    if not base or not base[0].isalpha():
        return base
    return unicodedata.normalize("NFC", base[0] + _ACCENT_MARKS[mark]) + base[1:]

# A wedge or vee leading a script is notation, not logic: A^\wedge is a completion, V^\vee a dual,
# X^{\wedge q} a smash power. As words ("A^and", "V^or") they read as a conjunction, so they stay the symbols.
_SCRIPT_SYMBOLS = {"\\wedge": "∧", "\\vee": "∨"}


def _lead(toks: list[str]) -> str:
    """The first token that is not a space."""
    return next((t for t in toks if t != " "), "")


_SPECIAL_FIRST = frozenset("\\$&~{} ^_#")
_PLAIN = {"$": "", "&": " ", "~": " ", "{": "", "}": "", " ": " "}


def _convert(toks: list[str], depth: int = 0) -> str:
    out: list[str] = []
    app = out.append
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        i += 1
        c = t[0]
        if c not in _SPECIAL_FIRST:
            app(t)
            continue
        p = _PLAIN.get(t)
        if p is not None:
            if p:
                app(p)
            continue
        if c == "\\":
            if len(t) == 1:
                continue
            if not t[1].isalpha():
                if t in _ACCENT_MARKS and i < n and toks[i] not in (" ", "}", "$"):
                    a, i = _read_arg(toks, i)
                    app(_accented(t, a))
                    continue
                s = _CTRL_SYM.get(t)
                app(" " if s is None else s)
                continue
            name = t[1:]
            letter = _TEXT_LETTERS.get(name)
            if letter is not None:         # \ss, \o, \ae ...: a letter of the word around it
                if i + 1 < n and toks[i] == "{" and toks[i + 1] == "}":
                    i += 2
                elif i < n and toks[i] == " ":
                    i += 1
                app(letter)
                continue
            if i < n and toks[i] == "*" and (name + "*") in _DROP or (name + "*") in _KEEP:
                if i < n and toks[i] == "*":
                    name += "*"
                    i += 1
            if name == "xymatrix":  # \xymatrix@C=2pc@R=1pc{...}: drop the spacing options
                j = i
                while j < n and j - i < 40 and toks[j] != "{":
                    j += 1
                if j < n and toks[j] == "{":
                    i = j
                continue
            if name in _TRANSPARENT:
                if name in _SPACE:
                    app(" ")
                continue
            w = SYMBOL_WORDS.get(name)
            if w is not None and name not in ("sqrt",):
                if name in ("xrightarrow", "xleftarrow"):
                    opt, i = _read_opt(toks, i)
                    a, i = _read_arg(toks, i)
                    app(" " + w + " " + (_convert(a, depth + 1) if depth < 50 else "") + " ")
                    continue
                app(" " + w + "\x01")
                continue
            if name == "begin" or name == "end":
                a, i = _read_arg(toks, i)
                env = "".join(a).strip()
                if name == "begin":
                    if env in _SKIP_ENVS:
                        i = _skip_env(toks, i, env)
                    elif env in _ENV_SPEC:
                        _, i = _read_opt(toks, i)
                        if env in ("tabular*", "minipage", "multicols", "wrapfigure"):
                            _, i = _read_arg(toks, i)
                        _, i = _read_arg(toks, i)
                app(" ")
                continue
            d = _DROP.get(name)
            if d is not None:
                if name == "verb":
                    i = _skip_verb(toks, i, out)
                    continue
                nopt, nman = d
                for _ in range(nopt):
                    _, i = _read_opt(toks, i)
                for _ in range(nman):
                    _, i = _read_arg(toks, i)
                app(" ")
                continue
            k = _KEEP.get(name)
            if k is not None:
                nopt, nman, keep = k
                for _ in range(nopt):
                    _, i = _read_opt(toks, i)
                args = []
                for _ in range(nman):
                    a, i = _read_arg(toks, i)
                    args.append(a)
                if depth < 50:
                    app(" ".join(_convert(args[x], depth + 1) for x in keep if x < len(args)))
                continue
            if name in ("frac", "dfrac", "tfrac", "cfrac", "nicefrac", "sfrac"):
                a, i = _read_arg(toks, i)
                b, i = _read_arg(toks, i)
                if depth < 50:
                    app(" " + _wrap(_convert(a, depth + 1)) + " / " + _wrap(_convert(b, depth + 1)) + " ")
                continue
            if name in ("binom", "dbinom", "tbinom"):
                a, i = _read_arg(toks, i)
                b, i = _read_arg(toks, i)
                if depth < 50:
                    app(" (" + _convert(a, depth + 1).strip() + " choose " + _convert(b, depth + 1).strip()
                        + ") ")
                continue
            if name == "sqrt":
                opt, i = _read_opt(toks, i)
                a, i = _read_arg(toks, i)
                index = _convert(opt, depth + 1).strip() if opt and depth < 50 else ""
                if depth < 50:  # \sqrt[3]{2} is the cube root of 2, not its square root
                    root = {"": "sqrt", "2": "sqrt", "3": "cube root"}.get(index) or f"{index}-th root"
                    app(f" {root}(" + _convert(a, depth + 1).strip() + ") ")
                continue
            if name == "over":
                app(" / ")
                continue
            if name == "choose":
                app(" choose ")
                continue
            if name == "not":
                app(" not ")
                continue
            if name == "ar":
                i = _skip_xy_arrow(toks, i, out, depth)
                continue
            if name in _ACCENT_WORDS and i < n and toks[i] == "{":
                if t in _ACCENT_MARKS:
                    a, i = _read_arg(toks, i)
                    app(_accented(t, a))
                continue
            if t in _ACCENT_MARKS and i + 1 < n and toks[i] == " " and toks[i + 1][:1].isalpha():
                app(_accented(t, [toks[i + 1]]))   # {\v C}ech, as TeX reads it: the accent on the next letter
                i += 2
                continue
            app(" " + name + "\x01")
            continue
        if t == "^" or t == "_":
            a, i = _read_arg(toks, i)
            if len(a) == 1 and a[0][0] not in _SPECIAL_FIRST:
                s = a[0]
            elif _lead(a) in _SCRIPT_SYMBOLS:    # R^\wedge, H^{\wedge q}: the symbol, then the rest
                k = a.index(_lead(a))
                s = _SCRIPT_SYMBOLS[a[k]] + (_convert(a[k + 1:], depth + 1).strip() if depth < 50 else "")
            else:
                s = _convert(a, depth + 1).strip() if depth < 50 else ""
            if not s:
                continue
            if _NEEDS_PARENS.search(s):
                s = "(" + s + ")"
            app(t + s + "\x01")
            continue
        if c == "#":
            app(" ")
            continue
        app(t)
    return "".join(out)


_NEEDS_PARENS = re.compile(r"[\s=,+<>/|;:*]|.-")


def _wrap(s: str) -> str:
    s = s.strip()
    if _NEEDS_PARENS.search(s) and not (s.startswith("(") and s.endswith(")")):
        return "(" + s + ")"
    return s


def _skip_env(toks: list[str], i: int, env: str) -> int:
    """Index just after the ``\\end{env}`` matching a ``\\begin{env}`` that ended at i."""
    depth = 1
    n = len(toks)
    while i < n:
        t = toks[i]
        if t == "\\begin" or t == "\\end":
            a, j = _read_arg(toks, i + 1)
            if "".join(a).strip() == env:
                depth += 1 if t == "\\begin" else -1
                if depth == 0:
                    return j
            i = j
            continue
        i += 1
    return n


def _skip_verb(toks: list[str], i: int, out: list[str]) -> int:
    n = len(toks)
    if i < n and toks[i] == "*":
        i += 1
    if i >= n:
        return n
    delim = toks[i]
    j = i + 1
    buf = []
    while j < n and toks[j] != delim:
        buf.append(toks[j])
        j += 1
    out.append(" " + "".join(buf) + " ")
    return j + 1


def _skip_xy_arrow(toks: list[str], i: int, out: list[str], depth: int) -> int:
    """Xy-pic ``\\ar@{..}[r]^{f}_{g}|{h}``: drop shape and direction, keep labels as "to f"."""
    n = len(toks)
    labels = []
    while i < n:
        t = toks[i]
        if t == " ":
            i += 1
        elif t == "@":
            i += 1
            if i < n and toks[i] in ("{", "<", "/", "(", "[", "^", "_", "!", "=", "-", "."):
                if toks[i] == "{":
                    i = _group_end(toks, i) + 1
                elif toks[i] in ("<", "/", "(", "["):
                    close = {"<": ">", "/": "/", "(": ")", "[": "]"}[toks[i]]
                    j = i + 1
                    while j < n and toks[j] != close:
                        j += 1
                    i = j + 1
                else:
                    i += 1
            elif i < n and toks[i][0].isalnum():
                i += 1
        elif t == "[":
            j = i + 1
            while j < n and toks[j] != "]":
                j += 1
            i = j + 1
        elif t in ("^", "_", "|"):
            a, i = _read_arg(toks, i + 1)
            if depth < 50:
                labels.append(_convert(a, depth + 1).strip())
        else:
            break
    out.append(" to " + " ".join(x for x in labels if x) + " ")
    return i


_WS_RE = re.compile(r"\s+")
_SOFT_RE = re.compile(r"\x01+(?=[(_^',.;:)\]])")
_SUPSUB_RE = re.compile(r" ([\^_])")
_PUNCT_RE = re.compile(r" ([,.;:)\]])")
_OPEN_RE = re.compile(r"([(\[]) ")


def latex_to_text(tex: str, macros: Macros | None = None) -> str:
    """Readable words from LaTeX: comments stripped, ``macros`` (and definitions made inside ``tex``)
    expanded, markup dropped, math commands turned into the words users type.  Never raises."""
    if not tex:
        return ""
    try:
        return _latex_to_text(tex, macros)
    except Exception:  # pragma: no cover - last resort, the tokenizer path should not raise
        s = re.sub(r"\\([A-Za-z]+)", r" \1 ", strip_comments(tex))
        return _WS_RE.sub(" ", re.sub(r"[{}$\\]", " ", s)).strip()


_DEF_HINT_RE = re.compile(r"\\(?:newcommand|renewcommand|providecommand|def|gdef|let|DeclareMathOperator|"
                          r"newtheorem|newenvironment|usepackage|documentclass|theoremstyle|setlength|"
                          r"setcounter|numberwithin|DeclareRobustCommand)\b")


def _latex_to_text(tex: str, macros: Macros | None) -> str:
    toks = _tokenize(strip_comments(tex))
    local = macros
    if _DEF_HINT_RE.search(tex):
        local = dict(macros) if macros else {}
        toks = _collect_defs(toks, local, keep_rest=True, provide_keeps=True)
    if local:
        toks = _expand(toks, local)
    s = _convert(toks)
    s = _SOFT_RE.sub("", s).replace("\x01", " ")
    s = s.replace("``", '"').replace("''", '"')
    if "--" in s:
        s = _DASHES.sub(lambda m: "—" if len(m.group(0)) == 3 else "–", s)
    s = _WS_RE.sub(" ", s)
    s = _SUPSUB_RE.sub(r"\1", s)
    s = _PUNCT_RE.sub(r"\1", s)
    s = _OPEN_RE.sub(r"\1", s)
    return s.strip()


# --------------------------------------------------------------------------------------------------------
# Environments


class LineIndex:
    """1-based line numbers of offsets in one text."""

    __slots__ = ("starts",)

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line(self, pos: int) -> int:
        """The line of ``text[pos]`` (1 + the newlines before it)."""
        return bisect.bisect_right(self.starts, pos)


class Environment(NamedTuple):
    name: str
    optional_arg: str | None   # the ``[Title]`` right after ``\begin{name}``, or None
    content: str               # text between the optional arg and ``\end{name}`` (comments stripped)
    start_line: int            # 1-based line of ``\begin{name}``


def split_environments(tex: str, names: Iterable[str], *, comments_stripped: bool = False) -> list[Environment]:
    """Every ``\\begin{x}...\\end{x}`` with x in ``names`` (balanced, nested ones too), in order of
    their ``\\begin``.  Comments are removed first (line numbers are kept).  Unclosed environments are
    dropped.  Never raises."""
    names = list(names)
    if not names:
        return []
    text = tex if comments_stripped else strip_comments(tex)
    alt = "|".join(re.escape(x) for x in sorted(set(names), key=len, reverse=True))
    pat = re.compile(r"\\(begin|end)\s*\{(" + alt + r")\}")
    lines = LineIndex(text)
    found: list[tuple[int, Environment]] = []
    stack: list[tuple[str, int, int]] = []  # name, begin offset, content offset
    for m in pat.finditer(text):
        kind, name = m.group(1), m.group(2)
        if kind == "begin":
            stack.append((name, m.start(), m.end()))
            continue
        # close the innermost open environment with this name
        for k in range(len(stack) - 1, -1, -1):
            if stack[k][0] == name:
                _, b, c = stack[k]
                del stack[k:]
                content_start, opt = _env_optional(text, c)
                found.append((b, Environment(name, opt, text[content_start:m.start()],
                                             lines.line(b))))
                break
    found.sort(key=lambda x: x[0])
    return [e for _, e in found]


def _env_optional(text: str, pos: int) -> tuple[int, str | None]:
    """An optional ``[...]`` right after ``\\begin{x}`` at pos (spaces and one newline allowed)."""
    j = pos
    n = len(text)
    nl = 0
    while j < n and text[j] in " \t\n":
        if text[j] == "\n":
            nl += 1
            if nl > 1:
                return pos, None
        j += 1
    if j >= n or text[j] != "[":
        return pos, None
    depth = 0
    k = j + 1
    while k < n:
        ch = text[k]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "]" and depth <= 0:
            return k + 1, text[j + 1:k]
        elif ch == "\n" and text.startswith("\n", k + 1):
            return pos, None  # paragraph break: not an optional argument
        k += 1
    return pos, None


def label_words(label: str) -> str:
    """``lemma-Noetherian-permanence`` -> ``Noetherian permanence``; ``thm:hedberg`` -> ``hedberg``."""
    s = label
    if ":" in s:
        s = s.split(":", 1)[1]
    else:
        head, _, tail = s.partition("-")
        if tail and head in {"lemma", "theorem", "proposition", "definition", "corollary", "remark",
                             "example", "exercise", "situation", "section", "subsection", "equation",
                             "item", "remarks"}:
            s = tail
    return re.sub(r"[-_:]+", " ", s).strip()
