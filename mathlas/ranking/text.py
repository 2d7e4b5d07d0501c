"""Text folding shared by the ranking's comparisons of names and words."""
from __future__ import annotations

import unicodedata


def strip_accents(text: str) -> str:
    """``text`` without its accents (NFKD, combining marks dropped): ``Gödel`` -> ``Godel``."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


# English plural endings and their singular's, the first that ends a word applies ("ss", "us", "is" and
# "series" end singular words)
_PLURALS = (("series", "series"), ("ies", "y"), ("ves", "f"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"),
            ("shes", "sh"), ("ss", "ss"), ("us", "us"), ("is", "is"), ("s", ""))


def singular(word: str) -> str:
    """An English plural's singular by its ending: categories, sheaves, classes, series (a rule, not a
    dictionary: matrices gives matrice); a word of three letters or fewer, or not ending so, as is."""
    if len(word) <= 3:
        return word
    for end, to in _PLURALS:
        if word.endswith(end):
            return word[:len(word) - len(end)] + to
    return word
