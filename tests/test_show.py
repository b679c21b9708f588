"""``sparsetir show``: every stage of every bundled script, annotated with its script lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sparsetir
from sparsetir.cli import main
from sparsetir.script.stage2_parser import is_stage2_text

SCRIPTS = Path(__file__).parent / "scripts"
EXAMPLE_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(
    p for p in [*EXAMPLE_DIR.glob("*.py"), *(SCRIPTS / "rfc").glob("*.py")] if not is_stage2_text(p.read_text())
)
LOWERABLE = sorted(EXAMPLE_DIR.glob("*.py")) + [SCRIPTS / "rfc" / "bsrmm_stage_i.py"]
ANNOTATION = re.compile(r"  # <- (?:lines? (\d+(?:, \d+)*))$")


def show(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stage_1_prints_the_script_back(capsys, path):
    code, out, _ = show(capsys, str(path))
    assert code == 0
    parsed = sparsetir.parse_file(path)
    functions = parsed if isinstance(parsed, dict) else {parsed.name: parsed}
    for func in functions.values():
        assert func.script().strip() in out


@pytest.mark.parametrize("stage", ["2", "3"])
@pytest.mark.parametrize("path", LOWERABLE, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_lowered_stages_name_the_script_lines_of_every_statement(capsys, path, stage):
    code, out, err = show(capsys, str(path), "--stage", stage)
    assert code == 0, err
    script_lines = path.read_text().splitlines()
    lines = out.splitlines()
    first = next(k for k, ln in enumerate(lines) if ln.strip().startswith(("for ", "with ")))
    body = lines[first:]
    statements = [ln for ln in body if ln.strip() and not ln.strip().startswith("#")]
    assert statements
    for line in statements:
        found = ANNOTATION.search(line)
        assert found, f"no script line for: {line}"
        for number in map(int, found.group(1).split(", ")):
            origin = script_lines[number - 1]
            # every origin is an iteration header, a statement or an init of the script
            assert "T.sp_iter" in origin or "=" in origin or "T.init" in origin, origin


def test_a_statement_points_at_its_own_line(capsys):
    path = EXAMPLE_DIR / "csr_spmm.py"
    lines = path.read_text().splitlines()
    header = next(k for k, ln in enumerate(lines, 1) if "T.sp_iter" in ln)
    init = next(k for k, ln in enumerate(lines, 1) if "T.float32(0)" in ln)
    update = next(k for k, ln in enumerate(lines, 1) if "C[i, k] = C[i, k] +" in ln)
    _, out, _ = show(capsys, str(path), "--stage", "3")
    zero = next(ln for ln in out.splitlines() if "= T.float32(0.0)" in ln)
    accumulate = next(ln for ln in out.splitlines() if "c[vi, vk] = c[vi, vk] +" in ln)
    # a store points at its own statement; the block around it at the iteration and that statement
    assert zero.endswith(f"# <- line {init}")
    assert accumulate.endswith(f"# <- line {update}")
    init_block = next(ln for ln in out.splitlines() if 'T.sblock("csr_spmm1_init")' in ln)
    assert init_block.endswith(f"# <- lines {header}, {init}")


def test_code_is_the_generated_llvm(capsys):
    code, out, _ = show(capsys, str(EXAMPLE_DIR / "csr_spmm.py"), "--stage", "code")
    assert code == 0
    assert "define" in out and "csr_spmm" in out


def test_func_selects_one_function_of_a_file(capsys):
    path = SCRIPTS / "rfc" / "bsr_format.py"
    parsed = sparsetir.parse_file(path)
    assert isinstance(parsed, dict) and len(parsed) > 1
    first, second = list(parsed)[:2]
    _, out, _ = show(capsys, str(path), "--func", second)
    assert f"def {second}(" in out and f"def {first}(" not in out


def test_unknown_function_is_named(capsys):
    code, _, err = show(capsys, str(EXAMPLE_DIR / "csr_spmm.py"), "--func", "nope")
    assert code == 1
    assert "has no function 'nope'; it has csr_spmm" in err


def test_script_errors_are_located(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from sparsetir.script import tir as T\n\n@T.prim_func\ndef f(m: T.int32) -> None:\n    I = T.dense_fixed(q)\n"
    )
    code, out, err = show(capsys, str(bad), "--stage", "2")
    assert code == 1 and out == ""
    assert err.startswith(f"{bad}:5:")
    assert "q" in err


def test_missing_file(capsys, tmp_path):
    code, _, err = show(capsys, str(tmp_path / "absent.py"))
    assert code == 1 and "absent.py" in err


def test_passes_prints_the_program_after_every_pass(capsys):
    from sparsetir.transforms.pipeline import PASSES

    code, out, err = show(capsys, str(EXAMPLE_DIR / "csr_spmm.py"), "--passes")
    assert code == 0, err
    headers = [ln for ln in out.splitlines() if ln.startswith("# ---- after ")]
    assert [h.split()[3] for h in headers] == [p.name for p in PASSES]
    assert all(re.search(r"\(stage (II|III), \d+\.\d ms\) ----$", h) for h in headers)
    assert "(stage II," in headers[0] and "(stage III," in headers[-1]
    # each program is the one the pipeline writes, annotated like --stage 2/3
    last = out[out.index(headers[-1]) + len(headers[-1]) + 1:]
    _, stage3, _ = show(capsys, str(EXAMPLE_DIR / "csr_spmm.py"), "--stage", "3")
    assert last == stage3


def test_passes_of_a_stage_iii_program_say_there_are_none():
    from sparsetir.show import render_passes

    stage3 = sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(sparsetir.parse_file(EXAMPLE_DIR / "csr_spmm.py")))
    assert render_passes(stage3) == "# csr_spmm is at stage III: no pass left to run\n"
