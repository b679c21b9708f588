"""A compiled sparse kernel, called like a Python function.

Arguments come in parameter order or by parameter name (mixed as in Python): numpy arrays,
torch tensors, any DLPack producer, and Python or numpy numbers for scalars. Outputs (the
arrays the function writes) are written in place; inputs are never modified.
"""

from __future__ import annotations

import inspect
from typing import Any, Optional

from ..errors import ArgumentError, SparseTIRError
from .cache import Compiled
from .cpu_form import module_for
from .signature import Signature
from .target import is_gpu
from .validate import CallValidator, prepare_unchecked


class KernelBase:
    """What every kernel a user calls has: the signature it is called with (``inspect`` sees
    it too), its name, parameters and outputs."""

    def __init__(self, signature: Signature):
        self.signature = signature
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in signature.names]
        )

    @property
    def name(self) -> str:
        """The symbol of the compiled function."""
        return self.signature.name

    @property
    def params(self) -> list[str]:
        """Parameter names in call order."""
        return self.signature.names

    @property
    def outputs(self) -> list[str]:
        """Names of the array parameters the kernel writes in place."""
        return self.signature.outputs


class Kernel(KernelBase):
    """A compiled stage-III function with argument binding and validation."""

    def __init__(self, signature: Signature, validator: CallValidator, compiled: Compiled, func: Any = None):
        super().__init__(signature)
        self.compiled = compiled
        self._validator = validator
        # The function this kernel was built from: the compiled one, or an equal one from
        # another source (a cache hit), whose own spans the generated code's lines should name.
        self._func = func if func is not None else compiled.func
        self._own_source: Any = None

    @property
    def func(self) -> Any:
        """The stage-III ``tvm.tirx.PrimFunc`` this kernel was built from (its compiled code may be
        shared with an equal program from another source: ``compiled.func``)."""
        return self._func

    @property
    def target(self) -> Any:
        """The ``tvm.target.Target`` the kernel was compiled for."""
        return self.compiled.target

    def __call__(self, *args: Any, check: bool = True, **kwargs: Any) -> None:
        """Run the kernel; with ``check=False`` skip validation (malformed input is then undefined)."""
        values = bind_arguments(self, args, kwargs)
        if check:
            prepared = self._validator(values)
        else:
            prepared = prepare_unchecked(self.signature, values)
        try:
            self.compiled.invoke(prepared)
        except Exception as err:  # TVM's own argument checks (ValueError, TypeError, TVMError, ...)
            raise call_error(self.name, err) from err

    def source(self, fmt: Optional[str] = None) -> str:
        """Generated code: LLVM IR on CPU, CUDA C on GPU (``fmt`` None or ``"cuda"``); ``"ll"``
        and ``"asm"`` give a GPU kernel's host code (TVM's, which sparsetir's launcher replaces)."""
        gpu = is_gpu(self.target)
        if fmt == "cuda" or (fmt is None and gpu):
            if not gpu:
                raise ValueError(f"{self.name} was compiled for {self.target.kind.name}, which has no CUDA "
                                 "source; build it with target=\"cuda\"")
            return self.compiled.program.source
        module = self._source_module()
        if fmt in (None, "ll", "llvm"):
            return str(module.inspect_source("ll"))
        if fmt in ("asm", "s"):
            return str(module.inspect_source("asm"))
        raise ValueError(f"unknown source format {fmt!r}; use 'll', 'asm' or 'cuda'")

    def _source_module(self) -> Any:
        """A module printing the generated code with this kernel's own source lines: the cached
        compilation's, unless that was compiled from an equal program read from another source
        (then this program is compiled again for its listing, once)."""
        if self._func is self.compiled.func or _spans_of(self._func) == _spans_of(self.compiled.func):
            return self.compiled.source_module
        if self._own_source is None:
            from .._tvm import tvm

            symbol = str(self.compiled.func.attrs["global_symbol"])
            func = self._func.with_attr("global_symbol", symbol)
            self._own_source = tvm.compile(module_for(func, symbol, self.compiled.target), target=self.compiled.target).mod
        return self._own_source

    def __repr__(self) -> str:
        return f"Kernel({self.name}({', '.join(self.params)}) -> {self.target.kind.name})"


def bind_arguments(kernel: Any, args: tuple, kwargs: dict) -> list:
    """A call's arguments in ``kernel.params`` order (all positional, or all by name, without
    ``inspect``'s general binding: it costs more than a small kernel's run)."""
    names = kernel.params
    if not kwargs and len(args) == len(names):
        return list(args)
    if not args and len(kwargs) == len(names):
        try:
            return [kwargs[n] for n in names]
        except KeyError:
            pass
    try:
        bound = kernel.__signature__.bind(*args, **kwargs)
    except TypeError as err:
        raise ArgumentError(f"{kernel.name}(): {err}") from err
    return [bound.arguments[n] for n in names]


def _spans_of(func: Any) -> Any:
    """The source-line table of a compiled function (``sparsetir.spans``), or None."""
    from ..ir.stage2 import SPANS_ATTR

    attrs = func.attrs
    return str(attrs[SPANS_ATTR]) if attrs is not None and SPANS_ATTR in attrs else None


def call_error(name: str, err: Exception) -> SparseTIRError:
    """What a failed call of the compiled function ``name`` raises: a sparsetir error as it is,
    anything else (TVM refusing an argument the validation let through, e.g. with
    ``check=False``) as ``ArgumentError`` with TVM's reason; the caller chains ``err``."""
    if isinstance(err, SparseTIRError):
        return err
    lines = [line.strip() for line in str(err).strip().splitlines() if line.strip()]
    # TVM's message: the problem, the function's signature, then what it expected.
    reason = " ".join(lines[:1] + lines[2:]) if lines else type(err).__name__
    return ArgumentError(f"{name}(): the compiled kernel refused the call: {reason}")
