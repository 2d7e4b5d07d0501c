"""Search filters, resolved once per query and applied inside every channel before its top-k cut."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Filters:
    """``allowed`` is a boolean mask over document keys (None: everything allowed).

    The lexical channel uses the source/kind sets as tantivy term filters; the dense channel uses
    the mask. Both describe the same set of documents.
    """

    include_sources: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    allowed: np.ndarray | None = None

    @property
    def active(self) -> bool:
        return self.allowed is not None

    def allowed_count(self) -> int | None:
        return None if self.allowed is None else int(self.allowed.sum())
