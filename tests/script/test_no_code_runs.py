"""Issue 9's payloads: no script text ever runs as Python, at stage II as at stage I.

Each payload, if it ran, would create a canary file in the test's temporary folder. Through
``sparsetir.parse`` and through ``sparsetir show FILE`` (a subprocess) every one must be refused
with a located sparsetir error and leave no file behind; ``m % None`` must be a located error,
not a crash of the process. The fuzzer (``fuzz/``, ``test_fuzz.py``) tries many more mutants.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import sparsetir
from sparsetir import cli

# A valid stage-II program; each case below rewrites one line of it.
STAGE2 = '''@T.prim_func
def f(a: T.handle, m: T.int32):
    T.func_attr({"sparse_tir_level": 1})
    I = T.dense_fixed(m)
    A = T.match_sparse_buffer(a, (I,), "float32")
    for i in range(m):
        with T.sblock("b0"):
            vi = T.axis.spatial(m, i)
            T.reads()
            T.writes(A[vi])
            A[vi] = T.float32(0)
'''

# name -> (line of STAGE2 to replace, its replacement); CANARY is the canary's absolute path.
CASES = {
    "issue_snippet": ('    I = T.dense_fixed(m)', '    __import__("os").system("touch CANARY")\n    I = T.dense_fixed(m)'),
    "open_statement": ('    I = T.dense_fixed(m)', '    open("CANARY", "w")\n    I = T.dense_fixed(m)'),
    "open_value": ("            A[vi] = T.float32(0)", '            A[vi] = open("CANARY", "w")'),
    "lambda": ("            A[vi] = T.float32(0)", '            A[vi] = (lambda: open("CANARY", "w"))()'),
    "f_string": ("            A[vi] = T.float32(0)", "            T.evaluate(f\"{open('CANARY', 'w')}\")"),
    "list_comprehension": ("            A[vi] = T.float32(0)", '            T.evaluate([open("CANARY", "w") for _ in range(1)])'),
    "dict_comprehension": ("            A[vi] = T.float32(0)", '            T.evaluate({k: open("CANARY", "w") for k in "a"})'),
    "walrus": ("            A[vi] = T.float32(0)", '            A[vi] = (x := open("CANARY", "w"))'),
    "attr_value": ('    T.func_attr({"sparse_tir_level": 1})', '    T.func_attr({"sparse_tir_level": 1, "x": open("CANARY", "w")})'),
    "attr_key": ('    T.func_attr({"sparse_tir_level": 1})', '    T.func_attr({"sparse_tir_level": 1, open("CANARY", "w"): 1})'),
    "level_value": ('    T.func_attr({"sparse_tir_level": 1})', '    T.func_attr({"sparse_tir_level": open("CANARY", "w")})'),
    "sblock_attr": ("            T.reads()", '            T.sblock_attr({"x": open("CANARY", "w")})\n            T.reads()'),
    "annotation": ("def f(a: T.handle, m: T.int32):", 'def f(a: open("CANARY", "w"), m: T.int32):'),
    "return_annotation": ("def f(a: T.handle, m: T.int32):", 'def f(a: T.handle, m: T.int32) -> open("CANARY", "w"):'),
    "default_argument": ("def f(a: T.handle, m: T.int32):", 'def f(a: T.handle, m: T.int32 = open("CANARY", "w")):'),
    "decorator_argument": ("@T.prim_func", '@T.prim_func(open("CANARY", "w"))'),
    "loop_extent": ("    for i in range(m):", '    for i in range(open("CANARY", "w")):'),
    "axis_length": ("    I = T.dense_fixed(m)", '    I = T.dense_fixed(open("CANARY", "w"))'),
    "subscript": ("            A[vi] = T.float32(0)", '            A[open("CANARY", "w")] = T.float32(0)'),
    "block_name": ('        with T.sblock("b0"):', '        with T.sblock(open("CANARY", "w")):'),
    "block_binding": ("            vi = T.axis.spatial(m, i)", '            vi = T.axis.spatial(m, open("CANARY", "w"))'),
    "docstring_fstring": ('    T.func_attr({"sparse_tir_level": 1})',
                          '    f"""{open(\'CANARY\', \'w\')}"""\n    T.func_attr({"sparse_tir_level": 1})'),
    "exec_string": ('    I = T.dense_fixed(m)', '    exec("open(\'CANARY\', \'w\')")\n    I = T.dense_fixed(m)'),
    "import_statement": ('    I = T.dense_fixed(m)', '    import os\n    os.system("touch CANARY")\n    I = T.dense_fixed(m)'),
    "with_open": ('    I = T.dense_fixed(m)', '    with open("CANARY", "w") as fh:\n        pass\n    I = T.dense_fixed(m)'),
}


