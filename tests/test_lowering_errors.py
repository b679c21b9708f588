"""Programs that parse but cannot be lowered or compiled fail with a ``LoweringError`` naming the
pass (or the compilation) and TVM's reason; no TVM error escapes ``lower_*`` or ``build``."""

from __future__ import annotations

from pathlib import Path

import pytest

import sparsetir

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "csr_spmm.py"


@pytest.fixture(scope="module")
def stage2_text() -> str:
    return sparsetir.lower_sparse_iter(sparsetir.parse_file(SCRIPT)).script()


@pytest.mark.parametrize("old,new,when,reason", [
    ("for i in range(m):", 'for i in T.thread_binding(m, thread="threadIdx.x"):', "compiling csr_spmm for llvm",
     "not implemented"),
    ("for i in range(m):", 'for i in T.thread_binding(m, thread="bogus"):', "compiling csr_spmm", "threadscope bogus"),
])
def test_unbuildable_stage2_is_a_lowering_error(stage2_text, old, new, when, reason):
    f2 = sparsetir.parse(stage2_text.replace(old, new, 1))
    with pytest.raises(sparsetir.LoweringError) as info:
        sparsetir.build(f2)
    assert when in str(info.value) and reason in str(info.value)
    assert info.value.__cause__ is not None  # TVM's own error stays attached


def test_a_heading_from_tvm_comes_with_its_first_line(monkeypatch):
    """LLVM's verifier (and TVM's other multi-line errors) open with a heading that ends in a
    colon: the message gives the first error after it, not the heading alone."""
    from sparsetir import driver

    def refuse(*args, **kwargs):
        raise RuntimeError("LLVM module verification failed with the following errors: \n"
                           "Call parameter type does not match function signature!\n  %ij = phi i32\n")

    monkeypatch.setattr(driver, "build_stage3", refuse)
    with pytest.raises(sparsetir.LoweringError) as info:
        # A name of its own: an equal program built by another test would come from the memo.
        sparsetir.build(sparsetir.parse_file(SCRIPT), schedule="none", name="heading_probe")
    message = str(info.value)
    assert "failed: LLVM module verification failed with the following errors:" in message
    assert message.endswith("Call parameter type does not match function signature!")
