"""Text folding shared by the ranking's comparisons of names and words."""
from __future__ import annotations

import unicodedata


def strip_accents(text: str) -> str:
    """``text`` without its accents (NFKD, combining marks dropped): ``Gödel`` -> ``Godel``."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
