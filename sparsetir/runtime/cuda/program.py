"""A compiled CUDA program as plain data: its source, its kernels, and what the host does.

TVM compiles a stage-III function for CUDA into device kernels plus a host function that
computes launch dimensions from the arguments and launches the kernels in order. sparsetir
does not run that host function (TVM's CUDA runtime needs TVM, a matching CUDA runtime library
and NVRTC wherever a kernel runs); it reads it once, at compile time (``lowering.py``), into a
``CudaProgram``: JSON-able steps over a handful of expression forms, evaluated here in Python
at each call. The launcher (``launch.py``) runs the steps with the CUDA driver.

This module imports nothing from TVM or sparsetir, so that it can be carried, with
``launch.py``, to a machine that has a GPU but no TVM (see ``docs/gpu.md``).

Expressions are nested lists::

    ["int", 3]  ["float", 0.5]  ["var", "m"]          a scalar parameter
    ["dim", "x", 1]                                   a shape variable bound by an array's dimension
    ["data", "x"]                                     the device pointer of an array parameter
    [op, a, b]     op in + - * floordiv floormod div mod min max == != < <= > >= and or
    ["not", a]  ["select", c, a, b]  ["cast", "int64", a]

Steps are dicts: ``{"launch": kernel, "args": [...], "grid": [x, y, z], "block": [x, y, z],
"shared": bytes}``, ``{"let": name, "value": e}`` (then ``["var", name]``), ``{"if": c, "then":
[...], "else": [...]}`` and ``{"assert": c, "message": text}``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

#: Launch parameter tags, in the order of the CUDA launch dimensions.
GRID_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
BLOCK_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
#: The tag TVM appends for a kernel's dynamic shared memory (bytes).
DYNAMIC_SHARED = "tirx.use_dyn_shared_memory"
#: Limits of every CUDA device of compute capability 3.0 and later.
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)

#: Argument kinds a kernel parameter may have: a device pointer, or a scalar of these types.
SCALAR_TYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64", "bool")
POINTER = "handle"


class ProgramError(ValueError):
    """A program (or its arguments) that cannot be launched, with the reason."""


@dataclass(frozen=True)
class Param:
    """A parameter of the program's entry: an array (``dtype`` of its elements) or a scalar."""

    name: str
    kind: str  # "array" or "scalar"
    dtype: str


@dataclass(frozen=True)
class KernelSpec:
    """A ``__global__`` function of the source and the kind of each of its parameters
    (``"handle"`` for a device pointer, else the scalar type)."""

    name: str
    params: tuple[str, ...]


