"""What a recipe may say, checked when it is read, before any reading or embedding.

A value the bundle carries into its manifest (``[options]``, ``[fusion]``) is read by every search;
a wrong one makes a bundle that verifies and packs but breaks each query. So the whole recipe is
checked at once: every table and key must be a known one (a misspelt ``[optoins]`` or ``[[source]]``
would otherwise be dropped without a word and the build would go on with the defaults), and every
value must have the type and range the runtime reads. Each problem is one ``RecipeError`` line that
names the file and the key.

``check_name`` also serves ``build-lean --name/--version``: a bundle's name and version become a
folder name (``<name>-<version>``), so they may not leave the bundles folder.
"""
from __future__ import annotations

import math
import re
from typing import Any

from mathlas import bundle as fmt

# The known keys of each table (docs/building.md, recipe.py's docstring). ``vector_store`` is an old
# option that no longer does anything: accepted so that old recipes still read.
TOP_KEYS = ("name", "version", "description", "encoder", "options", "fusion", "ranker", "reranker", "sources")
ENCODER_KEYS = ("path", "release", "releases", "carry", "sha256", "license", "document_model",
                "from_release")  # from_release: the manifest's record of a recipe, read back as a recipe
OPTION_KEYS = ("batch_size", "threads", "chunk", "max_batch_tokens", "lexical_boosts", "lexical_symbols",
               "binary_codes", "lexical_identifiers", "vector_store")
FUSION_KEYS = ("k_rrf", "weights", "priors", "definition_intent", "kind_weights", "match", "short_query_repeat")
FUSION_CHANNELS = ("lexical", "dense")        # mathlas.ranking.plan's channels
MATCH_MODES = ("hybrid", "dense", "lexical", "learned")  # mathlas.ranking.confidence.FEATURES
MATCH_KEYS = ("weights", "bias", "none_below", "strong_at")
RANKER_KEYS = ("model", "sha256", "license")
RERANKER_KEYS = ("path", "top_n", "default")
SOURCE_KEYS = ("reader", "path", "limit", "options")

# A bundle's name or version: it becomes part of a folder name and an archive name
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
NAME_MAX = 100


def name_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a bundle's name or version (None when it can)."""
    if not isinstance(value, str) or not value:
        return "must be a non-empty string"
    if len(value) > NAME_MAX:
        return f"is longer than {NAME_MAX} characters"
    if ".." in value or not _SAFE.fullmatch(value):
        return ("may hold only letters, digits and . _ + - (starting with a letter or digit, no '..', "
                "no '/' or '\\'): it becomes the folder name <name>-<version>")
    return None


def check_name(value: Any, what: str) -> str:
    """``value`` as a bundle name or version, or ``ValueError`` naming ``what`` and the rule."""
    why = name_problem(value)
    if why is not None:
        raise ValueError(f"{what} {value!r} {why}")
    return value


def check_recipe(raw: dict[str, Any], where: str) -> None:
    """Every table, key and value of a bundle recipe (``raw``: its parsed TOML), or ``RecipeError``
    naming ``where`` (the file) and the first wrong key. The encoder, ranker and reranker files are
    checked later by ``load_recipe``; the priors by ``recipe._add_priors`` (readers add their own)."""
    from mathlas_build.recipe import RecipeError

    def bad(key: str, message: str) -> RecipeError:
        return RecipeError(f"{where}: {key} {message}")

    _known(raw, TOP_KEYS, "", bad)
    for key in ("name", "version"):
        if key in raw:
            why = name_problem(str(raw[key]) if key == "version" and _is_number(raw[key]) else raw[key])
            if why is not None:
                raise bad(key, f"= {raw[key]!r} {why}")
    if not isinstance(raw.get("description", ""), str):
        raise bad("description", "must be a string")
    for table, keys in (("encoder", ENCODER_KEYS), ("options", OPTION_KEYS), ("fusion", FUSION_KEYS),
                        ("ranker", RANKER_KEYS), ("reranker", RERANKER_KEYS)):
        if table in raw:
            if not isinstance(raw[table], dict):
                raise bad(table, f"must be a table ([{table}])")
            _known(raw[table], keys, f"{table}.", bad)
    _check_options(raw.get("options") or {}, bad)
    _check_fusion(raw.get("fusion") or {}, bad)
    reranker = raw.get("reranker") or {}
    if "top_n" in reranker:
        _integer(reranker["top_n"], "reranker.top_n", bad, 1, 1000)  # mathlas.request.MAX_K
    if "default" in reranker and not isinstance(reranker["default"], bool):
        raise bad("reranker.default", f"must be true or false, not {reranker['default']!r}")
    sources = raw.get("sources")
    if sources is not None:
        if not isinstance(sources, list) or not sources:
            raise bad("sources", "must be one or more [[sources]] tables")
        for i, s in enumerate(sources):
            key = f"sources[{i}]"
            if not isinstance(s, dict):
                raise bad(key, "must be a table ([[sources]])")
            _known(s, SOURCE_KEYS, f"{key}.", bad)
            for k in ("reader", "path"):
                if not isinstance(s.get(k), str) or not s.get(k):
                    raise bad(f"{key}.{k}", "is required: a string")
            if "limit" in s:
                _integer(s["limit"], f"{key}.limit", bad, 0)
            if not isinstance(s.get("options", {}), dict):
                raise bad(f"{key}.options", "must be a table ({ key = value, ... })")


