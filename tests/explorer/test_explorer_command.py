"""``sparsetir explore``: the single-file export, the server, and errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request

from sparsetir.cli import main
from sparsetir.transforms import pipeline
from explorer_helpers import CHECKOUT, EXAMPLE, example_history, page_document, pane_text


def explore(capsys, *argv):
    code = main(["explore", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_html_export_holds_every_stage_the_code_the_passes_and_the_steps(capsys, tmp_path):
    out = tmp_path / "out.html"
    code, stdout, err = explore(capsys, str(EXAMPLE), "--html", str(out))
    assert code == 0, err
    assert re.fullmatch(rf"sparsetir explore: wrote {re.escape(str(out))} \(\d+ KiB; 6 schedule steps\)\n", stdout)
    page = out.read_text()
    doc = page_document(page)
    assert doc["func"] == "csr_spmm" and doc["file"] == str(EXAMPLE) and not doc["editable"]
    view = doc["views"][0]
    assert "T.sp_iter" in pane_text(doc, view["stage1"])
    assert 'T.sblock("csr_spmm1")' in pane_text(doc, view["stage2"])
    assert 'T.sblock("csr_spmm1_update")' in pane_text(doc, view["stage3"])
    assert "define" in pane_text(doc, view["code"]) and doc["code_format"] == "ll"
    assert [p["name"] for p in view["passes"]] == [p.name for p in pipeline.PASSES]
    assert [s["primitive"] for s in doc["steps"]] == [s.primitive for s in example_history()]
    assert doc["steps_error"] is None  # examples/csr_spmm.schedule.json replays on the example
    assert "default-src 'none'" in page and not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)


def test_func_schedule_and_code_options(capsys, tmp_path):
    out = tmp_path / "asm.html"
    history = tmp_path / "none.json"
    history.write_text('{"initial": "", "steps": [], "stage": 1}')
    code, _, err = explore(capsys, str(EXAMPLE), "--func", "csr_spmm", "--schedule", str(history), "--code", "asm",
                           "--html", str(out))
    assert code == 0, err
    doc = page_document(out.read_text())
    assert doc["code_format"] == "asm" and doc["steps"] == [] and doc["steps_note"] is None
    assert ".loc" in pane_text(doc, doc["views"][0]["code"])


def test_errors_are_reported_with_their_location(capsys, tmp_path):
    code, _, err = explore(capsys, str(EXAMPLE), "--func", "nope", "--html", str(tmp_path / "x.html"))
    assert code == 1 and err == f"sparsetir explore: {EXAMPLE} has no function 'nope'; it has csr_spmm\n"
    bad = tmp_path / "bad.py"
    bad.write_text(EXAMPLE.read_text().replace("T.float32(0)", "T.float32(0"))
    code, _, err = explore(capsys, str(bad), "--html", str(tmp_path / "x.html"))
    assert code == 1 and err.startswith(f"{bad}:27:32: error: invalid Python syntax: '(' was never closed")
    code, _, err = explore(capsys, str(tmp_path / "absent.py"), "--html", str(tmp_path / "x.html"))
    assert code == 1 and "absent.py" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    code, _, err = explore(capsys, str(EXAMPLE), "--schedule", str(broken), "--html", str(tmp_path / "x.html"))
    assert code == 1 and err.startswith(f"sparsetir explore: {broken}: not a schedule history written by sch.history.to_json()")
    assert not (tmp_path / "x.html").exists()
    code, _, err = explore(capsys, str(EXAMPLE), "--compile-timeout", "0")
    assert code == 1 and err == "sparsetir explore: --compile-timeout 0: expected a positive number of seconds\n"


def test_the_command_serves_on_127_0_0_1(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT)}
    proc = subprocess.Popen([sys.executable, "-m", "sparsetir", "explore", str(EXAMPLE), "--no-browser"],
                            cwd=CHECKOUT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:(\d+)/) \(Ctrl\+C stops\)$", line.strip())
        assert found, line + proc.stderr.read() if proc.poll() is not None else line
        with urllib.request.urlopen(found.group(1), timeout=60) as response:
            page = response.read().decode()
        assert page_document(page)["editable"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=30)
