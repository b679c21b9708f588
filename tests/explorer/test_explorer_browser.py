"""The explorer in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

What is clicked and checked:

- the ``--html`` export of examples/csr_spmm.py, opened from a file: it requests nothing but
  itself; clicking the stage-III accumulate line pins script line 28 (and only it) and the
  stage-II line it came through; hovering script line 27 lights the stage-III init store;
  stepping with the next button through the six schedule steps shows each step's program in the
  stage-II/III panes; picking a step and a pass in the side lists shows their diffs;
- the server: the script is edited in the page into one with a syntax error, and the error
  shows with its line and column (in the gutter, the error box and the status line); an edit
  that imports os is refused the same way and runs nothing; a good edit recompiles every pane.
"""

from __future__ import annotations

import shutil
import threading

import pytest

from sparsetir.cli import main
from sparsetir.explorer import Script
from sparsetir.explorer.server import ExplorerServer
from explorer_helpers import EXAMPLE, SCRIPT_NAME, example_history, example_text

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed: the browser tests need Debian's chromium (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    tab.errors = []
    tab.requests = []
    tab.on("pageerror", lambda err: tab.errors.append(str(err)))
    tab.on("request", lambda req: tab.requests.append(req.url))
    yield tab
    context.close()


def row(page, kind, text):
    return page.locator(f'.pane[data-kind="{kind}"] .row', has_text=text).first


def script_row(page, number):
    return page.locator(f'.pane[data-kind="script"] .row:has(.lineno:text-is("{number}"))')


def classes(locator):
    return locator.get_attribute("class").split()


def test_the_export_links_lines_and_replays_the_schedule(page, tmp_path, capsys):
    out = tmp_path / "csr_spmm.html"
    assert main(["explore", str(EXAMPLE), "--html", str(out)]) == 0
    capsys.readouterr()
    page.goto(out.as_uri())
    assert page.title() == f"csr_spmm \u2014 {EXAMPLE} · sparsetir explorer"

    row(page, "stage3", "c[vi, vk] = c[vi, vk] + a").click(position={"x": 30, "y": 5})
    assert "pinned" in classes(script_row(page, 28))
    assert "pinned" not in classes(script_row(page, 27)) and "pinned" not in classes(script_row(page, 25))
    assert "pinned" in classes(row(page, "stage2", "C[vi, vk] = C[vi, vk] + A[vi, vj]"))
    script_row(page, 27).hover()
    assert "hot" in classes(row(page, "stage3", "c[vi, vk] = T.float32(0.0)"))
    assert "hot" not in classes(row(page, "stage3", "c[vi, vk] = c[vi, vk] + a"))

    steps = example_history()
    expected = {2: ("stage2", "k_1"), 4: ("stage2", "T.vectorized"), 5: ("stage2", "T.parallel"), 6: ("stage3", "T.parallel")}
    for number in range(1, len(steps) + 1):
        page.click("#next-step")
        assert page.inner_text("#view-label").startswith(f"after step {number} of {len(steps)}: {steps[number - 1].primitive}(")
        assert "current" in classes(page.locator(f'#steps li[data-step="{number}"]'))
        if number in expected:
            kind, text = expected[number]
            assert text in page.inner_text(f'.pane[data-kind="{kind}"]')
    assert page.is_disabled("#next-step")

    page.click('#steps li[data-step="3"]')
    assert page.inner_text("#view-label").startswith("after step 3 of 6: reorder(")
    diff = page.locator('.pane[data-kind="diff"]')
    assert "after step 3: reorder(" in diff.locator(".info").inner_text()
    assert diff.locator(".row.add").count() > 0 and diff.locator(".row.del").count() > 0

    page.click('#steps li[data-step="0"]')
    page.click('#passes li[data-pass="auto_decompose_reduction"]')
    assert "after pass auto_decompose_reduction" in diff.locator(".info").inner_text()
    assert "csr_spmm1_init" in "".join(diff.locator(".row.add").all_inner_texts())

    assert page.errors == []
    assert page.requests == [out.as_uri()]  # the page loads nothing, not even from disk


@pytest.fixture
def server():
    srv = ExplorerServer(Script(example_text(), SCRIPT_NAME, history=example_history()).explore(), 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def test_the_server_shows_a_located_error_and_recompiles(page, server, tmp_path):
    page.goto(server.url)
    page.click("#edit")
    editor = page.locator(".editor textarea")
    assert editor.input_value() == example_text()

    editor.fill(example_text().replace("T.float32(0)", "T.float32(0"))
    page.click("#compile")
    problem = page.locator("#problem")
    problem.wait_for()
    assert problem.inner_text().startswith("line 27, column 32\nexamples/csr_spmm.py:27:32: error: invalid Python syntax: '(' was never closed")
    assert page.locator(".editor .gutter .error").inner_text().strip() == "27"
    assert page.inner_text("#status") == "error at line 27, column 32: invalid Python syntax: '(' was never closed"

    canary = tmp_path / "canary"
    editor.fill(f"import os\nos.system('touch {canary}')\n" + example_text())
    page.click("#compile")
    # A locator waits inside Playwright's own world; a wait_for_function string would be evaluated
    # in the page, which the explorer's CSP (no 'unsafe-eval') refuses once the wait must poll.
    page.locator("#problem", has_text="line 2, column 1").wait_for()
    assert problem.inner_text().startswith("line 2, column 1")
    assert "a script file holds imports and @T.prim_func functions only" in problem.inner_text()
    assert not canary.exists()

    editor.fill(example_text().replace("T.float32(0)", "T.float32(1)"))
    page.click("#compile")
    page.locator('.pane[data-kind="script"] .rows').wait_for()
    sync_api.expect(page.locator("#status")).to_have_text("compiled csr_spmm")
    assert "T.float32(1.0)" in page.inner_text('.pane[data-kind="stage3"]')
    assert "T.float32(1)" in script_row(page, 27).inner_text()
    assert page.errors == []
    assert all(url.startswith(server.url) for url in page.requests)
