"""The kernel cache on disk (sparsetir/runtime/disk_cache.py): later processes load, damaged
entries are compiled again, concurrent processes leave valid entries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import sparsetir
from sparsetir.runtime import KernelCache, disk_cache
from sparsetir.runtime.disk_cache import DiskCache
from sparsetir.runtime.toolchain import c_compiler

pytestmark = pytest.mark.skipif(c_compiler() is None, reason="kernel libraries are linked with a C compiler; none here")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "csr_spmm.py"

# A process that calls ops.spmm once and prints where its kernel came from.
OPS_CHILD = """
import json, numpy as np, scipy.sparse as sp
from sparsetir import ops
from sparsetir.runtime import default_cache
A = sp.random(200, 150, density=0.05, format="csr", dtype=np.float32, random_state=1)
X = np.arange(150 * 24, dtype=np.float32).reshape(150, 24) / 1000
assert np.allclose(ops.spmm(A, X), A @ X, rtol=1e-5, atol=1e-4)
print(json.dumps({"loads": ops.library.loads, "compilations": default_cache.compilations}))
"""


def _child(code: str, cache_dir: Path) -> dict:
    env = dict(os.environ, SPARSETIR_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_ops_kernel_instead_of_compiling(tmp_path):
    assert _child(OPS_CHILD, tmp_path) == {"loads": 0, "compilations": 1}
    assert _child(OPS_CHILD, tmp_path) == {"loads": 1, "compilations": 0}


def test_concurrent_processes_on_an_empty_cache_all_succeed_and_leave_one_valid_entry(tmp_path):
    env = dict(os.environ, SPARSETIR_CACHE_DIR=str(tmp_path))
    running = [subprocess.Popen([sys.executable, "-c", OPS_CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env) for _ in range(3)]
    for proc in running:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
    assert _child(OPS_CHILD, tmp_path) == {"loads": 1, "compilations": 0}
    libraries = list(tmp_path.glob("v*/*/*.so"))
    assert len(libraries) == 1  # the same program has one key
    assert not list(tmp_path.glob("v*/*/.*"))  # no temporary file left behind


def _build_into(disk: DiskCache):
    cache = KernelCache(disk=disk)
    # The program as written (one compilation); the default schedule compiles per width, on call.
    kernel = sparsetir.build(sparsetir.parse_file(str(EXAMPLE)), cache=cache, schedule="none")
    return kernel, cache


def _run(kernel) -> None:
    A = scipy.sparse.random(60, 50, density=0.1, format="csr", dtype=np.float32, random_state=3)
    B = np.random.default_rng(0).standard_normal((50, 16), dtype=np.float32)
    C = np.zeros((60, 16), np.float32)
    kernel(A.data, B, C, A.indptr, A.indices, 60, 50, 16, A.nnz)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


def test_an_entry_is_loaded_by_a_new_cache_and_runs(tmp_path):
    disk = DiskCache(tmp_path)
    first, cache = _build_into(disk)
    assert (cache.compilations, disk.stores) == (1, 1)
    again, cache = _build_into(disk)
    assert (cache.compilations, cache.loads, disk.loads) == (0, 1, 1)
    assert again.compiled.library == first.compiled.library
    _run(again)
    assert "csr_spmm" in again.source()  # compiled again on demand: a library keeps machine code only


@pytest.mark.parametrize("damage", ["flip a library byte", "truncate the record", "foreign record type",
                                    "wrong format", "missing library"])
def test_a_damaged_entry_is_compiled_again(tmp_path, damage):
    disk = DiskCache(tmp_path)
    first, _ = _build_into(disk)
    library = first.compiled.library
    record = library.with_suffix(".json")
    # Damage is written as new files: this process has the library loaded, and editing a
    # mapped library in place would change the code it runs.
    if damage == "flip a library byte":
        data = bytearray(library.read_bytes())
        data[len(data) // 2] ^= 0xFF
        library.unlink()
        library.write_bytes(bytes(data))
    elif damage == "truncate the record":
        record.write_text(record.read_text()[:100])
    elif damage == "foreign record type":
        content = json.loads(record.read_text())
        content["constraints"] = [{"record": "Popen", "fields": {"args": "true"}}]
        record.write_text(json.dumps(content))
    elif damage == "wrong format":
        content = json.loads(record.read_text())
        content["format"] = -1
        record.write_text(json.dumps(content))
    else:
        library.unlink()
    fresh = DiskCache(tmp_path)
    again, cache = _build_into(fresh)
    assert (fresh.rejected, fresh.loads, cache.compilations) == (1, 0, 1)
    _run(again)
    assert DiskCache(tmp_path).load(again.compiled.key) is not None  # stored whole again


def test_the_key_depends_on_program_target_and_code(monkeypatch):
    from sparsetir.runtime.target import host_target
    from sparsetir.transforms import pipeline

    f3 = pipeline.lower(sparsetir.parse_file(str(EXAMPLE)))
    key = disk_cache.program_key(f3, host_target())
    assert key == disk_cache.program_key(pipeline.lower(sparsetir.parse_file(str(EXAMPLE))), host_target())
    assert key != disk_cache.program_key(f3, host_target(**{"fast-math-reassoc": True}))
    assert key != disk_cache.program_key(f3.with_attr("global_symbol", "other"), host_target())
    monkeypatch.setattr(disk_cache, "code_fingerprint", lambda: "another version of sparsetir")
    assert key != disk_cache.program_key(f3, host_target())


def test_directory_follows_the_environment_and_set_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path / "a"))
    assert DiskCache().root == tmp_path / "a"
    monkeypatch.delenv(disk_cache.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert DiskCache().root == tmp_path / "xdg" / "sparsetir"
    disk = DiskCache()
    disk.set_directory(tmp_path / "b")
    assert disk.root == tmp_path / "b" and disk.directory.parent.parent == tmp_path / "b"


def test_a_disabled_disk_cache_stores_nothing_but_kernels_still_run(tmp_path):
    disk = DiskCache(tmp_path, enabled=False)
    kernel, cache = _build_into(disk)
    _run(kernel)
    assert disk.stores == 1 and not list(tmp_path.rglob("*.so"))
    assert disk.load(kernel.compiled.key) is None


def test_clear_removes_every_entry(tmp_path):
    disk = DiskCache(tmp_path)
    _build_into(disk)
    assert disk.entries() and disk.size() > 0
    disk.clear()
    assert not disk.entries() and disk.size() == 0


def test_cache_command_shows_and_clears(tmp_path):
    _child(OPS_CHILD, tmp_path)
    env = dict(os.environ, SPARSETIR_CACHE_DIR=str(tmp_path))
    shown = subprocess.run([sys.executable, "-m", "sparsetir", "cache"], capture_output=True, text=True, env=env,
                           timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert f"directory:  {tmp_path}" in shown.stdout and "kernels:    1 (1 for this version" in shown.stdout
    assert "parallel:" in shown.stdout
    cleared = subprocess.run([sys.executable, "-m", "sparsetir", "cache", "--clear"], capture_output=True, text=True,
                             env=env, timeout=300)
    assert cleared.returncode == 0 and "removed 1 compiled kernel " in cleared.stdout
    assert not list(tmp_path.glob("v*/*/*.so"))
