"""The numeric tools: identify_constant, verify_numeric, conjecture_relation.

Airtight or nothing: every claim these tools make is re-checked by an independent high-precision
evaluation, inputs are parsed by a whitelist parser (never ``eval``), and the heavy work runs in a
worker process that is killed when its time bound runs out. Importing this package is light: mpmath and
sympy load in the workers, but they must be installed (the numeric extra): without them importing
this package raises ``mathlas.extras.MissingExtra``, and the MCP server lists no numeric tool.
"""
from mathlas.extras import require

require("numeric", "mathlas.tools.numeric")

from .conjecture import ConjectureResult, Relation, conjecture_relation
from .identify import Candidate, IdentifyResult, identify_constant
from .verify import VerifyResult, verify_numeric

__all__ = ["identify_constant", "IdentifyResult", "Candidate", "verify_numeric", "VerifyResult",
           "conjecture_relation", "ConjectureResult", "Relation"]
