"""Argument checks of kernels called with device tensors: what can be checked without a device
(the tensors here are CPU tensors standing for device ones; the logic only reads their pointers,
shapes and versions)."""

from __future__ import annotations

import pytest

from sparsetir.runtime.validate import CheckedStructures, _byte_ranges_overlap

torch = pytest.importorskip("torch")


def test_structure_checked_once_until_torch_changes_it():
    indptr, indices = torch.tensor([0, 1, 3], dtype=torch.int32), torch.tensor([0, 1, 2], dtype=torch.int32)
    checked = CheckedStructures()
    env = {"m": 2, "nnz": 3}
    assert not checked.seen([indptr, indices], env)
    checked.remember([indptr, indices], env)
    assert checked.seen([indptr, indices], env)
    assert not checked.seen([indptr, indices], {"m": 2, "nnz": 4})  # other sizes: checked again
    assert not checked.seen([indptr.clone(), indices], env)  # another tensor object
    indices[0] = 2  # an in-place torch edit: its version moves on
    assert not checked.seen([indptr, indices], env)


def test_checked_structures_are_bounded():
    checked = CheckedStructures()
    tensors = [torch.zeros(2, dtype=torch.int32) for _ in range(CheckedStructures.LIMIT + 1)]
    for t in tensors:
        checked.remember([t], {})
    assert not checked.seen([tensors[0]], {}) and checked.seen([tensors[-1]], {})


def test_overlap_of_device_arrays_by_byte_range():
    base = torch.zeros(100)
    assert _byte_ranges_overlap(base[:50], base[49:])
    assert not _byte_ranges_overlap(base[:50], base[50:])
    assert _byte_ranges_overlap(base.view(10, 10)[:, 0], base.view(10, 10)[9, :])  # strided column meets last row
    assert not _byte_ranges_overlap(base[:0], base)
