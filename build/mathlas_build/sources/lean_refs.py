"""References between Lean declarations, recovered from source text (no elaborator, no types).

Two halves, used by ``lean.read``:

* ``identifiers(region, signature, variables)``: the identifier tokens of a declaration's masked text
  (signature and body: from the declaration name to the start of the next command), minus Lean
  keywords, common tactic names, the ``variable`` names in scope and the names the declaration binds
  itself (signature binders and the words after ``fun``/``intro``/``∀``/``obtain``/``have``... ; a cheap
  approximation of local scope: a local that shadows a global would otherwise become a false edge).
* ``Resolver``: resolves a token against the set of every emitted name the way Lean's
  ``resolveGlobalName`` does, in this order: (1) the enclosing namespaces, innermost first, plus the
  namespace of the declaration's own dotted name (``theorem Foo.bar`` elaborates inside ``Foo``);
  protected names are not reachable by an atomic token this way; (2) ``_root_.x`` exactly; (3) the
  root name ``x``, the namespaces opened by ``open X`` (scoped to the enclosing section/namespace) and
  ``open X in``, and ``export`` aliases; (4) if nothing matched, the last component is dropped and
  treated as a projection / dot call (``Nat.succ_le.mpr`` -> ``Nat.succ_le``), as Lean does.
  A ``private`` name is seen only from its own file, and names of a top folder no other folder
  imports (``Archive``, ``Counterexamples``) only from that folder (``import`` lines, first component).

Not resolved (skipped, never guessed): dot notation on local values (``h.two_le`` needs the type of
``h``), leading-dot names (``.inl``), notation (``ℕ``, ``∑``, ``≤``), the types of ``variable`` binders
(a section variable ``[Group G]`` used by a declaration gives no edge to ``Group``); ``open X (a b)`` /
``hiding`` / ``renaming`` are treated as opening all of ``X``.
"""
from __future__ import annotations

import re
import sys

# A Lean identifier: letters (Unicode), digits, _ ' ! ?, dotted components; «» escapes.
# A leading "." is matched (and the token dropped) instead of a look-behind, which is slower.
TOKEN = re.compile(r"\.?(?:«[^»\n]*»|[^\W\d])(?:[\w'!?]|«[^»\n]*»|\.(?=[^\W\d]|«))*")

KEYWORDS = frozenset("""
fun by have show from at with then else if let match do return in using only Type Prop Sort where calc
obtain suffices this fun_prop theorem lemma def instance structure class inductive abbrev example
mutual end namespace section open export variable universe deriving extends termination_by
decreasing_by nomatch nofun forall exists sorry admit True False
intro intros rintro refine refine' exact exacts apply rw rwa rewrite erw simp simp_all simpa simp_rw dsimp
norm_num ring ring_nf linarith nlinarith positivity omega decide aesop ext congr constructor cases
rcases induction use left right split_ifs by_cases by_contra push_neg contrapose field_simp gcongr
norm_cast push_cast exact_mod_cast assumption tauto trivial rfl infer_instance inferInstance
specialize generalize subst symm trans change unfold delta conv filter_upwards choose lift set
nth_rw nth_rewrite calc_tac first try repeat iterate all_goals any_goals on_goal case next focus
exfalso contradiction absurd fin_cases interval_cases mono bound continuity measurability fun_prop
refine_lift letI haveI classical clear rename_i revert wlog peel convert convert_to apply_fun
replace swap rotate pick_goal show_term library_search exact? apply? simp? aesop? says
abel group noncomm_ring module linear_combination polyrith compute_degree monicity norm_fin
decide! native_decide simp_arith norm_num1 ac_rfl cc itauto split unfold_let zify qify push_neg
split_ands refine_struct_tac tfae_have tfae_finish rsuffices borelize measurability?
""".split())

# Words after these keywords name locals (binders), not globals.
_BINDS = re.compile(r"(?=[fircohlsgebλ∀∃])(?:fun|intros?|rintro|obtain|have|let|set|choose|with|generalizing"
                    r"|ext|funext|by_contra!?"
                    r"|cases'|[λ∀∃]!?)(?=[ \t(⟨])")  # no leading look-behind: keeps the literal-prefix scan fast
_BOUND = re.compile(r"(?:[ \t]+(?:[^\W\d][\w'!?]*|⟨[^⟩\n]*⟩|_"
                    r"|\([^\W\d][\w'!?]*(?:\s+[^\W\d][\w'!?]*)*\s*:))+")
_BINDER_NAMES = re.compile(r"[({⦃\[]\s*((?:[^\W\d][\w'!?]*\s+)*[^\W\d][\w'!?]*)\s*:(?!=)")
_SIMPLE = re.compile(r"[^\W\d][\w'!?]*")


def binder_names(text: str) -> set[str]:
    """Names bound by the ``(a b : T)`` / ``{x : T}`` / ``[inst : C]`` groups of a header or ``variable``."""
    out: set[str] = set()
    for m in _BINDER_NAMES.finditer(text):
        out.update(m.group(1).split())
    return out


