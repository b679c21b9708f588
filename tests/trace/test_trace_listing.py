"""Listings: every line of every stage of every example maps back to the script lines it came from."""

from __future__ import annotations

import pytest

import sparsetir
from sparsetir.schedule import Schedule
from sparsetir.trace import code_listing, home_of, listing, record_passes
from examples import EXAMPLE_DIR, EXAMPLES, IDS


def _unmapped(program, home):
    """Lines of the program's listing (not blank, not comments) that map to no line of ``home``."""
    lst = listing(program)
    assert lst.text == program.script()  # the listing is the program's own text
    assert len(lst.origins) == len(lst.lines)
    return [line for line, where in zip(lst.lines, lst.lines_in(home))
            if line.strip() and not line.lstrip().startswith("#") and not where]


@pytest.mark.parametrize("file, name, func", EXAMPLES, ids=IDS)
def test_every_line_of_every_stage_maps_to_a_script_line(file, name, func):
    """The acceptance check: stage I, and stage II and III after every pass of the pipeline."""
    n_lines = len((EXAMPLE_DIR.parent / file).read_text().splitlines())
    assert home_of(func) == file
    programs = [func] + [record.after for record in record_passes(func)]
    for program in programs:
        assert _unmapped(program, file) == [], f"{name} at stage {sparsetir.transforms.pipeline.stage_of(program)}"
        assert all(1 <= n <= n_lines for lines in listing(program).lines_in(file) for n in lines)


def _lines_of(lst, home, needle):
    return next(where for line, where in zip(lst.lines, lst.lines_in(home)) if needle in line)


def test_statements_point_at_their_own_lines_and_blocks_at_what_merged_into_them():
    file, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    source = (EXAMPLE_DIR.parent / file).read_text().splitlines()
    header, init, update = (next(k for k, ln in enumerate(source, 1) if needle in ln)
                            for needle in ("T.sp_iter", "T.float32(0)", "C[i, k] = C[i, k] +"))
    stage3 = listing(sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(func)))
    assert _lines_of(stage3, file, "c[vi, vk] = c[vi, vk] +") == [update]
    assert _lines_of(stage3, file, "c[vi, vk] = T.float32(0.0)") == [init]
    assert _lines_of(stage3, file, 'T.sblock("csr_spmm1_init")') == [header, init]
    assert _lines_of(stage3, file, 'T.sblock("csr_spmm1_update")') == [header, update]
    assert _lines_of(stage3, file, "for j, k in T.grid") == [header, update]  # the block's loop nest
    assert _lines_of(stage3, file, "for i in range(m)") == [header]
    stage1 = listing(func)
    assert _lines_of(stage1, file, "J = T.sparse_variable") == [next(k for k, ln in enumerate(source, 1) if "J = T.sparse" in ln)]


def test_a_scheduled_program_maps_its_new_loops():
    """TVM's split makes loops without spans; the listing fills them from the block they wrap."""
    file, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    sch = Schedule(func)
    sch.lower_sparse_iter()
    block = sch.get_sblock("csr_spmm1")
    j, k = sch.get_loops(block)
    ko, ki = sch.split(k, [None, 8])
    sch.reorder(ko, j, ki)
    sch.lower_sparse_buffer()
    assert _unmapped(sch.func, file) == []
    lst = listing(sch.func)
    assert _lines_of(lst, file, "for j, k_1 in T.grid") == [25, 28]
    assert _lines_of(lst, file, "for k_1_init in range(8)") == [25, 27]


def test_annotated_text_names_lines_in_home_and_other_files_by_name():
    file, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    text = listing(sparsetir.lower_sparse_iter(func)).annotated(file)
    assert "C[vi, vk] = C[vi, vk] + A[vi, vj] * B[J_indices[vi, vj], vk]  # <- line 28" in text
    assert 'with T.sblock("csr_spmm1"):  # <- lines 25, 28' in text
    elsewhere = listing(sparsetir.lower_sparse_iter(func)).annotated("other.py")
    assert f"  # <- {file}:25, {file}:28" in elsewhere


def test_llvm_ir_lines_map_through_their_debug_locations():
    file, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    kernel = sparsetir.build(func, schedule="none")  # the program as written: its two statements
    lst = code_listing(kernel.source(), "ll", file)
    mapped = {n for lines in lst.lines_in(file) for n in lines}
    assert mapped == {27, 28}
    fmul = next(where for line, where in zip(lst.lines, lst.lines_in(file)) if " fmul " in line or "fmuladd" in line)
    assert fmul == [28]


def test_assembly_lines_map_through_loc_directives():
    file, _, func = next(e for e in EXAMPLES if e[1] == "csr_spmm")
    # Serial code: TVM gives the function it outlines for a parallel loop debug locations in
    # LLVM IR, but LLVM's assembly of it has no .loc lines (it has no debug subprogram).
    lst = code_listing(sparsetir.build(func, schedule="none").source("asm"), "asm", file)
    rows = list(zip(lst.lines, lst.lines_in(file)))
    assert {n for _, lines in rows for n in lines} == {27, 28}
    assert all(not where for line, where in rows if line.lstrip().startswith((".", "#")) or line.endswith(":"))


def test_cuda_and_unknown_formats():
    assert code_listing("__global__ void k() {}\n", "cuda", "x.py").origins == ((),)
    with pytest.raises(ValueError, match="unknown code format 'wasm'"):
        code_listing("", "wasm", "x.py")
