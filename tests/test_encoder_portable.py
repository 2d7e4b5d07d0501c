"""The int8 query encoder computes the same vectors on every x86 CPU.

onnxruntime's fast uint8 x int8 kernel on CPUs without VNNI (AVX2; AVX-512 before Cascade Lake) adds
pairs of products in 16 bits, which saturate. Without ``session.x64quantprecision`` the default bundle's
encoder gives a query vector at cosine ~.99 to the exact one there, and other hits (informal-dev hybrid
MRR@20 .563 against .587). ``mathlas.encoder.onnx_session`` asks for the exact kernel on such CPUs
(``int8_kernel_saturates``). The test runs the encoder natively and under ``qemu-x86_64 -cpu Haswell-v4``
(an AVX2 CPU without VNNI, whose CPUID qemu emulates; .ci/run installs Debian's qemu-user) and compares
the vectors, with and without mathlas's session options, so that it shows both the fault and its fix on
whatever CPU runs it.
"""
from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys

import numpy as np
import pytest

from mathlas.encoder import int8_kernel_saturates, onnx_session

QUERIES = ["a finitely generated module M over a local ring with M = mM is zero",
           "every bounded monotone sequence of real numbers converges",
           "Nat.Prime p → p ∣ a * b → p ∣ a ∨ p ∣ b"]

# the vectors of QUERIES from mathlas's own session (exact: True) or a plain onnxruntime session
ENCODE = r"""
import json, sys
import numpy as np
from mathlas.encoder import Encoder, int8_kernel_saturates
enc = Encoder(sys.argv[1], threads=1)
if sys.argv[2] == "plain":  # the session as onnxruntime makes it by default
    import onnxruntime as ort
    import mathlas.encoder
    mathlas.encoder.onnx_session = lambda model, *a: ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
print(json.dumps({"saturates": int8_kernel_saturates(), "vectors": enc.encode_queries(json.loads(sys.argv[3])).tolist()}))
"""


def test_the_session_asks_for_the_exact_kernel_where_the_fast_one_saturates(encoder_dir):
    session = onnx_session(encoder_dir / "model.onnx", threads=1)
    options = session.get_session_options()
    if int8_kernel_saturates():
        assert options.get_session_config_entry("session.x64quantprecision") == "1"
    else:  # VNNI: the fast kernel is exact, and the exact one would cost 1.5x
        with pytest.raises(RuntimeError, match="does not have configuration"):
            options.get_session_config_entry("session.x64quantprecision")


def _vectors(argv: list[str], encoder_dir, mode: str) -> tuple[bool, np.ndarray]:
    p = subprocess.run([*argv, sys.executable, "-c", ENCODE, str(encoder_dir), mode, json.dumps(QUERIES)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    return got["saturates"], np.array(got["vectors"], dtype=np.float32)


@pytest.mark.slow  # seconds on its own (conftest: the fast lane leaves it out)
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 kernels: this is not an x86 machine")
def test_an_avx2_cpu_without_vnni_gets_the_same_vectors(encoder_dir):
    qemu = shutil.which("qemu-x86_64")
    if not qemu:
        pytest.skip("qemu-x86_64 not found (Debian's qemu-user; .ci/run installs it)")
    haswell = [qemu, "-cpu", "Haswell-v4"]
    _, here = _vectors([], encoder_dir, "exact")
    saturates, there = _vectors(haswell, encoder_dir, "exact")
    assert saturates  # qemu's Haswell has no VNNI: mathlas asks for the exact kernel there
    assert np.abs(here - there).max() < 1e-5
    # what the option prevents: without it, the emulated AVX2 CPU's vectors are not the exact ones
    _, plain_there = _vectors(haswell, encoder_dir, "plain")
    assert float((plain_there * here).sum(axis=1).min()) < 0.9999
