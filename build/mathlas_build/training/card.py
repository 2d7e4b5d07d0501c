"""The data card of a pair set: ``card.json`` (machine-readable) and ``card.md`` (the same, for people).

It records what the weights trained on these pairs were trained on: the recipe and its hash, the
pairs per kind with the licences of the texts in them (query, positive and negative), the pairs
left out because they touch a dev-set target (per reason and per kind), the sources read (counts,
licences, attribution) and how long the build took. The trainer copies the licences into the
exported ``encoder.json``.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

CARD_JSON, CARD_MD = "card.json", "card.md"


def write_card(recipe, out: Path, pairs: list, built: dict[str, int], excluded: Counter,
               excluded_by_kind: dict[str, Counter], no_negative: Counter, sources: dict[str, dict],
               eval_info: dict, timings: dict, mining: dict | None = None) -> dict:
    from mathlas_build.training.pairs import KINDS

    kinds: dict[str, dict] = {name: {"pairs": 0, "with_negative": 0, "licenses": Counter()} for name in built}
    by_license: Counter = Counter()
    for p in pairs:
        k = kinds.setdefault(p.kind, {"pairs": 0, "with_negative": 0, "licenses": Counter()})
        k["pairs"] += 1
        k["with_negative"] += bool(p.neg_id)
        k["licenses"].update(p.licenses)
        by_license.update(p.licenses)
    card = {
        "name": recipe.name, "version": recipe.version, "recipe": str(recipe.path), "recipe_sha256": recipe.sha256,
        "seed": recipe.seed, "pairs": len(pairs),
        "kinds": {name: {"about": KINDS[name].about, "candidates": built.get(name, 0), "pairs": v["pairs"],
                         "with_negative": v["with_negative"], "licenses": dict(sorted(v["licenses"].items())),
                         "excluded": dict(excluded_by_kind.get(name, {}))}
                  for name, v in kinds.items()},
        "licenses": dict(sorted(by_license.items())),
        "excluded": {"total": sum(excluded.values()), **dict(excluded)},
        "without_negative": dict(no_negative),
        "exclude_files": [p.name for p in recipe.exclude_files],
        "sources": sources,
        "eval": eval_info,
        "timings": timings,
    }
    if mining and mining.get("dense_bundles"):
        card["mining"] = mining
    (out / CARD_JSON).write_text(json.dumps(card, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (out / CARD_MD).write_text(markdown(card), encoding="utf-8")
    return card


def markdown(card: dict) -> str:
    lines = [f"# Training pairs {card['name']}-{card['version']}", "",
             f"Recipe `{card['recipe']}` (sha256 `{card['recipe_sha256'][:16]}…`), seed {card['seed']}: "
             f"**{card['pairs']:,} pairs**. Every pair that touches a target of "
             f"{', '.join(card['exclude_files'])} is left out: **{card['excluded']['total']:,} excluded**.", "",
             "| kind | what | candidates | pairs | with a hard negative | licences of the texts | excluded |",
             "|---|---|---:|---:|---:|---|---:|"]
    for name, k in card["kinds"].items():
        lic = ", ".join(f"{x} {n:,}" for x, n in k["licenses"].items())
        lines.append(f"| `{name}` | {k['about']} | {k['candidates']:,} | {k['pairs']:,} | {k['with_negative']:,} "
                     f"| {lic} | {sum(k['excluded'].values()):,} |")
    lines += ["", "Pairs by licence (a pair counts once for each licence among its query, positive and negative):", ""]
    lines += [f"- {x}: {n:,}" for x, n in card["licenses"].items()]
    lines += ["", "Excluded, by reason:", ""]
    lines += [f"- {why}: {n:,}" for why, n in card["excluded"].items() if why != "total"]
    lines += ["", "| source | documents read | licence | attribution |", "|---|---:|---|---|"]
    lines += [f"| {s} | {v['count']:,} | {v['license']} | {v['attribution']} |" for s, v in card["sources"].items()]
    m = card.get("mining")
    if m:
        lines += ["", f"Hard negatives: {m['dense_share']:.0%} of each kind's pairs mined with the encoder of "
                      f"{', '.join(m['dense_bundles'])} (pools covered: "
                      + ", ".join(f"{p} {c:.0%}" for p, c in m["pool_coverage"].items()) + "), the rest with BM25:", ""]
        lines += [f"- `{k}`: dense {v.get('dense', 0):,}, BM25 {v.get('bm25', 0):,}" for k, v in m["by_kind"].items()]
    lines += ["", f"Build time: {card['timings']}.", ""]
    return "\n".join(lines)
