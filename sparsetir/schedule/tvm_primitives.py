"""The TVM ``s_tir.Schedule`` primitives a ``sparsetir.Schedule`` offers at stages II and III.

This is the one list: a primitive not named here is not reachable through ``sparsetir.Schedule``.
Left out on purpose: random sampling (``sample_*``: a replay would need the decisions), layout
transforms (``transform_layout`` and friends take Python callables that cannot be recorded, and
at stage II the sparse format fixes the layout), and TVM's ``unsafe_*`` escape hatches.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

#: Primitives that only look at the program; they return handles or IR and are not recorded.
QUERIES = frozenset(
    {
        "get",
        "get_sblock",
        "get_loops",
        "get_child_blocks",
        "get_producers",
        "get_consumers",
        "get_output_blocks",
    }
)

#: Primitives that change the program; each call is a recorded, checked step.
TRANSFORMS = frozenset(
    {
        # loops
        "split",
        "fuse",
        "merge",
        "reorder",
        "reorder_block_iter_var",
        "add_unit_loop",
        "loop_partition",
        "parallel",
        "vectorize",
        "unroll",
        "bind",
        # caches and storage
        "cache_read",
        "cache_write",
        "cache_inplace",
        "cache_index",
        "reindex",
        "set_scope",
        "storage_align",
        "rolling_buffer",
        # block placement
        "compute_at",
        "reverse_compute_at",
        "compute_inline",
        "reverse_compute_inline",
        # reductions
        "decompose_reduction",
        "rfactor",
        # padding
        "pad_einsum",
        "decompose_padding",
        # tensorization and annotations
        "blockize",
        "tensorize",
        "annotate",
        "unannotate",
    }
)

#: Transforms that create a cache block (the result is one block or a list of blocks).
CACHES = frozenset({"cache_read", "cache_write", "cache_inplace", "reindex"})


def bind_arguments(method: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments by parameter name, defaults filled in (``*loops`` as a list)."""
    bound = inspect.signature(method).bind(*args, **kwargs)
    bound.apply_defaults()
    return {name: list(value) if isinstance(value, tuple) else value for name, value in bound.arguments.items()}


def call_with(method: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    """Call ``method`` with arguments named as ``bind_arguments`` returns them."""
    signature = inspect.signature(method)
    variadic = {n for n, p in signature.parameters.items() if p.kind is inspect.Parameter.VAR_POSITIONAL}
    named = {n: tuple(v) if n in variadic else v for n, v in arguments.items()}
    bound = inspect.BoundArguments(signature, named)
    return method(*bound.args, **bound.kwargs)
