"""Malformed calls of ``csrmm``: each case breaks one rule and names the message it expects.

Shared by the in-process tests and by a child process that proves a bad call never crashes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from matrices import csrmm_arguments, random_csr

PARAMS = ["a", "b", "c", "indptr", "indices", "m", "n", "feat_size", "nnz"]
Call = tuple[tuple, dict[str, Any], list[str]]


@dataclass(frozen=True)
class Case:
    """One malformed call: ``make(valid kwargs) -> (args, kwargs, expected message parts)``."""

    id: str
    make: Callable[[dict], Call]


def base_arguments() -> dict:
    """A valid call: 20 x 15 matrix with empty rows and a dense row, feat 4."""
    return csrmm_arguments(random_csr(20, 15, 0.2, seed=1), feat=4)


def _with(kw: dict, **changes: Any) -> dict:
    out = dict(kw)
    out.update(changes)
    return out


def _decreasing_indptr(kw: dict) -> Call:
    ptr = kw["indptr"].copy()
    k = int(np.flatnonzero(ptr[1:] > 0)[0]) + 1  # the first row boundary above zero
    ptr[k + 1] = ptr[k] - 1
    detail = f"(indptr[{k}]={ptr[k]} > indptr[{k + 1}]={ptr[k + 1]})"
    return (), _with(kw, indptr=ptr), [f"argument 'indptr': not non-decreasing at position {k} {detail}"]


def _indptr_end(kw: dict) -> Call:
    ptr = kw["indptr"].copy()
    ptr[-1] -= 1
    return (), _with(kw, indptr=ptr), ["argument 'indptr'", f"indptr[20]={ptr[-1]}", f"nnz = {kw['nnz']}"]


def _indptr_start(kw: dict) -> Call:
    ptr = kw["indptr"].copy()
    ptr[0] = 1
    return (), _with(kw, indptr=ptr), ["argument 'indptr': must start at 0, got indptr[0]=1"]


def _index_too_big(kw: dict) -> Call:
    idx = kw["indices"].copy()
    idx[7] = 15
    return (), _with(kw, indices=idx), [
        "argument 'indices': out of range at position 7 (indices[7]=15, expected 0 <= value < n = 15)"
    ]


def _index_negative(kw: dict) -> Call:
    idx = kw["indices"].copy()
    idx[3] = -1
    return (), _with(kw, indices=idx), ["argument 'indices': out of range at position 3 (indices[3]=-1"]


def _short_indices(kw: dict) -> Call:
    nnz = kw["nnz"]
    return (), _with(kw, indices=kw["indices"][:-1]), [
        f"argument 'indices': expected shape (nnz,) = ({nnz},), got ({nnz - 1},)"
    ]


def _short_indptr(kw: dict) -> Call:
    return (), _with(kw, indptr=kw["indptr"][:-1]), [
        "argument 'indptr': expected shape (m + 1,) = (21,), got (20,)"
    ]


def _float64_values(kw: dict) -> Call:
    return (), _with(kw, a=kw["a"].astype(np.float64)), [
        "argument 'a': expected dtype float32, got float64"
    ]


def _int64_indptr(kw: dict) -> Call:
    return (), _with(kw, indptr=kw["indptr"].astype(np.int64)), [
        "argument 'indptr': expected dtype int32, got int64"
    ]


def _strided_output(kw: dict) -> Call:
    c = np.zeros((20, 8), np.float32)[:, ::2]
    return (), _with(kw, c=c), ["argument 'c': must be C-contiguous"]


def _readonly_output(kw: dict) -> Call:
    c = kw["c"].copy()
    c.flags.writeable = False
    return (), _with(kw, c=c), ["argument 'c': is read-only"]


def _wrong_m(kw: dict) -> Call:
    return (), _with(kw, m=21), ["argument 'c': expected shape (m, feat_size) = (21, 4), got (20, 4)"]


def _negative_size(kw: dict) -> Call:
    return (), _with(kw, feat_size=-4), ["argument 'feat_size': is a size and must be non-negative, got -4"]


def _float_scalar(kw: dict) -> Call:
    return (), _with(kw, n=15.0), ["argument 'n': expected an integer (int32), got float 15.0"]


def _scalar_overflow(kw: dict) -> Call:
    return (), _with(kw, nnz=2**40), [f"argument 'nnz': value {2**40} does not fit in int32"]


def _missing(kw: dict) -> Call:
    out = dict(kw)
    del out["nnz"]
    return (), out, ["csrmm()", "missing a required argument: 'nnz'"]


def _unknown_keyword(kw: dict) -> Call:
    return (), _with(kw, bogus=1), ["csrmm()", "unexpected keyword argument 'bogus'"]


def _duplicate(kw: dict) -> Call:
    args = tuple(kw[p] for p in PARAMS[:6])
    return args, {"m": kw["m"], "n": kw["n"], "feat_size": 4, "nnz": kw["nnz"]}, [
        "multiple values for argument 'm'"
    ]


def _too_many(kw: dict) -> Call:
    return tuple(kw[p] for p in PARAMS) + (0,), {}, ["csrmm()", "too many positional arguments"]


def _output_aliases_input(kw: dict) -> Call:
    storage = np.zeros((30, 4), np.float32)
    return (), _with(kw, b=storage[:15], c=storage[10:30]), [
        "argument 'c': shares memory with argument 'b'"
    ]


def _not_an_array(kw: dict) -> Call:
    return (), _with(kw, a=kw["a"].tolist()), ["argument 'a': expected an array", "got list"]


def _wrong_rank(kw: dict) -> Call:
    expected = "argument 'b': expected 2 dimension(s) (n, feat_size), got 1"
    return (), _with(kw, b=kw["b"].reshape(-1)), [expected]


CASES = [
    Case("indptr-decreasing", _decreasing_indptr),
    Case("indptr-end", _indptr_end),
    Case("indptr-start", _indptr_start),
    Case("index-too-big", _index_too_big),
    Case("index-negative", _index_negative),
    Case("short-indices", _short_indices),
    Case("short-indptr", _short_indptr),
    Case("float64-values", _float64_values),
    Case("int64-indptr", _int64_indptr),
    Case("strided-output", _strided_output),
    Case("readonly-output", _readonly_output),
    Case("wrong-m", _wrong_m),
    Case("negative-size", _negative_size),
    Case("float-scalar", _float_scalar),
    Case("scalar-overflow", _scalar_overflow),
    Case("missing", _missing),
    Case("unknown-keyword", _unknown_keyword),
    Case("duplicate", _duplicate),
    Case("too-many", _too_many),
    Case("output-aliases-input", _output_aliases_input),
    Case("not-an-array", _not_an_array),
    Case("wrong-rank", _wrong_rank),
]
