"""The promises the README makes about installing and testing match what CI really does."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from sparsetir import cli

CHECKOUT = Path(__file__).resolve().parents[1]
TEST_INSTALL = "pip install -c constraints.txt -e '.[test,torch,bench,gnn,cuda,distributed]' && "


def readme_test_command() -> str:
    lines = (CHECKOUT / "README.md").read_text().splitlines()
    [line] = [line for line in lines if line.startswith(TEST_INSTALL)]
    return line.removeprefix(TEST_INSTALL)


def test_ci_runs_the_readme_test_command():
    ci = (CHECKOUT / ".ci" / "run").read_text().splitlines()
    assert readme_test_command() in ci


def test_ci_installs_the_readme_extras_first():
    """CI's first install is the README's; its fallbacks only drop extras, for machines that lack them."""
    import re

    ci = (CHECKOUT / ".ci" / "run").read_text()
    installs = re.findall(r"pip install [^\n]*?-e '(\.\[[^\]]*\])'", ci)
    readme_extras = re.search(r"-e '(\.\[[^\]]*\])'", TEST_INSTALL).group(1)
    assert installs and installs[0] == readme_extras


def test_console_script_runs_cli_main():
    try:
        dist = importlib.metadata.distribution("sparsetir")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("sparsetir is not installed (pip install -e .)")
    [script] = [ep for ep in dist.entry_points if ep.group == "console_scripts"]
    assert script.name == "sparsetir"
    assert script.load() is cli.main


def test_readme_python_examples_run(tmp_path):
    """The README's Python blocks, run in order as one script, work as written."""
    import re
    import subprocess
    import sys

    blocks = re.findall(r"```python\n(.*?)```", (CHECKOUT / "README.md").read_text(), re.S)
    assert len(blocks) >= 3
    script = tmp_path / "readme_example.py"
    script.write_text("\n".join(blocks))
    env = {**__import__("os").environ, "PYTHONPATH": str(CHECKOUT)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _torch_extra() -> list[str]:
    import tomllib

    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]
    return project["optional-dependencies"]["torch"]


def test_torch_extra_accepts_a_range():
    """A library takes the torch its user has: the extra names a lower bound, never one release."""
    from packaging.requirements import Requirement

    [requirement] = [Requirement(r) for r in _torch_extra()]
    assert requirement.name == "torch"
    assert not any(spec.operator in ("==", "===", "~=") for spec in requirement.specifier), requirement
    assert requirement.specifier.contains("2.13.0") and requirement.specifier.contains("3.0.0")


def test_constraints_pin_the_torch_ci_tests():
    """The development install is reproducible: constraints.txt pins one torch that the extra admits."""
    from packaging.requirements import Requirement

    lines = [line.strip() for line in (CHECKOUT / "constraints.txt").read_text().splitlines()]
    pins = [Requirement(line) for line in lines if line and not line.startswith("#")]
    [torch] = [pin for pin in pins if pin.name == "torch"]
    [spec] = torch.specifier
    assert spec.operator == "=="
    [extra] = [Requirement(r) for r in _torch_extra()]
    assert extra.specifier.contains(spec.version)


def test_readme_and_ci_install_with_the_constraints():
    readme = (CHECKOUT / "README.md").read_text()
    installs = [line for line in readme.splitlines() if line.startswith("pip install ")]
    assert len(installs) == 2 and all(" -c constraints.txt " in line for line in installs)
    ci = (CHECKOUT / ".ci" / "run").read_text()
    ci_installs = [line for line in ci.splitlines() if "pip install" in line and "-e '" in line]
    assert ci_installs and all("-c constraints.txt" in line for line in ci_installs)
