"""Lean 4 source scanning: the checks ``verify_formal`` makes before any Lean process runs.

A small tokenizer that knows what Lean 4 treats as *not code*: line comments (``--``), nested
block comments (``/- ... -/``, also ``/-- -/`` and ``/-! -/``), string literals (with escapes),
raw strings (``r"..."``, ``r#"..."#``), character literals (``'a'``, ``'\\n'``) and quoted names
(``«...»``). Everything else becomes tokens: identifiers read whole with their dots, primes and
``!``/``?`` (so ``sorry_lemma``, ``Nat.sorry'`` and ``h.sorry`` are identifiers, never the
keyword), ``:=``, ``#``-commands, brackets, and single symbol characters.

On those tokens:

* ``sorry`` / ``admit`` / ``sorryAx`` / ``stop`` outside comments and strings make a proof
  incomplete (the kernel check looks again: this scan is the first of two fences);
* a **statement** must be one term: no ``:=`` at bracket depth 0 and balanced brackets;
* a statement or proof must not carry a command: no command keyword (``theorem``, ``axiom``,
  ``end``, ``macro``, ``run_cmd``...), no ``#``-command (``#eval``, ``#exit``, ``#print``...), no
  term that runs user code while elaborating (``run_tac``, ``by_elab``, ``eval%``), and ``open`` /
  ``set_option`` only in their term forms ``open X in e`` / ``set_option o v in e`` (options from a
  safe list: ``debug.skipKernelTC`` or ``warn.sorry`` would weaken the check). Lean 4 does not end
  commands at column 0, so indentation alone cannot stop a smuggled ``axiom``; these token rules
  plus the parentheses the file puts around statement and proof (see ``layout.py``) do.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SORRY_WORDS = frozenset({"sorry", "admit", "sorryAx", "stop"})

# `#name` commands. Other `#x` tokens are notation (Mathlib writes `#s` for `Finset.card s`).
HASH_COMMANDS = frozenset("""
eval exit print check check_failure reduce synth help find simp dsimp norm_num conv guard guard_expr
guard_msgs lint where time whnf whnfR explode instances long_names min_imports leansearch loogle moogle
html widget test sample version discr_tree_key find_home parse unfold kernel_reduce eval? count_heartbeats
""".split())

COMMAND_KEYWORDS = frozenset("""
theorem lemma def example abbrev instance axiom opaque structure class inductive coinductive mutual
namespace section end universe variable import export attribute macro macro_rules syntax elab
elab_rules notation infix infixl infixr prefix postfix declare_syntax_cat initialize
builtin_initialize run_cmd run_elab run_meta run_tac by_elab deriving noncomputable private protected
partial unsafe nonrec omit include irreducible_def alias proof_wanted simproc dsimproc
builtin_simproc builtin_dsimproc library_note assert_not_exists add_decl_doc compile_inductive
register_option register_simp_attr declare_aesop_rule_sets implemented_by extern unif_hint
""".split())

# `set_option NAME VALUE in ...` inside a statement or proof: only options that cannot weaken the check
SAFE_OPTION_PREFIXES = ("maxHeartbeats", "maxRecDepth", "maxSynthPendingDepth", "synthInstance.", "pp.",
                        "trace.", "linter.", "simprocs", "tactic.", "push_neg.", "exponentiation.",
                        "backward.", "says.", "autoImplicit", "relaxedAutoImplicit", "diagnostics")

OPENERS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄", "⟦": "⟧", "⟪": "⟫", "⌊": "⌋", "⌈": "⌉", "⁅": "⁆"}
CLOSERS = {v: k for k, v in OPENERS.items()}

_NOT_LETTERS = set("λΠΣ")
_SUBSCRIPTS = set("₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₔₕₖₗₘₙₚₛₜᵢᵣᵤᵥⱼᵦᵧᵨᵩᵪ")
_MODULE_RE = re.compile(r"[^\W\d][\w'!?]*(?:\.[^\W\d][\w'!?]*)*")


def _ident_start(c: str) -> bool:
    return (c.isalpha() or c == "_") and c not in _NOT_LETTERS


def _ident_rest(c: str) -> bool:
    return (c.isalnum() or c in "_'!?" or c in _SUBSCRIPTS) and c not in _NOT_LETTERS


@dataclass
class Token:
    """One token of code (never of a comment or string). ``depth`` is the bracket depth before it;
    ``line`` is 1-based, ``col`` 0-based, both in the scanned text."""

    text: str
    kind: str          # ident | symbol | open | close | hash | string | char | number
    line: int
    col: int
    depth: int


@dataclass
class Scan:
    """The tokens of a text and what is wrong with its lexical structure (unterminated comment or
    string, unbalanced brackets), each problem as a sentence."""

    tokens: list[Token]
    problems: list[str] = field(default_factory=list)
    balanced: bool = True


def tokenize(text: str) -> Scan:
    """Tokens of Lean 4 source outside comments; strings and chars become single tokens."""
    toks: list[Token] = []
    problems: list[str] = []
    stack: list[tuple[str, int, int]] = []
    balanced = True
    i, n, line, lstart = 0, len(text), 1, 0

    def pos(k: int) -> tuple[int, int]:
        return line, k - lstart

    def advance_to(k: int) -> None:
        nonlocal i, line, lstart
        while i < k:
            if text[i] == "\n":
                line += 1
                lstart = i + 1
            i += 1

    while i < n:
        c = text[i]
        if c == "\n" or c.isspace():
            advance_to(i + 1)
            continue
        ln, col = pos(i)
        if text.startswith("--", i):
            j = text.find("\n", i)
            advance_to(n if j < 0 else j)
            continue
        if text.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                problems.append(f"unterminated block comment `/-` at line {ln}")
            advance_to(j)
            continue
        raw = re.match(r'r(#*)"', text[i:i + 260])
        if raw and (i == 0 or not _ident_rest(text[i - 1])):
            close = '"' + raw.group(1)
            j = text.find(close, i + raw.end())
            if j < 0:
                problems.append(f"unterminated raw string at line {ln}")
                advance_to(n)
                continue
            toks.append(Token(text[i:j + len(close)], "string", ln, col, len(stack)))
            advance_to(j + len(close))
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                problems.append(f"unterminated string literal at line {ln}")
                advance_to(n)
                continue
            toks.append(Token(text[i:j + 1], "string", ln, col, len(stack)))
            advance_to(j + 1)
            continue
        if c == "'" and (i == 0 or not _ident_rest(text[i - 1])):
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", text[i:i + 16])
            if m:
                toks.append(Token(m.group(0), "char", ln, col, len(stack)))
                advance_to(i + m.end())
                continue
        if c == "«" or _ident_start(c):
            j = i
            while True:
                if j < n and text[j] == "«":
                    k = text.find("»", j + 1)
                    if k < 0:
                        problems.append(f"unterminated quoted name `«` at line {ln}")
                        j = n
                        break
                    j = k + 1
                elif j < n and _ident_start(text[j]):
                    j += 1
                    while j < n and _ident_rest(text[j]):
                        j += 1
                else:
                    break
                if j + 1 < n and text[j] == "." and (text[j + 1] == "«" or _ident_start(text[j + 1])):
                    j += 1
                    continue
                break
            toks.append(Token(text[i:j], "ident", ln, col, len(stack)))
            advance_to(j)
            continue
        if c.isdigit():
            m = re.match(r"\d[\w.]*", text[i:])
            toks.append(Token(m.group(0), "number", ln, col, len(stack)))
            advance_to(i + m.end())
            continue
        if c == "#" and i + 1 < n and _ident_start(text[i + 1]):
            j = i + 1
            while j < n and (_ident_rest(text[j]) or text[j] == "."):
                j += 1
            toks.append(Token(text[i:j], "hash", ln, col, len(stack)))
            advance_to(j)
            continue
        if text.startswith(":=", i):
            toks.append(Token(":=", "symbol", ln, col, len(stack)))
            advance_to(i + 2)
            continue
        if c in OPENERS:
            toks.append(Token(c, "open", ln, col, len(stack)))
            stack.append((c, ln, col))
        elif c in CLOSERS:
            if not stack or stack[-1][0] != CLOSERS[c]:
                if balanced:
                    where = f"`{stack[-1][0]}` opened at line {stack[-1][1]}" if stack else "nothing open"
                    problems.append(f"unbalanced bracket: `{c}` at line {ln}, column {col} ({where})")
                balanced = False
                if stack and CLOSERS[c] in [s[0] for s in stack]:
                    while stack and stack[-1][0] != CLOSERS[c]:
                        stack.pop()
                    stack.pop()
            else:
                stack.pop()
            toks.append(Token(c, "close", ln, col, len(stack)))
        else:
            toks.append(Token(c, "symbol", ln, col, len(stack)))
        advance_to(i + 1)
    if stack:
        balanced = False
        o, ln, col = stack[-1]
        problems.append(f"unbalanced bracket: `{o}` at line {ln}, column {col} is never closed")
    return Scan(toks, problems, balanced)


# ------------------------------------------------------------------------------ checks


def sorry_uses(scan: Scan) -> list[str]:
    """Where the text uses ``sorry``-like keywords in code, as "`sorry` at line L, column C"."""
    out = []
    for t in scan.tokens:
        if t.kind != "ident":
            continue
        plain = t.text.replace("«", "").replace("»", "")  # «sorryAx» is the identifier sorryAx
        if plain in SORRY_WORDS or plain.rsplit(".", 1)[-1] == "sorryAx":  # _root_.sorryAx is the axiom too
            out.append(f"`{t.text}` at line {t.line}, column {t.col}")
    return out


def _option_ok(name: str) -> bool:
    return any(name == p or name.startswith(p if p.endswith(".") else p + ".") or name == p.rstrip(".")
               for p in SAFE_OPTION_PREFIXES)


def command_problems(scan: Scan) -> list[str]:
    """Commands (or code-running terms) inside a text that must be a single term."""
    out: list[str] = []
    toks = scan.tokens
    for k, t in enumerate(toks):
        where = f"line {t.line}, column {t.col}"
        if t.kind == "hash" and t.text[1:] in HASH_COMMANDS:
            out.append(f"command `{t.text}` at {where}")
        elif t.kind == "ident" and t.text in COMMAND_KEYWORDS:
            out.append(f"command keyword `{t.text}` at {where}")
        elif t.kind == "ident" and t.text == "eval" and k + 1 < len(toks) and toks[k + 1].text == "%":
            out.append(f"`eval%` (runs code while elaborating) at {where}")
        elif t.kind == "ident" and t.text == "open":
            j = k + 1
            while j < len(toks) and (toks[j].kind == "ident" and toks[j].text != "in" or toks[j].text in "()→"):
                j += 1
            if j == k + 1 or j >= len(toks) or toks[j].text != "in":
                out.append(f"`open` at {where} is a command here; only `open Foo in <term>` is allowed")
        elif t.kind == "ident" and t.text == "set_option":
            rest = toks[k + 1:k + 4]
            if len(rest) < 3 or rest[0].kind != "ident" or rest[2].text != "in":
                out.append(f"`set_option` at {where} is a command here; only `set_option name value in <term>` is allowed")
            elif not _option_ok(rest[0].text):
                out.append(f"`set_option {rest[0].text}` at {where} is not allowed inside a checked statement or proof "
                           f"(allowed: {', '.join(p.rstrip('.') for p in SAFE_OPTION_PREFIXES)})")
    return out


def statement_shape_problems(scan: Scan) -> list[str]:
    """Why a statement is not shaped as one term: bad brackets, an unterminated comment or string,
    a top-level ``:=`` (a proof pasted after the type)."""
    out = list(scan.problems)
    for t in scan.tokens:
        if t.text == ":=" and t.depth == 0:
            out.append(f"`:=` at top level (line {t.line}, column {t.col}): the statement must be a type only; "
                       "put the proof in `proof`, or pass the whole declaration as a snippet "
                       "(wrap a `let x := ...` in parentheses)")
            break
    return out


def statement_problems(scan: Scan) -> list[str]:
    """Why a statement is not a single term: a top-level ``:=``, bad brackets, commands."""
    return statement_shape_problems(scan) + command_problems(scan)


def proof_problems(scan: Scan) -> list[str]:
    """Why a proof could escape its parentheses or run commands."""
    return list(scan.problems) + command_problems(scan)


# ------------------------------------------------------------------------------ imports


def split_imports(text: str) -> tuple[list[str], str, list[str]]:
    """Leading ``import`` lines of a text (comments and blank lines may sit among them) as
    (module names, the rest with those lines blanked so line numbers keep, problems)."""
    lines = text.split("\n")
    modules: list[str] = []
    problems: list[str] = []
    in_comment = 0
    for idx, line in enumerate(lines):
        stripped = line.strip()
        if in_comment or stripped.startswith("/-"):
            in_comment += line.count("/-") - line.count("-/")
            in_comment = max(in_comment, 0)
            continue
        if not stripped or stripped.startswith("--"):
            continue
        words = stripped.split("--", 1)[0].split()
        if words[0] != "import":
            break
        for name in words[1:]:
            if _MODULE_RE.fullmatch(name):
                modules.append(name)
            else:
                problems.append(f"not a module name in `import` at line {idx + 1}: {name!r}")
        if len(words) == 1:
            problems.append(f"`import` without a module at line {idx + 1}")
        lines[idx] = ""
    return modules, "\n".join(lines), problems


def valid_module(name: str) -> bool:
    """Whether ``name`` is a Lean module name such as ``Mathlib.Data.Nat.Prime.Basic``."""
    return bool(_MODULE_RE.fullmatch(name))


def declared_axioms(scan: Scan) -> list[str]:
    """Names a snippet declares with ``axiom NAME`` (reported, never judged: a snippet may)."""
    toks = scan.tokens
    return [toks[k + 1].text for k, t in enumerate(toks[:-1])
            if t.kind == "ident" and t.text == "axiom" and toks[k + 1].kind == "ident"]


def has_exit(scan: Scan) -> bool:
    """``#exit`` stops Lean: whatever follows it is never checked."""
    return any(t.kind == "hash" and t.text == "#exit" for t in scan.tokens)


