"""Structural equality of programs at any stage, with a readable first mismatch."""

from __future__ import annotations

from typing import Any

from .._tvm import get_first_structural_mismatch, structural_equal as _ffi_equal
from .._tvm import structural_hash as _ffi_hash


def _unwrap(obj: Any) -> Any:
    # Stage-II/III wrappers expose the compared IR through `_structural_key`.
    key = getattr(obj, "_structural_key", None)
    return key() if callable(key) else obj


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """True when two programs are equal up to variable names and source spans."""
    return bool(_ffi_equal(_unwrap(lhs), _unwrap(rhs), map_free_vars=map_free_vars))


def structural_hash(obj: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with ``structural_equal``."""
    return int(_ffi_hash(_unwrap(obj), map_free_vars=map_free_vars))


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ``AssertionError`` naming the first mismatching field and both sides' scripts."""
    a, b = _unwrap(lhs), _unwrap(rhs)
    if _ffi_equal(a, b, map_free_vars=map_free_vars):
        return
    mismatch = get_first_structural_mismatch(a, b, map_free_vars=map_free_vars)
    where = ""
    if mismatch is not None:
        lhs_path, rhs_path = mismatch
        where = f"first mismatch: lhs{_path_text(lhs_path)} vs rhs{_path_text(rhs_path)}\n"
    raise AssertionError(
        "programs are not structurally equal\n"
        + where
        + "--- lhs ---\n"
        + _script_of(lhs)
        + "\n--- rhs ---\n"
        + _script_of(rhs)
    )


def _path_text(path: Any) -> str:
    text = str(path)
    return text[len("<root>") :] if text.startswith("<root>") else text


def _script_of(obj: Any) -> str:
    script = getattr(obj, "script", None)
    if callable(script):
        try:
            return script()
        except Exception as err:  # printing is best effort inside an assertion message
            return f"<cannot print: {err}>"
    return repr(obj)
