"""Fixtures for the runtime tests: the CSR SpMM kernel built once per session."""

from __future__ import annotations

import pytest

from sparsetir.runtime import build_stage3, constraints_from_axes
from stage3_kernels import csr_axes, csrmm


@pytest.fixture(scope="session")
def csr_kernel():
    """``csrmm`` compiled for the host CPU with the CSR structure constraints."""
    return build_stage3(csrmm, constraints_from_axes(csr_axes(), set()))
