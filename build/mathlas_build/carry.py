"""Carry a built bundle's document vectors into an embedding cache, keyed by their retrieval texts.

A rebuild whose retrieval texts mostly did not change (informal-1.2.0: the display text changed, the
retrieval text of 65k of 65k documents but ~100 did not) need not embed them again, and cannot where the
model that embedded them is gone (1.1.0's documents were embedded with the fp32 export of
minilm-math-v1, which is not kept in the repository; its int8 query model travels in the bundle)::

    python -m mathlas_build.carry OLD_BUNDLE ENCODER_DIR CACHE_DIR

writes one cache segment (``textcache``) under the fingerprint of ``ENCODER_DIR``'s document model, holding
for every document of ``OLD_BUNDLE`` its ``text`` column -> its float vector (``float.i8 x scale``, the
vector the bundle searches with). A build given ``--cache CACHE_DIR`` and that encoder then embeds only the
texts the old bundle did not have. The vectors are the old model's, not ``ENCODER_DIR``'s: keep such a
cache apart from ``work/embed-cache`` (whose vectors are always the fingerprinted model's own) and say in
the recipe that the bundle carries them (build/recipes/informal.toml, docs/building.md).

A recipe whose encoder comes from a release (``[encoder] release = ...``) says ``carry = true`` instead
of running this by hand: the build unpacks the release, carries its vectors into a cache of their own
(``work/carry/<release>/``) and embeds through it (``mathlas_build.pipeline.carry_release``). A text
the release holds then gets back exactly the release's int8 row and scale (``writer.quantize_i8`` of
``q x scale`` gives ``q`` and ``scale`` again), so the rebuilt vectors are the shipped ones.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def carry(bundle_dir: Path, encoder_dir: Path, cache_dir: Path, *, quiet: bool = False) -> int:
    """Add ``bundle_dir``'s (text, vector) pairs to ``cache_dir`` under ``encoder_dir``'s fingerprint;
    returns how many distinct texts were added."""
    import pyarrow.parquet as pq

    from mathlas import bundle as fmt
    from mathlas_build.embed import document_model_fingerprint
    from mathlas_build.textcache import VectorStore, store_directory, text_keys

    bundle_dir = Path(bundle_dir)
    texts = pq.read_table(bundle_dir / fmt.META, columns=["text"]).column("text").to_pylist()
    q = np.load(bundle_dir / fmt.FLOAT_VECTORS, mmap_mode="r")
    scale = np.load(bundle_dir / fmt.FLOAT_SCALES)
    if len(q) != len(texts):
        raise ValueError(f"{bundle_dir}: {len(q)} vectors for {len(texts)} documents")
    vectors = np.asarray(q, dtype=np.float32) * scale[:, None]
    keys = text_keys(texts)
    _, first = np.unique(keys, return_index=True)
    first.sort()
    encoder = _encoder(encoder_dir)
    store = VectorStore(store_directory(cache_dir, document_model_fingerprint(encoder)), vectors.shape[1], quiet=quiet)
    new = first[~store.contains(keys[first])]
    if len(new):
        store.add(keys[new], np.ascontiguousarray(vectors[new]))
    if not quiet:
        print(f"[carry] {len(new):,} vectors of {bundle_dir.name} into {cache_dir} "
              f"({len(first) - len(new):,} already there)", file=sys.stderr)
    return len(new)


def _encoder(encoder_dir: Path):
    from mathlas_build.embed import DocumentEncoder

    return DocumentEncoder(Path(encoder_dir), provider="cpu", quiet=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mathlas_build.carry", description=__doc__.split("\n")[0])
    p.add_argument("bundle", type=Path, help="the built bundle directory whose vectors to carry")
    p.add_argument("encoder", type=Path, help="the encoder directory the new recipe names ([encoder] path)")
    p.add_argument("cache", type=Path, help="the cache directory the new build is given (--cache)")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    carry(a.bundle, a.encoder, a.cache, quiet=a.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
