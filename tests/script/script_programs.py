"""Random well-formed stage-I scripts, built as text, for the round-trip property and the fuzzer.

``ProgramBuilder(choices).script()`` writes one program: a random tree of axes of all four
kinds, buffers over valid axis lists, nested sparse iterations (fuse and attach entries, init
blocks for reductions, attributes) whose stores hold random typed expressions. The builder only
asks ``choices`` for numbers, so the same code runs under Hypothesis (which can then shrink a
failing program) and under a seeded ``random.Random`` (the fuzzer's fixed corpus).

Programs vary their *spelling* too (positional or keyword idtype and dtype, tuple or list axes,
``+=``, bare literals, ``T.float32(x)`` casts), so the printer's normal form is exercised.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from hypothesis import strategies as st

FLOAT_DTYPES = ("float32", "float64", "float16")
INT_DTYPES = ("int32", "int64")
BUFFER_DTYPES = ("float32", "float32", "float64", "int32", "int64", "float16", "bool")
UNARY_MATH = ("exp", "log", "sqrt", "tanh", "sigmoid", "abs", "floor", "ceil", "sin", "erf")
FLOAT_VALUES = (0, 1, -1, 0.5, 2.25, -3.75, 0.001, 100)
POW_EXPONENTS = (0.5, 2, -1, 2.25)


def _nonzero_divisor(text: str) -> str:
    """``text`` as the divisor of an integer ``//`` or ``%``: never the constant 0, which the
    parser refuses (a bare literal 0 becomes 1, an expression ``T.max(e, 1)``)."""
    if text.lstrip("-").isdigit():
        return text if int(text) else "1"
    return f"T.max({text}, 1)"


class RandomChoices:
    """Choices from a seeded ``random.Random``."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, options: Sequence[Any]) -> Any:
        return self.rng.choice(list(options))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class HypothesisChoices:
    """Choices drawn by Hypothesis, so failing programs shrink."""

    def __init__(self, draw: Any):
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def chance(self, p: float) -> bool:
        # Shrinks towards False: the smaller program.
        return self.draw(st.integers(0, 99)) < int(p * 100)


@dataclass
class AxisInfo:
    name: str
    kind: str
    parent: Optional["AxisInfo"]
    idtype: str


@dataclass
class BufferInfo:
    name: str
    axes: list[AxisInfo]
    dtype: str


@dataclass
class IterInfo:
    name: str
    dtype: str
    reduce: bool


@dataclass
class Scope:
    """What a statement can see: iterated axes, iterators, the reduction ones among them."""

    axes: list[AxisInfo] = field(default_factory=list)
    iters: list[IterInfo] = field(default_factory=list)


