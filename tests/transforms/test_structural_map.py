"""``_tvm.structural_map``: an exception in a callback reaches the caller, and the process lives.

TVM's own map lets a callback's exception unwind through C++; raised after an earlier callback
replaced a node, that corrupted tvm_ffi's heap and aborted the process. Each case runs in a child
process, so an abort fails the test instead of ending the run.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"

CHILD = textwrap.dedent("""
    import sys
    import sparsetir
    from sparsetir._tvm import TensorLoad, structural_map, tirx

    body = sparsetir.lower_sparse_iter(sparsetir.parse_file(sys.argv[1])).prim.body
    calls = 0

    def on_store(store):
        global calls
        calls += 1
        if calls == int(sys.argv[2]):
            raise ValueError("raised by the callback")
        return tirx.BufferStore(store.buffer, store.value, list(store.indices), span=store.span)  # a new node

    def on_load(load):
        return tirx.BufferLoad(load.source, list(load.indices), load.span)

    for _ in range(20):
        calls = 0
        try:
            structural_map(body, [(TensorLoad, on_load), (tirx.BufferStore, on_store)])
        except ValueError as err:
            assert str(err) == "raised by the callback"
        else:
            raise SystemExit("the exception was lost")
    calls = 0
    same = structural_map(body, [(tirx.BufferStore, lambda store: store)])
    assert sparsetir.structural_equal(same, body)
    print("alive")
""")


@pytest.mark.parametrize("raise_at", [1, 2])
def test_callback_exception_is_raised_after_the_map_and_the_process_lives(raise_at):
    run = subprocess.run([sys.executable, "-c", CHILD, str(EXAMPLE), str(raise_at)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "alive"
