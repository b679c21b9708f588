"""``import sparsetir`` reaches every subpackage a user names as an attribute, importing the heavy
ones (torch, matplotlib) only when they are first used. Each check runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
LAZY = ("bench", "distributed", "formats", "models", "ops")


def run_fresh(code: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=CHECKOUT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_subpackages_are_attributes_imported_on_first_use():
    run_fresh(f"""
        import sys
        import sparsetir

        lazy = {LAZY!r}
        assert not [name for name in lazy if f"sparsetir.{{name}}" in sys.modules], sorted(sys.modules)
        assert set(lazy) <= set(dir(sparsetir))
        for name in lazy:
            assert getattr(sparsetir, name) is sys.modules[f"sparsetir.{{name}}"], name
        assert callable(sparsetir.ops.spmm) and sparsetir.formats.Ell and sparsetir.models.GCN
        for name in ("script", "schedule", "transforms", "runtime", "data", "explorer", "ir"):
            assert getattr(sparsetir, name) is sys.modules[f"sparsetir.{{name}}"], name
    """)


def test_an_unknown_attribute_is_an_attribute_error():
    run_fresh("""
        import sparsetir

        try:
            sparsetir.quantum
        except AttributeError as err:
            assert str(err) == "module 'sparsetir' has no attribute 'quantum'", err
        else:
            raise AssertionError("sparsetir.quantum exists")
        assert not hasattr(sparsetir, "nothing_like_this")
    """)


def test_import_and_formats_need_no_torch():
    run_fresh("""
        import sys
        sys.modules["torch"] = None  # any "import torch" now fails

        import numpy as np
        import scipy.sparse as sp
        import sparsetir

        ell = sparsetir.formats.Ell.from_csr(sp.random(5, 5, density=0.4, format="csr", dtype=np.float32, random_state=0), 3)
        assert ell.shape == (5, 5)
    """)