@dataclass(frozen=True)
class Launch:
    """One kernel launch with everything evaluated: dimensions and argument values."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared: int
    args: tuple[Any, ...]  # device pointers (int) and scalars, in the kernel's parameter order

    @property
    def empty(self) -> bool:
        """Whether the launch has no threads (CUDA refuses a zero dimension: it is skipped)."""
        return min(self.grid + self.block) <= 0


@dataclass(frozen=True)
class CudaProgram:
    """A function compiled for CUDA: source, kernels, entry parameters, host steps."""

    name: str
    source: str
    params: tuple[Param, ...]
    kernels: tuple[KernelSpec, ...]
    steps: tuple[Any, ...]
    arch: str = "sm_90"
    _kernels_by_name: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._kernels_by_name.update({k.name: k for k in self.kernels})

    def kernel(self, name: str) -> KernelSpec:
        """The kernel called ``name``."""
        try:
            return self._kernels_by_name[name]
        except KeyError:
            raise ProgramError(f"{self.name}: no kernel named {name!r}") from None

    def launches(self, scalars: dict[str, Any], arrays: dict[str, tuple[int, Sequence[int]]]) -> list[Launch]:
        """The launches of one call, in order: ``scalars`` by parameter name, ``arrays`` as
        ``name -> (device pointer, shape)``. Launches with a zero dimension are left out."""
        env = _Env(self.name, scalars, arrays)
        out: list[Launch] = []
        _run(self, list(self.steps), env, out)
        return [launch for launch in out if not launch.empty]

    def to_json(self) -> str:
        """The program as JSON (``from_json`` reads it back)."""
        return json.dumps({
            "format": "sparsetir.cuda_program/1",
            "name": self.name,
            "arch": self.arch,
            "source": self.source,
            "params": [[p.name, p.kind, p.dtype] for p in self.params],
            "kernels": [[k.name, list(k.params)] for k in self.kernels],
            "steps": list(self.steps),
        })

    @staticmethod
    def from_json(text: str) -> "CudaProgram":
        """A program written by ``to_json``."""
        data = json.loads(text)
        if data.get("format") != "sparsetir.cuda_program/1":
            raise ProgramError(f"not a sparsetir CUDA program (format {data.get('format')!r})")
        return CudaProgram(
            name=str(data["name"]),
            source=str(data["source"]),
            params=tuple(Param(str(n), str(k), str(d)) for n, k, d in data["params"]),
            kernels=tuple(KernelSpec(str(n), tuple(str(p) for p in ps)) for n, ps in data["kernels"]),
            steps=tuple(data["steps"]),
            arch=str(data.get("arch", "sm_90")),
        )


class _Env:
    """Values of one call: scalars, arrays (pointer, shape), and ``let``-bound names."""

    def __init__(self, program: str, scalars: dict[str, Any], arrays: dict[str, tuple[int, Sequence[int]]]) -> None:
        self.program = program
        self.values = dict(scalars)
        self.arrays = arrays

    def fail(self, message: str) -> None:
        raise ProgramError(f"{self.program}: {message}")


def _run(program: CudaProgram, steps: list[Any], env: _Env, out: list[Launch]) -> None:
    for step in steps:
        if "launch" in step:
            out.append(_launch(program, step, env))
        elif "let" in step:
            env.values[step["let"]] = evaluate(step["value"], env)
        elif "if" in step:
            branch = step["then"] if evaluate(step["if"], env) else step.get("else", [])
            _run(program, branch, env, out)
        elif "assert" in step:
            if not evaluate(step["assert"], env):
                env.fail(step.get("message", "an assertion of the host code failed"))
        else:
            env.fail(f"unknown step {sorted(step)}")


def _launch(program: CudaProgram, step: dict, env: _Env) -> Launch:
    spec = program.kernel(step["launch"])
    if len(step["args"]) != len(spec.params):
        env.fail(f"kernel {spec.name} takes {len(spec.params)} arguments, the step gives {len(step['args'])}")
    args = []
    for kind, expr in zip(spec.params, step["args"]):
        value = evaluate(expr, env)
        args.append(int(value) if kind == POINTER or not kind.startswith("float") else float(value))
    grid = tuple(int(evaluate(e, env)) for e in step["grid"])
    block = tuple(int(evaluate(e, env)) for e in step["block"])
    shared = int(evaluate(step.get("shared", ["int", 0]), env))
    launch = Launch(spec.name, grid, block, shared, tuple(args))  # type: ignore[arg-type]
    if not launch.empty:
        _check_dimensions(env, launch)
    return launch


def _check_dimensions(env: _Env, launch: Launch) -> None:
    for axis, (extent, limit) in enumerate(zip(launch.grid, MAX_GRID)):
        if extent > limit:
            env.fail(f"kernel {launch.kernel}: grid dimension {'xyz'[axis]} = {extent} exceeds CUDA's limit {limit}")
    for axis, (extent, limit) in enumerate(zip(launch.block, MAX_BLOCK)):
        if extent > limit:
            env.fail(f"kernel {launch.kernel}: block dimension {'xyz'[axis]} = {extent} exceeds CUDA's limit {limit}")
    threads = math.prod(launch.block)
    if threads > MAX_THREADS_PER_BLOCK:
        env.fail(f"kernel {launch.kernel}: {threads} threads per block exceed CUDA's limit {MAX_THREADS_PER_BLOCK}")


_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "floordiv": lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else math.floor(a / b),
    "floormod": lambda a, b: a % b,
    "div": lambda a, b: _truncdiv(a, b) if isinstance(a, int) and isinstance(b, int) else a / b,
    "mod": lambda a, b: a - _truncdiv(a, b) * b,
    "min": min,
    "max": max,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "and": lambda a, b: bool(a) and bool(b),
    "or": lambda a, b: bool(a) or bool(b),
}
OPERATORS = frozenset(_BINARY) | {"not", "select", "cast", "int", "float", "var", "dim", "data"}


def _truncdiv(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def evaluate(expr: Any, env: _Env) -> Any:
    """The value of an expression (module docs) in ``env``."""
    op = expr[0]
    if op == "int":
        return int(expr[1])
    if op == "float":
        return float(expr[1])
    if op == "var":
        if expr[1] not in env.values:
            env.fail(f"no value for '{expr[1]}'")
        return env.values[expr[1]]
    if op == "dim":
        return int(_array(env, expr[1])[1][int(expr[2])])
    if op == "data":
        return int(_array(env, expr[1])[0])
    if op == "not":
        return not evaluate(expr[1], env)
    if op == "select":
        return evaluate(expr[2], env) if evaluate(expr[1], env) else evaluate(expr[3], env)
    if op == "cast":
        value = evaluate(expr[2], env)
        return float(value) if expr[1].startswith("float") else (bool(value) if expr[1] == "bool" else int(value))
    if op in _BINARY:
        a, b = evaluate(expr[1], env), evaluate(expr[2], env)
        if op in ("floordiv", "floormod", "div", "mod") and b == 0:
            env.fail(f"division by zero in {expr}")
        return _BINARY[op](a, b)
    env.fail(f"unknown expression {op!r}")


def _array(env: _Env, name: str) -> tuple[int, Sequence[int]]:
    if name not in env.arrays:
        env.fail(f"no array argument '{name}'")
    return env.arrays[name]


__all__ = [
    "CudaProgram",
    "KernelSpec",
    "Launch",
    "OPERATORS",
    "Param",
    "ProgramError",
    "evaluate",
]
