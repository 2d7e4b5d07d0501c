"""scripts/match_learned.py's choice of the `none` threshold (the default bundle 1.5.1's .22): the lowest
.01 step where the tune split's off-topic answers are `none` often enough and its in-corpus ones seldom
enough, each threshold served rather than read off rounded confidences."""
from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "build"))

import match_learned as M  # noqa: E402


def fake_serve(off_none_at: dict[float, int], in_none_at: dict[float, int], n_off=10, n_in=100):
    """Answers as served at threshold t: the given numbers of off-topic and in-corpus `none`."""
    asked = []

    def serve(t: float):
        asked.append(t)
        off, ins = off_none_at.get(t, 0), in_none_at.get(t, 0)
        return ([("off", "none")] * off + [("off", "weak")] * (n_off - off)
                + [("in", "none")] * ins + [("in", "weak")] * (n_in - ins))
    return serve, asked


def test_the_lowest_step_that_does_both():
    serve, asked = fake_serve({0.18: 7, 0.19: 8, 0.20: 8, 0.21: 9, 0.22: 10}, {0.21: 2, 0.22: 3})
    assert M.choose_none_below(serve, 0.1826) == 0.21 and asked == [0.18, 0.19, 0.20, 0.21]


def test_none_when_in_corpus_none_passes_its_bound_first():
    serve, asked = fake_serve({0.2: 8, 0.21: 8}, {0.2: 3, 0.21: 5})
    assert M.choose_none_below(serve, 0.2) is None and asked == [0.2, 0.21]


def test_the_choice_is_written_with_the_trainers_value_kept(tmp_path):
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"kind": "trees", "match": {"none_below": 0.1826, "strong_at": 0.88}}), encoding="utf-8")
    M.write_none_below(model, 0.22, 0.1826, "rule 1")
    M.write_none_below(model, 0.24, 0.22, "rule 2")
    got = json.loads(model.read_text(encoding="utf-8"))["match"]
    assert got["none_below"] == 0.24 and got["none_below_refit"] == {"was": 0.1826, "rule": "rule 2"}
    assert "\n" not in model.read_text(encoding="utf-8")   # written as the trainer writes it