class ProgramBuilder:
    """Writes one random valid stage-I script."""

    def __init__(self, choices: Any, max_depth: int = 2):
        self.c = choices
        self.max_depth = max_depth
        self.params: list[str] = []
        self.scalars: dict[str, list[str]] = {}  # dtype -> scalar parameter names
        self.axes: list[AxisInfo] = []
        self.buffers: list[BufferInfo] = []
        self.lines: list[str] = []
        self.iterations = 0

    # --- header ---------------------------------------------------------------------------------

    def param(self, prefix: str, annotation: str) -> str:
        name = f"{prefix}{len(self.params)}"
        self.params.append(f"{name}: T.{annotation}")
        return name

    def scalar_params(self) -> None:
        for _ in range(self.c.integer(1, 3)):
            self.scalars.setdefault("int32", []).append(self.param("m", "int32"))
        for dtype, prefix in (("int64", "l"), ("float32", "alpha"), ("float64", "beta")):
            if self.c.chance(0.4):
                self.scalars.setdefault(dtype, []).append(self.param(prefix, dtype))

    def length(self) -> str:
        """An integer extent: a literal, a scalar parameter or a small expression of them."""
        ints = self.scalars["int32"] + self.scalars.get("int64", [])
        form = self.c.integer(0, 4)
        if form == 0:
            return str(self.c.integer(1, 64))
        if form == 1:
            return self.c.choice(ints)
        if form == 2:
            return f"{self.c.choice(ints)} {self.c.choice('+*')} {self.c.integer(1, 8)}"
        if form == 3:
            return f"{self.c.choice(ints)} // {self.c.integer(1, 8)}"
        return f"T.max({self.c.choice(ints)}, {self.c.integer(1, 8)})"

    def idtype_tail(self, idtype: str, positional_ok: bool) -> str:
        if idtype == "int32" and self.c.chance(0.6):
            return ""
        if positional_ok and self.c.chance(0.5):
            return f', "{idtype}"'
        return f', idtype="{idtype}"'

    def axis(self, k: int) -> None:
        name = f"X{k}"
        idtype = "int64" if self.c.chance(0.2) else "int32"
        kinds = ["dense_fixed"] + (["dense_variable", "sparse_fixed", "sparse_variable"] if self.axes else [])
        kind = self.c.choice(kinds)
        if kind == "dense_fixed":
            text = f"T.dense_fixed({self.length()}{self.idtype_tail(idtype, True)})"
            self.axes.append(AxisInfo(name, kind, None, idtype))
            self.lines.append(f"    {name} = {text}")
            return
        parent = self.c.choice(self.axes)
        sorted_tail = ", sorted=False" if kind.startswith("sparse") and self.c.chance(0.2) else ""
        if kind == "dense_variable":
            indptr = self.param("indptr", "handle")
            shape = self.length() if self.c.chance(0.3) else f"({self.length()}, {self.length()})"
            text = f"T.dense_variable({parent.name}, {shape}, {indptr}{self.idtype_tail(idtype, True)})"
        elif kind == "sparse_fixed":
            indices = self.param("indices", "handle")
            text = f"T.sparse_fixed({parent.name}, ({self.length()}, {self.length()}), {indices}{self.idtype_tail(idtype, not sorted_tail)}{sorted_tail})"
        else:
            indptr = self.param("indptr", "handle")
            indices = self.param("indices", "handle")
            text = (
                f"T.sparse_variable({parent.name}, ({self.length()}, {self.length()}), ({indptr}, {indices})"
                f"{self.idtype_tail(idtype, not sorted_tail)}{sorted_tail})"
            )
        self.axes.append(AxisInfo(name, kind, parent, idtype))
        self.lines.append(f"    {name} = {text}")

    def axis_list(self) -> list[AxisInfo]:
        """1-3 distinct axes, each after its parent: a valid buffer layout."""
        chosen: list[AxisInfo] = []
        for _ in range(self.c.integer(1, 3)):
            ready = [a for a in self.axes if a not in chosen and (a.parent is None or a.parent in chosen)]
            if not ready:
                break
            chosen.append(self.c.choice(ready))
        return chosen

    def buffer(self, k: int) -> None:
        name = f"B{k}"
        axes = self.axis_list()
        dtype = self.c.choice(BUFFER_DTYPES)
        names = [a.name for a in axes]
        axes_text = f"[{', '.join(names)}]" if self.c.chance(0.3) else (f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})")
        if dtype == "float32" and self.c.chance(0.3):
            dtype_text = ""
        elif self.c.chance(0.5):
            dtype_text = f', dtype="{dtype}"'
        else:
            dtype_text = f', "{dtype}"'
        scope = self.c.choice(["", "", "", "", ', scope="global"', ', scope="shared"'])
        if self.c.chance(0.25):
            text = f"T.alloc_sparse_buffer({axes_text}{dtype_text}{scope})"
        else:
            data = self.param("data", "handle")
            extra = self.c.choice(["", "", "", ", extra_storage=None", f", extra_storage={self.length()}"])
            text = f"T.match_sparse_buffer({data}, {axes_text}{dtype_text}{scope}{extra})"
        self.buffers.append(BufferInfo(name, axes, dtype))
        self.lines.append(f"    {name} = {text}")

    # --- expressions ----------------------------------------------------------------------------

    def literal(self, dtype: str, bare: bool) -> str:
        if dtype == "bool":
            return self.c.choice(["True", "False"])
        if dtype in INT_DTYPES:
            value = self.c.integer(-5, 9)
            if bare or (dtype == "int32" and self.c.chance(0.5)):  # an untyped int is an int32
                return str(value)
            return f"T.{dtype}({value})"
        value = self.c.choice(FLOAT_VALUES)
        if bare:
            return repr(float(value)) if self.c.chance(0.7) else str(value)
        return f"T.{dtype}({value})"

    def index(self, scope: Scope, avoid_reduce: bool, depth: int = 0) -> str:
        """An integer expression of iterators, scalars and literals (store indices skip R iterators)."""
        iters = [it for it in scope.iters if not (avoid_reduce and it.reduce)]
        form = self.c.integer(0, 5 if depth < 2 else 2)
        if form == 0 or (form == 1 and not iters):
            return str(self.c.integer(0, 3))
        if form == 1:
            return self.c.choice(iters).name
        if form == 2:
            return self.c.choice(self.scalars["int32"])
        a = self.index(scope, avoid_reduce, depth + 1)
        if form == 3:
            return f"{a} {self.c.choice(['+', '-', '*'])} {self.index(scope, avoid_reduce, depth + 1)}"
        if form == 4:
            return f"{a} {self.c.choice(['//', '%'])} {self.c.integer(1, 4)}"
        return f"T.{self.c.choice(['max', 'min'])}({a}, {self.index(scope, avoid_reduce, depth + 1)})"

    def load(self, dtype: str, scope: Scope) -> Optional[str]:
        candidates = [b for b in self.buffers if b.dtype == dtype]
        if not candidates:
            return None
        buf = self.c.choice(candidates)
        return f"{buf.name}[{', '.join(self.index(scope, False) for _ in buf.axes)}]"

    def leaf(self, dtype: str, scope: Scope) -> str:
        form = self.c.integer(0, 4)
        if form == 1 and self.scalars.get(dtype):
            return self.c.choice(self.scalars[dtype])
        if form == 2:
            loaded = self.load(dtype, scope)
            if loaded is not None:
                return loaded
        if form == 3 and dtype in INT_DTYPES and scope.iters:
            it = self.c.choice(scope.iters)
            return it.name if it.dtype == dtype else f'T.cast({it.name}, "{dtype}")'
        if form == 4 and dtype != "bool":
            source = self.index(scope, False)
            return f"T.{dtype}({source})" if self.c.chance(0.5) else f'T.cast({source}, "{dtype}")'
        return self.literal(dtype, bare=False)

    def expr(self, dtype: str, scope: Scope, depth: int = 0) -> str:
        """A ``dtype``-typed expression; its own type never depends on context."""
        if depth >= 3 or self.c.chance(0.3):
            return self.leaf(dtype, scope)
        if dtype == "bool":
            return self.condition(scope, depth)
        is_float = dtype in FLOAT_DTYPES
        form = self.c.integer(0, 7)
        if form <= 2:
            ops = ["+", "-", "*"] + (["/"] if is_float else ["//", "%"])
            op = self.c.choice(ops)
            a = self.expr(dtype, scope, depth + 1)
            b = self.literal(dtype, bare=True) if self.c.chance(0.25) else self.expr(dtype, scope, depth + 1)
            if self.c.chance(0.2):
                a, b = b, a  # a bare literal on the left adopts the right operand's type
            if op in ("//", "%"):
                b = _nonzero_divisor(b)
            # Parenthesized: unparenthesized, `x - 2.0 * 3.0` would make a float32 of two bare literals.
            return f"({a} {op} {b})"
        if form == 3:
            name = self.c.choice(["max", "min"])
            return f"T.{name}({self.expr(dtype, scope, depth + 1)}, {self.expr(dtype, scope, depth + 1)})"
        if form == 4:
            cond = self.condition(scope, depth + 1)
            name = self.c.choice(["if_then_else", "if_then_else", "select"])
            return f"T.{name}({cond}, {self.expr(dtype, scope, depth + 1)}, {self.expr(dtype, scope, depth + 1)})"
        if form == 5 and is_float:
            name = self.c.choice(UNARY_MATH)
            return f"T.{name}({self.expr(dtype, scope, depth + 1)})"
        if form == 5:
            return f"-({self.expr(dtype, scope, depth + 1)})"
        if form == 6:
            source = self.c.choice([d for d in FLOAT_DTYPES + INT_DTYPES if d != dtype])
            inner = self.expr(source, scope, depth + 1)
            return f'T.cast({inner}, "{dtype}")' if self.c.chance(0.5) else f"T.{dtype}({inner})"
        if is_float and self.c.chance(0.5):
            # Small exponents: TVM warns about pow(x, y) with y >= 3.
            return f"T.pow({self.expr(dtype, scope, depth + 1)}, T.{dtype}({self.c.choice(POW_EXPONENTS)}))"
        return self.leaf(dtype, scope)

    def condition(self, scope: Scope, depth: int) -> str:
        form = self.c.integer(0, 3)
        if form == 0 or depth >= 3:
            dtype = self.c.choice(FLOAT_DTYPES[:2] + INT_DTYPES)
            op = self.c.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"({self.expr(dtype, scope, depth + 1)} {op} {self.expr(dtype, scope, depth + 1)})"
        if form == 1:
            word = self.c.choice(["and", "or"])
            return f"({self.condition(scope, depth + 1)} {word} {self.condition(scope, depth + 1)})"
        if form == 2:
            return f"(not {self.condition(scope, depth + 1)})"
        loaded = self.load("bool", scope)
        return loaded if loaded is not None else self.literal("bool", bare=False)

    # --- statements -----------------------------------------------------------------------------

    def store(self, scope: Scope, depth: int, in_init: bool = False) -> None:
        pad = "    " * depth
        buf = self.c.choice(self.buffers)
        target = f"{buf.name}[{', '.join(self.index(scope, True) for _ in buf.axes)}]"
        if buf.dtype != "bool" and not in_init and self.c.chance(0.2):
            op = self.c.choice(["+=", "+=", "-=", "*="])
            self.lines.append(f"{pad}{target} {op} {self.expr(buf.dtype, scope)}")
            return
        value = self.literal(buf.dtype, bare=True) if self.c.chance(0.15) else self.expr(buf.dtype, scope)
        self.lines.append(f"{pad}{target} = {value}")

    def entries(self, scope: Scope) -> tuple[list[str], list[AxisInfo]]:
        """Axis-list entries of a new iteration and the axes they iterate, in order."""
        texts: list[str] = []
        flat: list[AxisInfo] = []

        def ready(visible: list[AxisInfo]) -> list[AxisInfo]:
            return [a for a in self.axes if a not in visible and (a.parent is None or a.parent in visible)]

        for _ in range(self.c.integer(1, 3)):
            visible = scope.axes + flat
            form = self.c.integer(0, 5)
            if form == 4:  # T.fuse of a chain of ready axes
                group: list[AxisInfo] = []
                for _ in range(self.c.integer(2, 3)):
                    options = ready(visible + group)
                    if not options:
                        break
                    group.append(self.c.choice(options))
                if len(group) >= 2:
                    texts.append(f"T.fuse({', '.join(a.name for a in group)})")
                    flat.extend(group)
                    continue
            if form == 5:  # T.attach of a child axis under any visible axis
                options = [a for a in self.axes if a.parent is not None and a not in visible]
                if options and visible:
                    axis = self.c.choice(options)
                    texts.append(f"T.attach({axis.name}, {self.c.choice(visible).name})")
                    flat.append(axis)
                    continue
            options = ready(visible)
            if not options:
                break
            axis = self.c.choice(options)
            texts.append(axis.name)
            flat.append(axis)
        return texts, flat

    def iteration(self, scope: Scope, depth: int) -> None:
        texts, flat = self.entries(scope)
        pad = "    " * depth
        if not flat:
            self.lines.append(f"{pad}T.evaluate({self.expr(self.c.choice(BUFFER_DTYPES), scope)})")
            return
        kinds = "".join(self.c.choice("SSR") for _ in flat)
        first = len(scope.iters)
        iters = [IterInfo(f"v{first + k}", a.idtype, kind == "R") for k, (a, kind) in enumerate(zip(flat, kinds))]
        name = f"it{self.iterations}"
        self.iterations += 1
        if self.c.chance(0.8):
            axes_text = f"[{', '.join(texts)}]"
        else:
            axes_text = f"({', '.join(texts)},)" if len(texts) == 1 else f"({', '.join(texts)})"
        names = ", ".join(it.name for it in iters)
        self.lines.append(f'{pad}with T.sp_iter({axes_text}, "{kinds}", "{name}") as [{names}]:')
        inner = Scope(scope.axes + flat, scope.iters + iters)
        if self.c.chance(0.15):
            attrs = self.c.choice(['{"preprocess": True}', '{"tag": "x", "n": -2}', '{"scale": 0.5, "note": "a \\"b\\"\\n"}'])
            self.lines.append(f"{pad}    T.sp_iter_attr({attrs})")
        if "R" in kinds and self.c.chance(0.6):
            self.lines.append(f"{pad}    with T.init():")
            # an init runs before the reduction: its own 'R' iterators have no value there
            before = Scope(inner.axes, scope.iters + [it for it in iters if not it.reduce])
            for _ in range(self.c.integer(1, 2)):
                self.store(before, depth + 2, in_init=True)
        for _ in range(self.c.integer(1, 3)):
            if depth < self.max_depth and self.c.chance(0.25):
                self.iteration(inner, depth + 1)
            elif self.c.chance(0.1):
                self.lines.append(f"{pad}    T.evaluate({self.expr(self.c.choice(BUFFER_DTYPES), inner)})")
            else:
                self.store(inner, depth + 1)

    # --- the whole function ---------------------------------------------------------------------

    def script(self) -> str:
        self.scalar_params()
        if self.c.chance(0.3):
            self.lines.append('    T.func_attr({"global_symbol": "main", "tir.noalias": True, "sparse_tir_level": 2})')
        for k in range(self.c.integer(1, 5)):
            self.axis(k)
        for k in range(self.c.integer(1, 4)):
            self.buffer(k)
        for _ in range(self.c.integer(1, 3)):
            self.iteration(Scope(), 1)
        signature = ", ".join(self.params)
        returns = " -> None" if self.c.chance(0.7) else ""
        head = ["from sparsetir.script import tir as T", "", "", "@T.prim_func", f"def generated({signature}){returns}:"]
        return "\n".join(head + self.lines) + "\n"


@st.composite
def programs(draw: Any) -> str:
    """Hypothesis strategy: the text of a random valid stage-I script."""
    return ProgramBuilder(HypothesisChoices(draw)).script()


def random_programs(seed: int, count: int) -> list[str]:
    """``count`` scripts from a fixed seed: the fuzzer's generated corpus."""
    rng = random.Random(seed)
    return [ProgramBuilder(RandomChoices(rng)).script() for _ in range(count)]