def identifiers(region: str, signature: str = "", variables: set[str] = frozenset()) -> tuple[str, ...]:
    """Distinct candidate identifier tokens of a masked declaration text, locals (its binders, the
    ``variable`` names in scope) and keywords removed."""
    toks = set(TOKEN.findall(region))
    if not toks:
        return ()
    local = binder_names(signature or region)
    for m in _BINDS.finditer(region):
        st = m.start()
        if st and (region[st - 1].isalnum() or region[st - 1] in "_'.!?"):
            continue
        b = _BOUND.match(region, m.end())
        if b:
            local.update(_SIMPLE.findall(b.group()))
    toks -= KEYWORDS
    toks -= local
    toks -= variables
    return tuple(sys.intern(t) for t in toks if t[0] not in ".λΠΣ_" or t.startswith("_root_."))


def namespace_levels(ns: str) -> tuple[str, ...]:
    """``A.B.C`` -> ``("A.B.C", "A.B", "A")`` (innermost first); ``""`` -> ``()``."""
    if not ns:
        return ()
    parts = ns.split(".")
    return tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))


def open_candidates(ns: str, opened: str) -> list[str]:
    """Namespaces ``open X`` may mean inside ``ns``: ``ns.X`` for every enclosing level, then ``X``."""
    opened = opened.removeprefix("_root_.")
    return [f"{lvl}.{opened}" for lvl in namespace_levels(ns)] + [opened]


class Resolver:
    """Resolves identifier tokens against the global table of emitted names (see the module docstring)."""

    def __init__(self, names: set[str], protected: set[str], aliases: dict[str, str],
                 owner: dict[str, str] | None = None, visible: dict[str, frozenset] | None = None):
        """``owner``: name -> the only scope that sees it (``f:<file>`` for a private declaration,
        ``t:<top folder>`` for a folder other folders do not import, like ``Archive``); ``visible``:
        top folder -> the ``t:`` scopes its files import."""
        self.names = names
        self.protected = protected
        self.aliases = aliases
        self.owner = owner or {}
        self.visible = visible or {}
        self.namespaces: set[str] = set()
        self.tails: set[str] = set()  # every dot-suffix of every name: a token outside it cannot resolve
        self._add_namespaces(names)
        self._add_namespaces(aliases)
        self._contexts: dict[tuple, tuple[tuple[str, ...], tuple[str, ...], dict]] = {}
        self.tokens = 0
        self.resolved_tokens = 0

    def _add_namespaces(self, names) -> None:
        tails = self.tails
        for n in names:
            tails.add(n)
            j = n.find(".")
            while j > 0:
                tails.add(n[j + 1:])
                j = n.find(".", j + 1)
            i = n.rfind(".")
            while i > 0:
                p = n[:i]
                if p in self.namespaces:
                    break
                self.namespaces.add(p)
                i = n.rfind(".", 0, i)

    def add(self, names) -> None:
        """Add names to the table (generated ones known late); forgets every cached resolution."""
        names = list(names)
        self.names.update(names)
        self._add_namespaces(names)
        self._contexts.clear()

    def _get(self, name: str, atomic: bool, vis: frozenset) -> str | None:
        if name in self.names:
            if atomic and name in self.protected:
                return None
            o = self.owner.get(name)
            return name if o is None or o in vis else None
        return self.aliases.get(name)

    def context(self, ns: str, opens: tuple[str, ...], file: str = ""):
        """(namespace levels, opened namespaces that exist, visible scopes, per-context cache) of a
        declaration in ``file``, shared by equal contexts."""
        key = (ns, opens, file)
        ctx = self._contexts.get(key)
        if ctx is None:
            opened = tuple(dict.fromkeys(o for o in opens if o in self.namespaces))
            top = file.split("/", 1)[0]
            vis = frozenset({f"f:{file}", f"t:{top}"}) | self.visible.get(top, frozenset())
            ctx = (namespace_levels(ns), opened, vis, {})
            self._contexts[key] = ctx
        return ctx

    def resolve(self, token: str, ctx) -> tuple[str, ...]:
        """Every name ``token`` may denote in ``ctx`` (usually one; () when unresolved)."""
        levels, opened, vis, cache = ctx
        hit = cache.get(token)
        if hit is not None:
            return hit
        out: list[str] = []
        ident = token
        tails = self.tails
        while ident:
            if ident not in tails and not ident.startswith("_root_."):
                cut = ident.rfind(".")
                ident = ident[:cut] if cut > 0 else ""
                continue
            atomic = "." not in ident
            if ident.startswith("_root_."):
                r = self._get(ident[7:], False, vis)
                if r:
                    out.append(r)
                break
            for lvl in levels:
                r = self._get(f"{lvl}.{ident}", atomic, vis)
                if r:
                    out.append(r)
            if out:
                break
            r = self._get(ident, False, vis)
            if r:
                out.append(r)
            for o in opened:
                r = self._get(f"{o}.{ident}", atomic, vis)
                if r:
                    out.append(r)
            if out:
                break
            cut = ident.rfind(".")
            ident = ident[:cut] if cut > 0 else ""
        res = tuple(dict.fromkeys(out))
        cache[token] = res
        return res

    def dependencies(self, tokens, ctx, own: str) -> list[str]:
        """Sorted full names the tokens resolve to, without ``own``; counts tokens for the stats."""
        deps: set[str] = set()
        for t in tokens:
            r = self.resolve(t, ctx)
            self.tokens += 1
            if r:
                self.resolved_tokens += 1
                deps.update(r)
        deps.discard(own)
        return sorted(deps)
