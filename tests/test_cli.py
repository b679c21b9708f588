"""The ``sparsetir`` command line: help, usage errors, and dispatch to the subcommand modules."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import sparsetir
from sparsetir import cli

COMMAND_NAMES = ["bench", "show", "explore"]


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMAND_NAMES:
        assert name in out


@pytest.mark.parametrize("name", COMMAND_NAMES)
def test_subcommand_help(capsys, name):
    assert cli.main([name, "--help"]) == 0
    assert f"usage: sparsetir {name}" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [[], ["frobnicate"], ["show"], ["show", "f.py", "--stage", "4"], ["explore"]],
    ids=["no-command", "unknown-command", "show-no-file", "bad-stage", "explore-no-file"],
)
def test_usage_errors_exit_2(capsys, argv):
    assert cli.main(argv) == 2
    assert "usage: sparsetir" in capsys.readouterr().err


def test_missing_module_is_not_implemented(capsys, monkeypatch):
    monkeypatch.setitem(cli.COMMANDS, "bench", "sparsetir._no_such_module")
    assert cli.main(["bench"]) == cli.EXIT_NOT_IMPLEMENTED
    err = capsys.readouterr().err
    assert "sparsetir bench: not implemented yet" in err
    assert "sparsetir._no_such_module" in err


def test_module_without_run_is_not_implemented(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sparsetir._fake_command", types.ModuleType("fake"))
    monkeypatch.setitem(cli.COMMANDS, "show", "sparsetir._fake_command")
    assert cli.main(["show", "f.py"]) == cli.EXIT_NOT_IMPLEMENTED
    assert "not implemented yet" in capsys.readouterr().err


def test_broken_module_is_not_hidden(monkeypatch):
    # A dependency missing inside an existing module is a real error, not "not implemented".
    monkeypatch.setitem(cli.COMMANDS, "bench", "sparsetir._broken_command")
    monkeypatch.setattr(sys, "meta_path", [_MissingDependency(), *sys.meta_path])
    with pytest.raises(ModuleNotFoundError, match="some_dependency"):
        cli.main(["bench"])


class _MissingDependency:
    """An import hook under which importing ``sparsetir._broken_command`` lacks a dependency."""

    def find_spec(self, name, path=None, target=None):
        if name == "sparsetir._broken_command":
            raise ModuleNotFoundError("No module named 'some_dependency'", name="some_dependency")
        return None


def test_dispatch_passes_args_and_returns_the_exit_code(monkeypatch):
    seen = {}

    def run(args):
        seen.update(vars(args))
        return 7

    fake = types.ModuleType("fake")
    fake.run = run
    monkeypatch.setitem(sys.modules, "sparsetir._fake_command", fake)
    monkeypatch.setitem(cli.COMMANDS, "show", "sparsetir._fake_command")
    assert cli.main(["show", "kernel.py", "--stage", "code", "--func", "csrmm"]) == 7
    assert seen == {"command": "show", "file": "kernel.py", "stage": "code", "func": "csrmm", "passes": False,
                    "schedule": None, "width": None}


def test_python_dash_m():
    result = subprocess.run(
        [sys.executable, "-m", "sparsetir", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "explore" in result.stdout


# --- errors: one line, never a traceback ------------------------------------------------------

CHECKOUT = Path(__file__).resolve().parents[1]


def _fake_command(monkeypatch, run):
    fake = types.ModuleType("fake")
    fake.run = run
    monkeypatch.setitem(sys.modules, "sparsetir._fake_command", fake)
    monkeypatch.setitem(cli.COMMANDS, "show", "sparsetir._fake_command")


def _raise(err):
    def run(args):
        raise err

    return run


@pytest.mark.parametrize("err, line", [
    (PermissionError(13, "Permission denied", "/root/out.txt"), "sparsetir: error: /root/out.txt: Permission denied\n"),
    (FileNotFoundError(2, "No such file or directory", "no/such/dir/out.html"),
     "sparsetir: error: no/such/dir/out.html: directory no/such/dir does not exist\n"),
    (FileNotFoundError(2, "No such file or directory", "absent.py"), "sparsetir: error: absent.py: No such file or directory\n"),
    (ValueError("--width 'x': expected NAME=INTEGER"), "sparsetir: error: --width 'x': expected NAME=INTEGER\n"),
    (sparsetir.ArgumentError("spmm: A: is empty"), "sparsetir: error: spmm: A: is empty\n"),
], ids=["permission", "missing-directory", "missing-file", "value", "argument"])
def test_a_users_error_is_one_line(capsys, monkeypatch, err, line):
    _fake_command(monkeypatch, _raise(err))
    assert cli.main(["show", "f.py"]) == cli.EXIT_ERROR
    out, got = capsys.readouterr()
    assert (out, got) == ("", line)


def test_a_script_error_keeps_its_location(capsys, monkeypatch):
    error = sparsetir.ScriptError("undefined name 'q'", "f.py", 3, 5, "    q = 1\n")
    _fake_command(monkeypatch, _raise(error))
    assert cli.main(["show", "f.py"]) == cli.EXIT_ERROR
    assert capsys.readouterr().err == "f.py:3:5: error: undefined name 'q'\n      q = 1\n      ^\n"


@pytest.mark.parametrize("err", [RuntimeError("a bug"), sparsetir.InternalError("a bug")],
                         ids=["runtime-error", "internal-error"])
def test_a_bug_keeps_its_traceback(monkeypatch, err):
    _fake_command(monkeypatch, _raise(err))
    with pytest.raises(type(err), match="a bug"):
        cli.main(["show", "f.py"])


def test_a_closed_pipe_ends_quietly(tmp_path):
    """``sparsetir cache | head -1``: the reader is gone before the command writes."""
    env = {**os.environ, "SPARSETIR_CACHE_DIR": str(tmp_path)}
    command = subprocess.Popen([sys.executable, "-m", "sparsetir", "cache"], cwd=CHECKOUT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    command.stdout.close()
    err = command.stderr.read()
    assert command.wait(timeout=300) == cli.EXIT_ERROR
    assert err == ""


def test_html_into_a_missing_directory_names_it(tmp_path):
    out = tmp_path / "missing" / "dir" / "out.html"
    done = subprocess.run([sys.executable, "-m", "sparsetir", "explore", "examples/csr_spmm.py", "--html", str(out)],
                          cwd=CHECKOUT, capture_output=True, text=True, timeout=300)
    assert done.returncode == cli.EXIT_ERROR
    assert done.stderr == f"sparsetir: error: {out}: directory {out.parent} does not exist\n"
    assert done.stdout == ""
