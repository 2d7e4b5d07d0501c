"""The TheoremSearch reader on a small parquet fixture in the dataset's schema, and a real bundle built from it.

``write_dataset`` writes ``theorem.parquet``, ``theorem_slogan.parquet`` and ``paper.parquet`` with
pyarrow in the schema documented in ``mathlas_build.sources.theoremsearch``; ``build_papers_bundle``
builds a bundle from them with the real pipeline: conftest.py's session fixtures ``papers_bundle_dir``
and ``papers`` (test_paper_filters.py, test_priors.py, the web tests).
"""
from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest

from conftest import by_id

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from mathlas_build.sources import reader  # noqa: E402
from mathlas_build.sources import theoremsearch as ts  # noqa: E402

# paper_id, title, authors, primary, categories, citations (as the file holds it), last_updated, journal_ref
PAPERS = [
    ("2101.00001", "Finitely generated modules over local rings", ["Jean-Pierre Serre", "Ana García"],
     "math.AC", ["math.AC", "math.AG"], "120.0", dt.datetime(2021, 3, 1), "J. Algebra 12 (2021) 1-20"),
    ("math/0601001", "Sylow subgroups of finite groups", ["Terence Tao"],
     "math.GR", ["math.GR"], None, dt.datetime(2006, 1, 9), None),
    ("1905.01234", "Compactness in metric spaces", ["Émile Borel", "Ben Green"],
     "math.GN", ["math.GN", "math.FA"], "None", dt.datetime(2019, 5, 2), "  "),
    ("2202.05555", "Nakayama's lemma revisited", ["Maria Rossi"],
     "math.AC", ["math.AC"], "3", dt.datetime(2022, 2, 7), "Ann. of Math. 190 (2022)"),
    ("1801.00042", "Bounded gaps between primes", ["Terence Tao", "Ben Green"],
     "math.NT", ["math.NT"], "5000.0", dt.datetime(2018, 1, 1), "Acta Math. 220 (2018)"),
    ("2301.11111", "Neural theorem proving for modules", ["Alice Smith"],
     "cs.LG", ["cs.LG", "math.AC"], "7.0", dt.datetime(2023, 1, 20), None),
]
# theorem_id, paper_id, name, body, label, link
THEOREMS = [
    (1, "2101.00001", "Theorem 1.1", r"Let $M$ be a finitely generated module over a local ring $(R,\mathfrak m)$. "
     r"If $\mathfrak m M = M$ then $M = 0$.", "thm:nak", None),
    (2, "2101.00001", "Lemma 2.3", r"Every finitely generated projective module over a local ring is free.",
     "lem:free", "https://arxiv.org/abs/2101.00001#lem2.3"),
    (3, "2101.00001", "", r"A regular local ring is a domain.", None, None),
    (4, "math/0601001", "Theorem 1", r"Let $G$ be a finite group and $p^k$ the largest power of $p$ dividing "
     r"$|G|$. Then $G$ has a subgroup of order $p^k$, and all such subgroups are conjugate.", "thm:sylow", None),
    (5, "math/0601001", "Corollary 2", r"The number of Sylow $p$-subgroups divides $|G|$ and is $1 \bmod p$.",
     None, None),
    (6, "1905.01234", "Theorem A", r"A metric space is compact if and only if it is complete and totally bounded.",
     None, None),
    (7, "1905.01234", "Proposition 3.2", r"A closed subset of a compact space is compact.", "prop:closed", None),
    (8, "2202.05555", "Theorem 1", r"Let $M$ be a finitely generated $R$-module and $I$ an ideal contained in "
     r"the Jacobson radical with $IM = M$; then $M = 0$.", None, None),
    (9, "2202.05555", "Theorem 1", r"A duplicate name in the same paper (the reader falls back to the id).",
     None, None),
    (10, "1801.00042", "Theorem 1.2", r"There are infinitely many pairs of primes differing by at most 246.",
     "thm:gaps", None),
    (11, "1801.00042", "Lemma 4.1", r"The primes contain arbitrarily long arithmetic progressions.", None, None),
    (12, "2301.11111", "Definition 1", r"A module is finitely generated if it is a quotient of $R^n$.", None, None),
    (13, "2301.11111", "Theorem 5", "   ", None, None),  # empty body: skipped
    (14, "9999.99999", "Theorem 1", r"A theorem whose paper is missing from paper.parquet.", None, None),
]
# theorem_id, model, prompt_id, slogan
SLOGANS = [
    (1, "DeepSeek-V3.1", "body-only-v1", "Nakayama's lemma: a finitely generated module M over a local ring "
     "with mM = M is zero."),
    (1, "gemini", "v0", "An older slogan the reader must not pick when slogan_model is DeepSeek-V3.1."),
    (2, "DeepSeek-V3.1", "body-only-v1", "Finitely generated projective modules over local rings are free."),
    (3, "DeepSeek-V3.1", "body-only-v1", "Regular local rings are integral domains."),
    (4, "DeepSeek-V3.1", "body-only-v1", "Sylow theorems: Sylow p-subgroups exist and are all conjugate."),
    (5, "DeepSeek-V3.1", "body-only-v1", "Counting Sylow p-subgroups: their number divides the group order "
     "and is one modulo p."),
    (6, "DeepSeek-V3.1", "body-only-v1", "Compactness of metric spaces: compact means complete and "
     "totally bounded."),
    (7, "DeepSeek-V3.1", "body-only-v1", "Closed subsets of compact spaces are compact."),
    (8, "DeepSeek-V3.1", "body-only-v1", "Nakayama's lemma for ideals in the Jacobson radical: IM = M forces "
     "M = 0 for finitely generated modules."),
    (10, "DeepSeek-V3.1", "body-only-v1", "Bounded gaps between primes: infinitely many prime pairs at "
     "distance at most 246."),
    (11, "DeepSeek-V3.1", "body-only-v1", "Green-Tao theorem: the primes contain arbitrarily long "
     "arithmetic progressions."),
    (12, "DeepSeek-V3.1", "body-only-v1", "Definition of a finitely generated module as a quotient of a "
     "free module of finite rank."),
]