# ------------------------------------------------------------------------------ a pasted declaration header

DECLARATION_WORDS = ("theorem", "lemma", "example")
BINDER_OPENERS = frozenset("({[⦃")
MODIFIERS = frozenset({"private", "protected", "noncomputable", "nonrec", "partial", "unsafe"})


def _offset(text: str, line: int, col: int) -> int:
    """The character offset of a token's (1-based line, 0-based column) in ``text``."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + col


def split_header(text: str, sc: Scan) -> tuple[str, str, str | None]:
    """A statement pasted as ``theorem NAME BINDERS : TYPE`` (or ``lemma``, or ``example BINDERS : TYPE``)
    read as (binders, the text with the header blanked, problem). The header is blanked with spaces
    (newlines kept) so Lean's positions in the type still point at the caller's lines. A text with
    no header comes back unchanged with binders ""; a header that cannot be read safely gives a
    ``problem`` sentence and nothing else. Binders must be bracket groups ``(..)``, ``{..}``,
    ``[..]``, ``⦃..⦄`` only, balanced, with no comment: they go on the theorem's own line, outside
    the parentheses that fence the type, so they get no less checking than the type (the caller
    runs the command and sorry checks on them too)."""
    toks = sc.tokens
    usage = ("pass the type alone (e.g. '∀ a b : Nat, a + b = b + a', or the part after the binders' `:`), "
             "or the whole declaration with its proof as a snippet")
    decl = [t for t in toks if t.kind == "ident" and t.text in DECLARATION_WORDS and t.depth == 0]
    if not toks or not decl:
        return "", text, None
    if decl[0] is not toks[0]:
        before = toks[:toks.index(decl[0])]
        if not all(t.depth > 0 or t.text in ("@", "[", "]") or t.text in MODIFIERS for t in before):
            return "", text, None  # a declaration further in: the command checks refuse it
        return "", "", (f"the statement holds a declaration (`{decl[0].text}` at line {decl[0].line}, column "
                        f"{decl[0].col}) after other words (attributes or modifiers?); {usage}")
    if not sc.balanced or sc.problems:
        return "", "", f"the statement's header cannot be read: {sc.problems[0]}"
    k = 1
    if toks[0].text != "example":
        if len(toks) < 2 or toks[1].kind != "ident":
            return "", "", f"`{toks[0].text}` is not followed by a name; {usage}"
        k = 2
    first = k
    while k < len(toks) and toks[k].kind == "open" and toks[k].depth == 0:
        if toks[k].text not in BINDER_OPENERS:
            return "", "", f"`{toks[k].text}` at line {toks[k].line}, column {toks[k].col} is not a binder; {usage}"
        k += 1
        while k < len(toks) and not (toks[k].kind == "close" and toks[k].depth == 0):
            k += 1
        k += 1
    if k >= len(toks) or toks[k].text != ":" or toks[k].depth != 0:
        where = f"`{toks[k].text}` at line {toks[k].line}, column {toks[k].col}" if k < len(toks) else "the end"
        return "", "", (f"the `{toks[0].text}` header cannot be read: expected binders in brackets, then `:`, "
                        f"found {where}; {usage}")
    colon = _offset(text, toks[k].line, toks[k].col)
    binders = ""
    if k > first:
        binders = text[_offset(text, toks[first].line, toks[first].col):colon].strip()
        if "--" in binders or "/-" in binders:
            return "", "", f"the `{toks[0].text}` header's binders hold a comment; remove it, or {usage}"
    if not text[colon + 1:].strip():
        return "", "", f"the `{toks[0].text}` header has no type after its `:`; {usage}"
    rest = "".join(c if c == "\n" else " " for c in text[:colon + 1]) + text[colon + 1:]
    return binders, rest, None
