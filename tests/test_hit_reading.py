"""Reading hits fast gives what reading them plainly gives: a string column's values by key from its
Arrow buffers (``mathlas.engine.StringValues``) and the snippet of a long text."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from mathlas.engine import StringValues
from mathlas.hit import snippet


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_values_by_key_equal_pyarrow_s(kind):
    rng = random.Random(5)
    values = [None if rng.random() < 0.2 else "".join(rng.choice("ab é∑\n") for _ in range(rng.randrange(6)))
              for _ in range(300)]
    whole = pa.array(values, type=kind)
    # chunks that are slices (an offset into their buffers and validity bits), one empty
    column = pa.chunked_array([whole.slice(0, 7), whole.slice(7, 0), whole.slice(7, 120), whole.slice(127)])
    keys = list(range(300)) + [rng.randrange(300) for _ in range(100)]
    assert StringValues(column)(keys) == [column[k].as_py() for k in keys]


def test_a_column_of_another_type_is_refused():
    with pytest.raises(TypeError):
        StringValues(pa.chunked_array([pa.array([1, 2])]))


def test_the_other_spaces_are_what_str_split_splits_on():
    import re
    import sys

    from mathlas.hit import OTHER_SPACES

    spaces = {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()} - {" "}
    assert {c for c in map(chr, range(sys.maxunicode + 1)) if re.fullmatch(f"[{OTHER_SPACES}]", c)} == spaces


def plain_snippet(text, limit):
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[:cut if cut > limit // 2 else limit] + " …"


def test_a_long_texts_snippet_is_the_whole_texts():
    rng = random.Random(11)
    parts = ["a", "bb", "x" * 40, "y" * 300, " ", "   ", "\n", "\t", "\u2003", "\xa0", "é"]
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(0, 300)))
        for limit in (280, 120, 30):
            assert snippet(text, limit) == plain_snippet(text, limit)
    words = ["a", "bb", "x" * 40, "é∑", "y" * 300]
    for _ in range(3000):  # words and single spaces: the beginning is already collapsed
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(0, 120))) + rng.choice(["", " ", "\n x"])
        for limit in (280, 120, 30):
            assert snippet(text, limit) == plain_snippet(text, limit)
    assert snippet(None) == "" and snippet(" " * 5000 + "word") == "word"
