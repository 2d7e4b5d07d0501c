"""LaTeX -> readable words for retrieval text.  (STUB: to be replaced by the full implementation.)

API (stable, used by every source reader):
    Macros = dict[str, tuple[int, str]]      # macro name without backslash -> (number of args, replacement)
    parse_macros(tex) -> Macros              # \\newcommand, \\renewcommand, \\providecommand, \\def, \\DeclareMathOperator
    latex_to_text(tex, macros=None) -> str   # expand macros, drop markup, keep words and symbol names
"""
from __future__ import annotations

import re

Macros = dict[str, tuple[int, str]]


def parse_macros(tex: str) -> Macros:
    return {}


def latex_to_text(tex: str, macros: Macros | None = None) -> str:
    text = re.sub(r"%.*", " ", tex)
    text = re.sub(r"\\(begin|end)\{[^}]*\}", " ", text)
    text = re.sub(r"\\label\{[^}]*\}", " ", text)
    text = re.sub(r"\\([A-Za-z]+)", r" \1 ", text)
    text = re.sub(r"[{}$\\]", " ", text)
    return re.sub(r"\s+", " ", text).strip()
