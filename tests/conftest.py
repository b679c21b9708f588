"""Test-wide setup: markers, the Hypothesis profile, and the optional shared data directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

CHECKOUT = Path(__file__).resolve().parents[1]
SHARED_DATA = CHECKOUT.parent / "shared" / "data"

# The suite keeps its compiled kernels in the checkout, not in the user's cache: set before
# sparsetir is imported, and inherited by the processes the tests start. Entries are keyed by
# sparsetir's own source, so an edit never loads a stale kernel.
os.environ["SPARSETIR_CACHE_DIR"] = str(CHECKOUT / ".sparsetir-test-cache")

# Compiling a kernel takes 0.1-0.2 s, and more on a loaded CI machine; Hypothesis's default
# 200 ms deadline would turn that into flaky failures.
settings.register_profile("sparsetir", deadline=None)
settings.load_profile("sparsetir")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: runs a kernel on a CUDA device")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The project's larger matrices in ../shared/data beside the checkout; skips without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent: the larger matrices are not on this machine")
    return SHARED_DATA
