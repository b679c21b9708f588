"""The ``sparsetir`` command line: help, usage errors, and dispatch to the subcommand modules."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

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