#: The positions issue 9 lists, also run through a real ``sparsetir show`` process (each process
#: imports TVM, ~4 s); every case goes through the command's ``main`` in this process.
ISSUE_POSITIONS = ["issue_snippet", "open_statement", "lambda", "f_string", "list_comprehension",
                   "attr_value", "annotation", "loop_extent"]


#: ``T.evaluate(m % None)`` and ``//``: a segfault inside TVM before issue 9.
NONE_OPS = {"none_mod": "%", "none_floordiv": "//"}


def none_text(op: str) -> str:
    return STAGE2.replace("    for i in range(m):", f"    T.evaluate(m {op} None)\n    for i in range(m):")


def payload_text(name: str, canary: Path) -> str:
    old, new = CASES[name]
    assert old in STAGE2
    return STAGE2.replace(old, new, 1).replace("CANARY", str(canary))


LOCATED = re.compile(r":\d+:\d+: error: ")


def test_the_template_is_valid_stage2():
    assert isinstance(sparsetir.parse(STAGE2), sparsetir.Stage2Function)


@pytest.mark.parametrize("name", sorted(CASES))
def test_parse_refuses_payload_and_runs_nothing(name: str, tmp_path: Path):
    canary = tmp_path / f"canary_{name}"
    with pytest.raises(sparsetir.ScriptError) as err:
        sparsetir.parse(payload_text(name, canary), "payload.py")
    assert err.value.line is not None
    assert LOCATED.search(str(err.value)), str(err.value)
    assert not canary.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[subprocess.CompletedProcess, Path, Path]]:
    """``sparsetir show FILE`` of the issue's positions and of ``m % None``, started together."""
    folder = tmp_path_factory.mktemp("show")
    running = {}
    for name in [*ISSUE_POSITIONS, *NONE_OPS]:
        canary = folder / f"canary_{name}"
        path = folder / f"{name}.py"
        path.write_text(none_text(NONE_OPS[name]) if name in NONE_OPS else payload_text(name, canary))
        running[name] = (subprocess.Popen([sys.executable, "-m", "sparsetir", "show", str(path)], cwd=folder,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), canary, path)
    done = {}
    for name, (proc, canary, path) in running.items():
        out, err = proc.communicate(timeout=240)
        done[name] = (subprocess.CompletedProcess(proc.args, proc.returncode, out, err), canary, path)
    return done


@pytest.mark.parametrize("name", ISSUE_POSITIONS)
def test_show_process_refuses_payload_and_runs_nothing(name: str, shown):
    result, canary, path = shown[name]
    assert result.returncode > 0, result  # refused, not killed by a signal (negative)
    assert re.search(rf"{re.escape(str(path))}:\d+:\d+: error: ", result.stderr), result.stderr
    assert "Traceback" not in result.stderr
    assert not canary.exists()


@pytest.mark.parametrize("name", sorted(CASES))
def test_show_command_refuses_payload_and_runs_nothing(name: str, tmp_path: Path, capsys: pytest.CaptureFixture):
    canary = tmp_path / "canary"
    path = tmp_path / f"{name}.py"
    path.write_text(payload_text(name, canary))
    assert cli.main(["show", str(path)]) != 0
    captured = capsys.readouterr()
    assert re.search(rf"{re.escape(str(path))}:\d+:\d+: error: ", captured.err), captured
    assert not canary.exists()


@pytest.mark.parametrize("name", sorted(NONE_OPS))
def test_arithmetic_with_none_is_a_located_error(name: str, shown):
    op = NONE_OPS[name]
    with pytest.raises(sparsetir.ScriptError) as err:
        sparsetir.parse(none_text(op), "none.py")
    assert (err.value.line, err.value.col) == (6, 19 + len(op)), str(err.value)  # at None
    assert str(err.value).startswith("none.py:6:")
    result, _, path = shown[name]
    assert result.returncode > 0, result  # a segfault would be negative
    assert f"{path}:6:{19 + len(op)}: error: " in result.stderr and "Traceback" not in result.stderr


def test_level_1_in_a_stage1_docstring_does_not_switch_parsers(tmp_path: Path):
    """Stage I is chosen from the parsed T.func_attr, not a regex over the file."""
    canary = tmp_path / "canary"
    text = (
        '@T.prim_func\ndef f(a: T.handle, m: T.int32):\n'
        f'    """Not stage II: "sparse_tir_level": 1. open("{canary}", "w")"""\n'
        '    # {"sparse_tir_level": 1}\n'
        '    T.func_attr({"sparse_tir_level": 2})\n'
        '    I = T.dense_fixed(m)\n    A = T.match_sparse_buffer(a, (I,), "float32")\n'
        '    with T.sp_iter([I], "S", "b") as [i]:\n        A[i] = T.float32(0)\n'
    )
    assert isinstance(sparsetir.parse(text), sparsetir.SparseFunction)
    assert not canary.exists()
