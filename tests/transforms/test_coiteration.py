"""Co-iteration lowered and built: ``T.intersect`` / ``T.union`` against SciPy and NumPy.

The examples (``csr_multiply``, ``csr_add``, ``csr_row_dot``) run on shared matrices against
``A.multiply(B)``, ``A + B`` and row dot products; generated scripts merge two or three axes into
a dense output, which shows exactly which coordinates a merge visits (the others keep a sentinel),
on edge cases: empty rows, empty matrices, no rows, disjoint and identical patterns, rectangular
shapes, float64. Every kernel is built twice, with the default schedule and serially, and both
must agree with the reference and with each other.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetir
from sparsetir import ArgumentError
from sparsetir._tvm import s_tir, structural_walk, tirx
from sparsetir.schedule.default import default_schedule

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SENTINEL = -7.0


def _canonical(matrix, dtype=np.float32) -> sp.csr_matrix:
    out = sp.csr_matrix(matrix, dtype=dtype)
    out.sort_indices()
    out.indptr = out.indptr.astype(np.int32)
    out.indices = out.indices.astype(np.int32)
    return out


def _random(m, n, density, seed, dtype=np.float32, empty_rows=()) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((m, n)) < density, rng.standard_normal((m, n)) + 2.0, 0.0)  # no stored zeros
    dense[list(empty_rows), :] = 0.0
    return _canonical(dense, dtype)


def _builds(func) -> list:
    """The kernel with the default schedule and the serial one."""
    return [sparsetir.build(func), sparsetir.build(func, schedule="none")]


# --------------------------------------------------------------------------- the examples


def _graph(name: str) -> sp.csr_matrix:
    try:
        graph = sparsetir.data.load(name)
    except FileNotFoundError:
        pytest.skip(f"matrix '{name}' is not available (set SPARSETIR_DATA to the shared data folder)")
    side = min(graph.shape)
    return graph[:side, :side].tocsr()


def _pair(graph: sp.csr_matrix, seed: int = 0) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The graph, and the graph with each row moved up by one (row i of B is the neighbours of
    node i + 1, which overlap node i's in a clustered graph), each with random values."""
    rng = np.random.default_rng(seed)
    a = _canonical(graph)
    a.data = rng.standard_normal(a.nnz).astype(np.float32)
    b = _canonical(a[np.roll(np.arange(a.shape[0]), -1)])
    b.data = rng.standard_normal(b.nnz).astype(np.float32)
    return a, b


def _operands(a, b) -> dict:
    return dict(a=a.data, b=b.data, indptr_a=a.indptr, indices_a=a.indices, indptr_b=b.indptr, indices_b=b.indices,
                m=a.shape[0], n=a.shape[1], nnz_a=a.nnz, nnz_b=b.nnz)


def _into_pattern(example: str, a, b, pattern: sp.csr_matrix) -> list[np.ndarray]:
    """``c`` of csr_multiply / csr_add over ``pattern``'s structure, from each build."""
    out = []
    for kernel in _builds(sparsetir.parse_file(EXAMPLES / f"{example}.py")):
        c = np.full(pattern.nnz, np.nan, np.float32)
        kernel(c=c, indptr_c=pattern.indptr, indices_c=pattern.indices, nnz_c=pattern.nnz, **_operands(a, b))
        out.append(c)
    return out