def write_dataset(root: Path, *, citations_as: str = "string", rename_body: str | None = None) -> Path:
    """The three parquet files in the dataset's schema. ``citations_as``: "string" (floats as text,
    nulls and "None" mixed, as the published file has them) or "float" (NaN and nulls)."""
    root.mkdir(parents=True, exist_ok=True)
    cit = [p[5] for p in PAPERS]
    if citations_as == "float":
        cit_arr = pa.array([float(c) if c not in (None, "None") else (math.nan if c == "None" else None)
                            for c in cit], pa.float64())
    else:
        cit_arr = pa.array(cit, pa.string())
    pq.write_table(pa.table({
        "paper_id": [p[0] for p in PAPERS], "title": [p[1] for p in PAPERS],
        "authors": pa.array([p[2] for p in PAPERS], pa.list_(pa.string())),
        "link": [f"https://arxiv.org/abs/{p[0]}" for p in PAPERS],
        "last_updated": pa.array([p[6] for p in PAPERS], pa.timestamp("us", tz="UTC")),
        "summary": ["abstract" for _ in PAPERS], "journal_ref": pa.array([p[7] for p in PAPERS], pa.string()),
        "primary_category": [p[3] for p in PAPERS],
        "categories": pa.array([p[4] for p in PAPERS], pa.list_(pa.string())), "citations": cit_arr,
    }), root / "paper.parquet")
    pq.write_table(pa.table({
        "theorem_id": pa.array([t[0] for t in THEOREMS], pa.int64()), "paper_id": [t[1] for t in THEOREMS],
        "name": [t[2] for t in THEOREMS], rename_body or "body": [t[3] for t in THEOREMS],
        "label": pa.array([t[4] for t in THEOREMS], pa.string()), "link": pa.array([t[5] for t in THEOREMS], pa.string()),
        "parsing_method": ["plastex" for _ in THEOREMS],
    }), root / "theorem.parquet")
    pq.write_table(pa.table({
        "slogan_id": pa.array(range(100, 100 + len(SLOGANS)), pa.int64()),
        "theorem_id": pa.array([s[0] for s in SLOGANS], pa.int64()), "model": [s[1] for s in SLOGANS],
        "prompt_id": [s[2] for s in SLOGANS], "slogan": [s[3] for s in SLOGANS],
    }), root / "theorem_slogan.parquet")
    return root


