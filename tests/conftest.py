"""Test-wide setup: markers, the Hypothesis profile, the optional shared data directory, and the
seed of the fuzzer's CI budget."""

from __future__ import annotations

import os
from datetime import datetime, timezone
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fuzz-seed", type=int, default=None, metavar="N",
                     help="seed of the fuzzer's CI budget (tests/script/test_fuzz.py); default: the UTC day "
                          "as YYYYMMDD, so each day's run tries new mutants. A failure names the seed to pass here.")


#: The seed the fuzz budget ran with, once a test asked for it (for the summary line).
_FUZZ_SEED = pytest.StashKey[int]()


@pytest.fixture(scope="session")
def fuzz_seed(request: pytest.FixtureRequest) -> int:
    """The seed of the fuzzer's CI budget: ``--fuzz-seed``, else the UTC day (20261127): new
    mutants every day, the same ones all day, and printed with the results to rerun them."""
    seed = request.config.getoption("--fuzz-seed")
    if seed is None:
        seed = int(datetime.now(timezone.utc).strftime("%Y%m%d"))
    request.config.stash[_FUZZ_SEED] = seed
    return seed


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    seed = config.stash.get(_FUZZ_SEED, None)
    if seed is not None:
        terminalreporter.write_line(f"fuzz budget seed: {seed} (rerun: python -m pytest tests/script/test_fuzz.py --fuzz-seed {seed})")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: runs a kernel on a CUDA device")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The project's larger matrices in ../shared/data beside the checkout; skips without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent: the larger matrices are not on this machine")
    return SHARED_DATA
