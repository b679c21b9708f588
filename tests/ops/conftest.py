"""Fixtures for ``sparsetir.ops`` tests."""

from __future__ import annotations

import pytest
from ops_matrices import MATRICES


@pytest.fixture(params=sorted(MATRICES))
def matrix(request):
    """Each test matrix, float32."""
    return MATRICES[request.param]()