PAPERS_RECIPE = """
name = "papers"
version = "0.1.0"
[encoder]
path = "{encoder}"
[options]
batch_size = 16
threads = 2
[fusion]
k_rrf = 60
priors = {{ recency = {{ column = "year", transform = "identity", weight = 0.0 }} }}
[[sources]]
reader = "theoremsearch"
path = "{data}"
options = {{ slogan_model = "DeepSeek-V3.1" }}
"""


def build_papers_bundle(tmp_path_factory, encoder_dir: Path) -> Path:
    """A real bundle from the fixture (conftest.py's ``papers_bundle_dir`` builds it once per session)."""
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    base = tmp_path_factory.mktemp("papers")
    data = write_dataset(base / "theorem-search-dataset")
    recipe = base / "papers.toml"
    recipe.write_text(PAPERS_RECIPE.format(encoder=encoder_dir.as_posix(), data=data.as_posix()), encoding="utf-8")
    return build(load_recipe(recipe, base), base / "papers-0.1.0", cache_dir=None, quiet=True)


# ------------------------------------------------------------------------------ the reader

def test_citations_cell_values():
    assert ts.citations(12.0) == 12 and ts.citations("120.0") == 120 and ts.citations("7") == 7 and ts.citations(0) == 0
    for v in (None, "None", "none", "", " ", math.nan, float("inf"), "n/a", -1, True):
        assert ts.citations(v) is None, v


def test_kind_and_year_helpers():
    assert [ts.kind_of(n) for n in ("Theorem 3.1", "Lemma", "Prop. 2", "Corollary A", "Main result", "")] == \
        ["theorem", "lemma", "proposition", "corollary", "statement", "statement"]
    assert ts.year_of(dt.datetime(2019, 5, 2)) == 2019 and ts.year_of("2006-01-09T00:00:00") == 2006
    assert ts.year_of(None) is None and ts.year_of("no date") is None and ts.year_of(2004) == 2004


@pytest.mark.parametrize("citations_as", ["string", "float"])
def test_reader_documents(tmp_path, citations_as):
    root = write_dataset(tmp_path / "ds", citations_as=citations_as)
    docs = by_id(list(reader("theoremsearch").read(root, slogan_model="DeepSeek-V3.1")), "theoremsearch")
    assert len(docs) == 13  # 14 rows, one with an empty body
    d = docs["arxiv:2101.00001#Theorem 1.1"]
    assert (d.source, d.kind, d.name, d.title) == ("arxiv", "theorem", "Theorem 1.1",
                                                   "Finitely generated modules over local rings")
    assert d.slogan.startswith("Nakayama's lemma: a finitely generated module")  # the preferred model's slogan
    assert r"\mathfrak m M = M" in d.body and "finitely generated module" in d.statement
    assert d.link == "https://arxiv.org/abs/2101.00001" and d.license == "CC-BY-SA-4.0"
    assert d.extra["paper_id"] == "2101.00001" and d.extra["label"] == "thm:nak"
    assert d.extra["authors"] == ["Jean-Pierre Serre", "Ana García"]
    assert d.extra["categories"] == ["math.AC", "math.AG"] and d.extra["year"] == 2021
    assert d.extra["citations"] == 120 and d.extra["journal_ref"] == "J. Algebra 12 (2021) 1-20"
    assert docs["arxiv:2101.00001#Lemma 2.3"].link == "https://arxiv.org/abs/2101.00001#lem2.3"  # the theorem's own link
    assert docs["arxiv:2101.00001#3"].name == "" and docs["arxiv:2101.00001#3"].kind == "statement"  # no name: the id
    assert "arxiv:2202.05555#Theorem 1" in docs and "arxiv:2202.05555#9" in docs  # a repeated name: the id
    assert docs["arxiv:2202.05555#9"].slogan == ""  # no slogan row: retrieval text falls back to the statement
    sylow = docs["arxiv:math/0601001#Theorem 1"]
    assert sylow.extra["citations"] is None and sylow.extra["journal_ref"] is None and sylow.extra["year"] == 2006
    assert docs["arxiv:1905.01234#Theorem A"].extra["citations"] is None  # the string "None" (or NaN)
    assert docs["arxiv:1905.01234#Theorem A"].extra["journal_ref"] is None  # blank journal_ref
    assert docs["arxiv:2301.11111#Definition 1"].kind == "definition"
    orphan = docs["arxiv:9999.99999#Theorem 1"]
    assert orphan.title == "" and orphan.link == "https://arxiv.org/abs/9999.99999" and "authors" not in orphan.extra