def _known(table: dict, keys: tuple[str, ...], prefix: str, bad) -> None:
    unknown = sorted(set(table) - set(keys))
    if unknown:
        what = "table" if not prefix and isinstance(table.get(unknown[0]), (dict, list)) else "key"
        raise bad(prefix + unknown[0], f"is not a known {what} (known: {', '.join(keys)})")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _number(v: Any, key: str, bad, minimum: float | None = 0.0) -> None:
    if not _is_number(v) or (minimum is not None and v < minimum):
        raise bad(key, f"must be a number{f' >= {minimum:g}' if minimum is not None else ''}, not {v!r}")


def _integer(v: Any, key: str, bad, minimum: int, maximum: int | None = None) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum or (maximum is not None and v > maximum):
        rng = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise bad(key, f"must be an integer {rng}, not {v!r}")


def _choice(v: Any, key: str, choices: tuple[str, ...], bad) -> None:
    if v not in choices:
        raise bad(key, f"must be one of {', '.join(map(repr, choices))}, not {v!r}")


def _check_options(options: dict, bad) -> None:
    for key, minimum in (("batch_size", 1), ("threads", 0), ("chunk", 1), ("max_batch_tokens", 1)):
        if key in options:
            _integer(options[key], f"options.{key}", bad, minimum)
    if "lexical_boosts" in options:
        boosts = options["lexical_boosts"]
        if not isinstance(boosts, dict) or not boosts:
            raise bad("options.lexical_boosts", f"must be a table of fields and boosts, e.g. {{ text = 1.0 }}, "
                                                f"not {boosts!r}")
        for field, w in boosts.items():
            if field not in fmt.LEXICAL_FIELDS:
                raise bad(f"options.lexical_boosts.{field}", f"is not a lexical field (fields: "
                                                             f"{', '.join(fmt.LEXICAL_FIELDS)})")
            _number(w, f"options.lexical_boosts.{field}", bad)
        if not any(w > 0 for w in boosts.values()):
            raise bad("options.lexical_boosts", "must give at least one field a boost above 0 (else a query "
                                                "searches nothing)")
    if "lexical_symbols" in options:
        _choice(options["lexical_symbols"], "options.lexical_symbols", fmt.LEXICAL_SYMBOLS, bad)
    if "binary_codes" in options:
        _choice(options["binary_codes"], "options.binary_codes", fmt.BINARY_CODES, bad)
    if "lexical_identifiers" in options:
        _choice(options["lexical_identifiers"], "options.lexical_identifiers", fmt.LEXICAL_IDENTIFIERS, bad)


def _check_fusion(fusion: dict, bad) -> None:
    if "k_rrf" in fusion:
        _number(fusion["k_rrf"], "fusion.k_rrf", bad)
    if "weights" in fusion:
        weights = fusion["weights"]
        if not isinstance(weights, dict):
            raise bad("fusion.weights", f"must be a table, e.g. {{ lexical = 1.0, dense = 1.0 }}, not {weights!r}")
        for channel, w in weights.items():
            if channel not in FUSION_CHANNELS:
                raise bad(f"fusion.weights.{channel}", f"is not a channel (channels: {', '.join(FUSION_CHANNELS)})")
            _number(w, f"fusion.weights.{channel}", bad)
    if "kind_weights" in fusion:
        kinds = fusion["kind_weights"]
        if not isinstance(kinds, dict):
            raise bad("fusion.kind_weights", f"must be a table of kinds and factors, not {kinds!r}")
        for kind, w in kinds.items():
            _number(w, f"fusion.kind_weights.{kind}", bad)
    if "definition_intent" in fusion:
        spec = fusion["definition_intent"]
        if not isinstance(spec, dict) or not isinstance(spec.get("kinds"), list) \
                or not all(isinstance(k, str) for k in spec["kinds"]):
            raise bad("fusion.definition_intent", "must give kinds = [\"def\", ...], factor and prior_factor")
        _known(spec, ("kinds", "factor", "prior_factor"), "fusion.definition_intent.", bad)
        for key in ("factor", "prior_factor"):
            if key in spec:
                _number(spec[key], f"fusion.definition_intent.{key}", bad)
    if "match" in fusion:
        match = fusion["match"]
        if not isinstance(match, dict):
            raise bad("fusion.match", "must be a table of modes ([fusion.match.hybrid] ...)")
        for mode, model in match.items():
            key = f"fusion.match.{mode}"
            if mode not in MATCH_MODES:
                raise bad(key, f"is not a search mode (modes: {', '.join(MATCH_MODES)})")
            if not isinstance(model, dict):
                raise bad(key, f"must be a table ({', '.join(MATCH_KEYS)})")
            _known(model, MATCH_KEYS, f"{key}.", bad)
            ws = model.get("weights")
            if not isinstance(ws, list) or not ws or not all(_is_number(w) for w in ws):
                raise bad(f"{key}.weights", "must be a list of numbers")
            for k in ("bias", "none_below", "strong_at"):
                if k in model:
                    _number(model[k], f"{key}.{k}", bad, None)
    if "short_query_repeat" in fusion:
        _integer(fusion["short_query_repeat"], "fusion.short_query_repeat", bad, 1, 8)
    if "priors" in fusion and not isinstance(fusion["priors"], dict):
        raise bad("fusion.priors", "must be a table of priors ([fusion.priors.NAME])")