def _structure(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """The pattern of a canonical matrix (ones), so that no value decides what is stored."""
    ones = sp.csr_matrix((np.ones(matrix.nnz), matrix.indices, matrix.indptr), shape=matrix.shape)
    return _canonical(ones)


@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_examples_on_shared_matrices(name):
    a, b = _pair(_graph(name))
    both = _structure(_structure(a).multiply(_structure(b)))
    either = _structure(_structure(a) + _structure(b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    product = np.asarray(a64.multiply(b64)[_rows(both), both.indices]).ravel()
    total = np.asarray((a64 + b64)[_rows(either), either.indices]).ravel()
    assert 0 < both.nnz < min(a.nnz, b.nnz) and either.nnz > max(a.nnz, b.nnz)
    for c in _into_pattern("csr_multiply", a, b, both):
        np.testing.assert_allclose(c, product, rtol=1e-6, atol=1e-6)
    for c in _into_pattern("csr_add", a, b, either):
        np.testing.assert_allclose(c, total, rtol=1e-6, atol=1e-6)
    dots = []
    for kernel in _builds(sparsetir.parse_file(EXAMPLES / "csr_row_dot.py")):
        out = np.full(a.shape[0], np.nan, np.float32)
        kernel(out=out, **_operands(a, b))
        dots.append(out)
    expected = np.asarray(a64.multiply(b64).sum(axis=1)).ravel()
    np.testing.assert_allclose(dots[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(dots[0], dots[1])  # a row's sum runs in the same order either way


def _rows(matrix: sp.csr_matrix) -> np.ndarray:
    return np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))


def test_default_schedule_runs_merged_rows_in_parallel():
    for example in ("csr_multiply", "csr_add", "csr_row_dot"):
        decisions = default_schedule(sparsetir.parse_file(EXAMPLES / f"{example}.py")).applied
        # A merge summing into the row's element keeps the sum in a register.
        accumulates = [("register_accumulator", f"{example}1")] if example == "csr_row_dot" else []
        assert [(d.rule, d.where) for d in decisions] == [("row_parallel", f"{example}0")] + accumulates


# --------------------------------------------------------------------- generated merges


def merge_script(op: str, count: int, dtype: str = "float32") -> str:
    """``D[i, j] = X0[i, j] (*|+) X1[i, j] ...`` over ``T.<op>(J0, J1, ...)``, D dense: an
    intersection multiplies, a union adds."""
    handles = ", ".join(f"x{k}: T.handle, indptr{k}: T.handle, indices{k}: T.handle" for k in range(count))
    sizes = ", ".join(f"nnz{k}: T.int32" for k in range(count))
    axes = "".join(f"    J{k} = T.sparse_variable(I, (n, nnz{k}), (indptr{k}, indices{k}))\n" for k in range(count))
    buffers = "".join(f'    X{k} = T.match_sparse_buffer(x{k}, (I, J{k}), "{dtype}")\n' for k in range(count))
    merged = ", ".join(f"J{k}" for k in range(count))
    value = (" * " if op == "intersect" else " + ").join(f"X{k}[i, j]" for k in range(count))
    return f'''from sparsetir.script import tir as T


@T.prim_func
def merged({handles}, d: T.handle, m: T.int32, n: T.int32, {sizes}) -> None:
    I = T.dense_fixed(m)
{axes}    K = T.dense_fixed(n)
{buffers}    D = T.match_sparse_buffer(d, (I, K), "{dtype}")
    with T.sp_iter([I, T.{op}({merged})], "SS", "merged") as [i, j]:
        D[i, j] = {value}
'''


def _run_merge(op: str, mats: list, dtype=np.float32) -> list[np.ndarray]:
    func = sparsetir.parse(merge_script(op, len(mats), np.dtype(dtype).name))
    m, n = mats[0].shape
    args = dict(m=m, n=n)
    for k, x in enumerate(mats):
        args.update({f"x{k}": x.data.astype(dtype), f"indptr{k}": x.indptr, f"indices{k}": x.indices, f"nnz{k}": x.nnz})
    out = []
    for kernel in _builds(func):
        d = np.full((m, n), SENTINEL, dtype)
        kernel(d=d, **args)
        out.append(d)
    return out


def _expected(op: str, mats: list) -> np.ndarray:
    dense = [x.toarray().astype(np.float64) for x in mats]
    stored = [x.toarray() != 0 for x in mats]
    if op == "intersect":
        visited, value = np.logical_and.reduce(stored), np.prod(dense, axis=0)
    else:
        visited, value = np.logical_or.reduce(stored), np.sum(dense, axis=0)
    return np.where(visited, value, SENTINEL)


def _disjoint(m, n):
    a = _random(m, n, 0.6, 1).toarray()
    b = _random(m, n, 0.6, 2).toarray()
    a[:, 1::2] = 0
    b[:, 0::2] = 0
    return [_canonical(a), _canonical(b)]


def _identical(m, n):
    a = _random(m, n, 0.3, 3)
    b = a.copy()
    b.data = b.data * -3.0 + 1.0  # same pattern, other values (never zero: |a| >= ~0)
    b.data[b.data == 0] = 5.0
    return [a, b]


EDGE_CASES = {
    "random": lambda: [_random(23, 17, 0.3, 1), _random(23, 17, 0.4, 2)],
    "empty-rows": lambda: [_random(20, 15, 0.4, 1, empty_rows=(0, 7, 19)), _random(20, 15, 0.4, 2, empty_rows=(0, 3, 19))],
    "one-operand-empty": lambda: [_random(12, 9, 0.5, 1), _random(12, 9, 0.0, 2)],
    "both-empty": lambda: [_random(6, 5, 0.0, 1), _random(6, 5, 0.0, 2)],
    "no-rows": lambda: [_canonical(sp.csr_matrix((0, 8))), _canonical(sp.csr_matrix((0, 8)))],
    "disjoint": lambda: _disjoint(14, 12),
    "identical": lambda: _identical(16, 13),
    "rectangular-wide": lambda: [_random(5, 301, 0.2, 1), _random(5, 301, 0.2, 2)],
    "rectangular-tall": lambda: [_random(120, 3, 0.5, 1), _random(120, 3, 0.5, 2)],
    "full-rows": lambda: [_random(4, 40, 1.0, 1), _random(4, 40, 0.5, 2)],
}


@pytest.mark.parametrize("op", ["intersect", "union"])
@pytest.mark.parametrize("case", EDGE_CASES)
def test_two_way_merge_visits_exactly_its_coordinates(op, case):
    mats = EDGE_CASES[case]()
    expected = _expected(op, mats)
    results = _run_merge(op, mats)
    for d in results:
        np.testing.assert_allclose(d, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("op", ["intersect", "union"])
def test_three_way_merge(op):
    mats = [_random(30, 25, 0.5, 1, empty_rows=(4,)), _random(30, 25, 0.5, 2), _random(30, 25, 0.5, 3, empty_rows=(9,))]
    for d in _run_merge(op, mats):
        np.testing.assert_allclose(d, _expected(op, mats), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["intersect", "union"])
def test_float64(op):
    mats = [_random(18, 21, 0.4, 5, np.float64), _random(18, 21, 0.4, 6, np.float64)]
    for d in _run_merge(op, mats, np.float64):
        assert d.dtype == np.float64
        np.testing.assert_allclose(d, _expected(op, mats), rtol=1e-13, atol=1e-13)


FEATURES = """from sparsetir.script import tir as T


@T.prim_func
def features(a: T.handle, b: T.handle, d: T.handle, ia: T.handle, xa: T.handle, ib: T.handle, xb: T.handle,
             m: T.int32, n: T.int32, f: T.int32, na: T.int32, nb: T.int32) -> None:
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, xa))
    JB = T.sparse_variable(I, (n, nb), (ib, xb))
    J = T.dense_fixed(n)
    F = T.dense_fixed(f)
    A = T.match_sparse_buffer(a, (I, JA, F), "float32")
    B = T.match_sparse_buffer(b, (I, JB, F), "float32")
    D = T.match_sparse_buffer(d, (I, J, F), "float32")
    with T.sp_iter([I, T.OP(JA, JB), F], "SSS", "features") as [i, j, k]:
        D[i, j, k] = A[i, j, k] * T.float32(2) - B[i, j, k]
"""


@pytest.mark.parametrize("op", ["intersect", "union"])
def test_a_feature_axis_after_the_merge(op):
    """A dense axis after the merge is a loop (and a block) inside the walk; in a union the
    operand that lacks the coordinate reads 0 across the whole feature row."""
    a, b = _random(19, 14, 0.4, 1, empty_rows=(3,)), _random(19, 14, 0.4, 2, empty_rows=(3, 8))
    f = 5
    rng = np.random.default_rng(4)
    av, bv = rng.standard_normal((a.nnz, f)).astype(np.float32), rng.standard_normal((b.nnz, f)).astype(np.float32)
    dense_a, dense_b = np.zeros((19, 14, f)), np.zeros((19, 14, f))
    dense_a[_rows(a), a.indices] = av
    dense_b[_rows(b), b.indices] = bv
    stored_a, stored_b = a.toarray() != 0, b.toarray() != 0
    visited = stored_a & stored_b if op == "intersect" else stored_a | stored_b
    expected = np.where(visited[:, :, None], dense_a * 2 - dense_b, SENTINEL)
    func = sparsetir.parse(FEATURES.replace("T.OP", f"T.{op}"))
    for kernel in _builds(func):
        d = np.full((19, 14, f), SENTINEL, np.float32)
        kernel(a=av, b=bv, d=d, ia=a.indptr, xa=a.indices, ib=b.indptr, xb=b.indices, m=19, n=14, f=f,
               na=a.nnz, nb=b.nnz)
        np.testing.assert_allclose(d, expected, rtol=1e-6, atol=1e-6)


CHILD = """from sparsetir.script import tir as T


@T.prim_func
def child(b: T.handle, v: T.handle, out: T.handle, ia: T.handle, xa: T.handle, ib: T.handle, xb: T.handle,
          ik: T.handle, xk: T.handle, m: T.int32, n: T.int32, p: T.int32, na: T.int32, nb: T.int32,
          nk: T.int32) -> None:
    I = T.dense_fixed(m)
    JA = T.sparse_variable(I, (n, na), (ia, xa))
    JB = T.sparse_variable(I, (n, nb), (ib, xb))
    K = T.sparse_variable(JA, (p, nk), (ik, xk))
    B = T.match_sparse_buffer(b, (I, JB), "float32")
    V = T.match_sparse_buffer(v, (I, JA, K), "float32")
    O = T.match_sparse_buffer(out, (I,), "float32")
    with T.sp_iter([I, T.intersect(JA, JB), K], "SRR", "child") as [i, j, k]:
        with T.init():
            O[i] = T.float32(0)
        O[i] = O[i] + V[i, j, k] * B[i, j]
"""


def test_an_axis_under_a_merged_axis_of_an_intersection():
    """A third level under ``JA`` (a CSF tensor's) is iterated at ``JA``'s pointer."""
    a, b = _random(16, 12, 0.5, 1), _random(16, 12, 0.5, 2, empty_rows=(5,))
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 4, a.nnz)
    ik = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    xk = np.concatenate([np.sort(rng.choice(6, k, replace=False)) for k in lengths] + [[]]).astype(np.int32)
    v = rng.standard_normal(len(xk)).astype(np.float32)
    sums = np.add.reduceat(np.append(v, 0.0).astype(np.float64), ik[:-1]) * (lengths > 0)
    expected = np.zeros(16)
    dense_b, stored_b = b.toarray().astype(np.float64), b.toarray() != 0
    for p, (row, col) in enumerate(zip(_rows(a), a.indices)):
        if stored_b[row, col]:
            expected[row] += sums[p] * dense_b[row, col]
    for kernel in _builds(sparsetir.parse(CHILD)):
        out = np.full(16, np.nan, np.float32)
        kernel(b=b.data, v=v, out=out, ia=a.indptr, xa=a.indices, ib=b.indptr, xb=b.indices, ik=ik, xk=xk,
               m=16, n=12, p=6, na=a.nnz, nb=b.nnz, nk=len(xk))
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op,count", [("intersect", 2), ("union", 2), ("intersect", 3), ("union", 3)])
def test_stage2_round_trip(op, count):
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(merge_script(op, count)))
    text = f2.script()
    assert text.count("while ") == 1
    again = sparsetir.parse(text)
    sparsetir.assert_structural_equal(again, f2)
    assert again.script() == text


def test_merge_statements_carry_the_span_of_the_construct():
    script = merge_script("union", 2)
    line = next(k for k, text in enumerate(script.splitlines(), 1) if "T.union(" in text)
    column = script.splitlines()[line - 1].index("T.union(") + 1
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(script, "merge.py"))
    found = []

    def visit(node):
        if isinstance(node, (tirx.While, tirx.IfThenElse, tirx.BufferStore)) and node.span is not None \
                and "merge" in str(getattr(getattr(node, "buffer", None), "name", "merge")):
            found.append(node)
        return True

    structural_walk(f2.prim.body, visit)
    loops = [s for s in found if isinstance(s, tirx.While)]
    pointer_stores = [s for s in found if isinstance(s, tirx.BufferStore)]
    assert loops and len(pointer_stores) >= 3  # two starts and the coordinate (updates sit in ifs)
    for stmt in loops + pointer_stores:
        assert (str(stmt.span.source_name.name), int(stmt.span.line), int(stmt.span.column)) == ("merge.py", line, column)
    table = sparsetir.trace.spans.span_table(f2)
    assert table["merged1"][0] == f"merge.py:{line}"


def _blocks(stmt) -> dict:
    found = {}

    def visit(node):
        if isinstance(node, s_tir.SBlock):
            found[str(node.name_hint)] = node
        return True

    structural_walk(stmt, visit)
    return found


def test_merged_block_is_a_block_of_its_own_under_the_row():
    f2 = sparsetir.lower_sparse_iter(sparsetir.parse(merge_script("intersect", 2)))
    blocks = _blocks(f2.prim.body)
    assert sorted(blocks) == ["merged0", "merged1", "root"]
    row, merge = blocks["merged0"], blocks["merged1"]
    assert "merged1" in _blocks(row.body)
    assert len(row.iter_vars) == 1 and len(merge.iter_vars) == 0  # the merge has no iterator TVM may reorder
    assert [str(b.name) for b in merge.alloc_buffers] == ["merged_j_merge"]


# ------------------------------------------------------------------ malformed arguments


@pytest.fixture(scope="module")
def row_dot_kernel():
    return sparsetir.build(sparsetir.parse_file(EXAMPLES / "csr_row_dot.py"))


def _dot_args(**changes):
    a, b = _random(10, 12, 0.5, 1), _random(10, 12, 0.5, 2)
    args = dict(out=np.zeros(10, np.float32), **_operands(a, b))
    args.update(changes)
    return args, b


def test_unsorted_merged_row_is_refused(row_dot_kernel):
    args, b = _dot_args()
    indices = b.indices.copy()
    start = next(r for r in range(10) if b.indptr[r + 1] - b.indptr[r] >= 2)
    p = b.indptr[start]
    indices[p], indices[p + 1] = indices[p + 1], indices[p]
    with pytest.raises(ArgumentError, match="axis JB must be sorted"):
        row_dot_kernel(**{**args, "indices_b": indices})


def test_merged_axis_structure_is_checked(row_dot_kernel):
    args, b = _dot_args()
    indices = b.indices.copy()
    indices[0] = 12
    with pytest.raises(ArgumentError, match="indices_b.*out of range"):
        row_dot_kernel(**{**args, "indices_b": indices})
    indptr = b.indptr.copy()
    indptr[-1] += 1
    with pytest.raises(ArgumentError, match="indptr_b"):
        row_dot_kernel(**{**args, "indptr_b": indptr})


# ------------------------------------------------------------ what does not know merges yet


@pytest.mark.parametrize("primitive,args", [("sparse_reorder", (["I", "JA"],)), ("sparse_fuse", (["I", "JA"],))])
def test_stage1_primitives_refuse_a_merge(primitive, args):
    sch = sparsetir.Schedule(sparsetir.parse_file(EXAMPLES / "csr_multiply.py"))
    with pytest.raises(sparsetir.ScheduleError, match=r"co-iterates T.intersect\(JA, JB, JC\)"):
        getattr(sch, primitive)("csr_multiply", *args)


@pytest.mark.parametrize("axis", ["JA", "JB"])
def test_format_decompose_refuses_a_merged_axis(axis):
    from sparsetir.formats.rules import bsr_rule

    buffer = "A" if axis == "JA" else "B"
    func = sparsetir.parse_file(EXAMPLES / "csr_multiply.py")
    with pytest.raises(sparsetir.LoweringError, match=rf"co-iterates T.intersect\(JA, JB, JC\); rewrite rule"):
        sparsetir.format_decompose(func, [bsr_rule(4, buffers=(buffer,), axes=("I", axis))])


def test_listings_link_the_merge_and_the_body_to_their_lines():
    """What ``sparsetir show`` and the explorer print: the walk's lines come from the line of
    ``T.union(...)``, the store from the body's line, at stages II and III."""
    from sparsetir.trace.listing import listing
    from sparsetir.transforms import pipeline

    text = (EXAMPLES / "csr_add.py").read_text()
    func = sparsetir.parse(text, "examples/csr_add.py")
    merge_line = next(k for k, line in enumerate(text.splitlines(), 1) if "T.union(" in line)
    body_line = next(k for k, line in enumerate(text.splitlines(), 1) if "C[i, j] =" in line)
    for program, store in ((pipeline.lower(func, until=2), "C[vi, "), (pipeline.lower(func), "c[indptr_c[vi] + ")):
        lines = listing(program)
        origins = {row.strip(): lines.lines_in("examples/csr_add.py")[k] for k, row in enumerate(lines.lines)}
        walk = next(row for row in origins if row.startswith("while csr_add_j_merge"))
        advance = next(row for row in origins if row.startswith("csr_add_j_merge[1] = csr_add_j_merge[1] + 1"))
        update = next(row for row in origins if row.startswith(store))
        assert origins[walk] == [merge_line] and origins[advance] == [merge_line]
        assert origins[update] == [body_line]