def test_reader_slogan_choice_and_columns(tmp_path):
    root = write_dataset(tmp_path / "ds", rename_body="statement")
    with pytest.raises(ValueError, match="no column 'body'.*theorem_columns"):
        list(ts.read(root))
    docs = by_id(list(ts.read(root, theorem_columns={"body": "statement"})), "theoremsearch")
    # without slogan_model: the first slogan in file order
    assert docs["arxiv:2101.00001#Theorem 1.1"].slogan.startswith("Nakayama's lemma")
    docs = by_id(list(ts.read(root, theorem_columns={"body": "statement"}, slogan_model="gemini")), "theoremsearch")
    assert docs["arxiv:2101.00001#Theorem 1.1"].slogan.startswith("An older slogan")
    assert docs["arxiv:2101.00001#Lemma 2.3"].slogan == ""
    with pytest.raises(ValueError, match="no key nope"):
        list(ts.read(root, theorem_columns={"nope": "x"}))
    with pytest.raises(FileNotFoundError, match="download the dataset"):
        list(ts.read(tmp_path / "empty"))


def test_recipe_gets_the_citation_prior(tmp_path, encoder_dir):
    from mathlas_build.recipe import RecipeError, load_recipe

    data = write_dataset(tmp_path / "ds")
    path = tmp_path / "r.toml"
    path.write_text(PAPERS_RECIPE.format(encoder=encoder_dir.as_posix(), data=data.as_posix()), encoding="utf-8")
    fusion = load_recipe(path, tmp_path).raw["fusion"]
    assert fusion["k_rrf"] == 60
    assert fusion["priors"] == {"citations": {"column": "citations", "transform": "log1", "weight": 0.0},
                                "recency": {"column": "year", "transform": "identity", "weight": 0.0}}
    path.write_text(path.read_text().replace('transform = "identity"', 'transform = "square"'), encoding="utf-8")
    with pytest.raises(RecipeError, match="fusion.priors.recency"):
        load_recipe(path, tmp_path)


# ------------------------------------------------------------------------------ the bundle

def test_bundle_has_paper_columns_and_prior(papers):
    from mathlas.bundle import PAPER_COLUMNS

    assert set(PAPER_COLUMNS) <= set(papers.table.column_names)
    assert papers.table.schema.field("citations").type == pa.int64()
    assert papers.table.schema.field("authors").type == pa.list_(pa.string())
    assert papers.priors["citations"] == {"column": "citations", "transform": "log1", "weight": 0.0}
    assert papers.manifest.sources["arxiv"]["license"] == "CC-BY-SA-4.0"
    doc = papers.get("arxiv:1801.00042#Lemma 4.1")
    assert doc.fields["authors"] == ["Terence Tao", "Ben Green"] and doc.fields["citations"] == 5000
    assert doc.text.startswith("Lemma 4.1. Green-Tao theorem")  # the slogan leads the retrieval text
    hits = papers.search("Sylow subgroups conjugate", k=3)
    assert hits[0].id == "arxiv:math/0601001#Theorem 1"
