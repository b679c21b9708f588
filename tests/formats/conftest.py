"""Fixtures for the ``sparsetir.formats`` tests: bundled and shared matrices."""

from __future__ import annotations

import pytest
import scipy.sparse as sp

from sparsetir import data

#: Matrices of ../shared/data used by the round-trip tests (kept few: each is ~300k entries).
SHARED = ("bcsstk16", "rgg_n_2_15_s0")


@pytest.fixture(scope="session", params=("cora", "citeseer", "pubmed"))
def bundled(request) -> tuple[str, sp.csr_matrix]:
    """Each matrix that ships with the package, by name."""
    return request.param, data.load(request.param)


@pytest.fixture(scope="session", params=SHARED)
def shared(request, shared_data_dir) -> tuple[str, sp.csr_matrix]:
    """Each larger matrix of ../shared/data (skipped when that directory is absent)."""
    path = shared_data_dir / f"{request.param}.npz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return request.param, data.load_file(path)
