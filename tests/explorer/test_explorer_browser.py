"""The explorer in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

What is clicked and checked:

- the ``--html`` export of examples/csr_spmm.py, opened from a file: it requests nothing but
  itself; clicking the stage-III accumulate line pins script line 28 (and only it) and the
  stage-II line it came through; hovering script line 27 lights the stage-III init store, and
  ``with T.init()`` (line 26) the init block; every linked script line has its own colour;
  stepping with the next button through the six schedule steps shows each step's program in the
  stage-II/III panes; picking a step and a pass in the side lists shows their diffs, and a
  step's diff of the generated code; ``[`` / ``]`` step while the arrow keys scroll; dragging the
  handles resizes the panes and the side bar; the wrap toggle wraps long lines; the scroll
  position of every pane survives a step; the link in the address bar reopens the same view;
- the server: the script is edited in CodeMirror into one with a syntax error, and the error
  shows with its line and column (in the gutter, the error box and the status line); an edit
  that imports os is refused the same way and runs nothing; a good edit recompiles every pane;
  Tab indents in the editor; a renamed function compiles; a compile past the time limit says
  so; a link holding an edited script reopens it compiled.
"""

from __future__ import annotations

import json
import shutil
import threading
import urllib.request

import pytest

from sparsetir.cli import main
from sparsetir.explorer import Script
from sparsetir.explorer.server import ExplorerServer
from explorer_helpers import EXAMPLE, SCRIPT_NAME, example_history, example_text

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sync_api.expect.set_options(timeout=60_000)  # a compile in a worker just started takes a few seconds


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


def box(locator):
    return locator.bounding_box()


def scroller(page, kind):
    return page.locator(f'.pane[data-kind="{kind}"] .body')


def prop(locator, name):
    """A DOM property of the element (read by Playwright, not by a script of the page's)."""
    return locator.evaluate(f"(e) => e.{name}")


def wait_for_url(page, *parts):
    """The page's address once it holds every part (the page writes its fragment asynchronously)."""
    for _ in range(200):
        if all(part in page.url for part in parts):
            return page.url
        page.wait_for_timeout(25)
    raise AssertionError(f"the address {page.url} never held {parts}")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The ``--html`` export of the example, written once for the module."""
    out = tmp_path_factory.mktemp("export") / "csr_spmm.html"
    assert main(["explore", str(EXAMPLE), "--html", str(out)]) == 0
    return out


def test_the_export_links_lines_and_replays_the_schedule(page, exported):
    out = exported
    page.goto(out.as_uri())
    assert page.title() == f"csr_spmm \u2014 {EXAMPLE} · sparsetir explorer"

    row(page, "stage3", "c[vi, vk] = c[vi, vk] + a").click(position={"x": 30, "y": 5})
    assert "pinned" in classes(script_row(page, 28))
    assert "pinned" not in classes(script_row(page, 27)) and "pinned" not in classes(script_row(page, 25))
    assert "pinned" in classes(row(page, "stage2", "C[vi, vk] = C[vi, vk] + A[vi, vj]"))
    script_row(page, 27).hover()
    assert "hot" in classes(row(page, "stage3", "c[vi, vk] = T.float32(0.0)"))
    assert "hot" not in classes(row(page, "stage3", "c[vi, vk] = c[vi, vk] + a"))
    script_row(page, 26).hover()  # with T.init(): the init block and its store
    assert "hot" in classes(row(page, "stage3", 'T.sblock("csr_spmm1_init")'))
    assert "hot" in classes(row(page, "stage3", "c[vi, vk] = T.float32(0.0)"))
    assert "hot" in classes(row(page, "stage2", "with T.init():"))
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


def test_every_linked_script_line_has_its_own_colour(page, exported):
    page.goto(exported.as_uri())
    page.mouse.move(5, 890)
    tinted = page.locator('.pane[data-kind="script"] .row.tinted')
    lines = [int(t) for t in tinted.locator(".lineno").all_inner_texts()]
    assert set(range(18, 29)) <= set(lines)  # every statement of the function
    colours = [prop(tinted.nth(k), "style.getPropertyValue('--tint')") for k in range(tinted.count())]
    assert len(set(colours)) == len(colours), dict(zip(lines, colours))
    # a stage-III line has the colour of its most specific script line
    assert prop(row(page, "stage3", "c[vi, vk] = T.float32(0.0)"), "style.getPropertyValue('--tint')") == colours[lines.index(27)]


def test_keys_step_through_the_schedule_and_leave_the_arrows_to_scroll(page, exported):
    page.goto(exported.as_uri())
    page.select_option(".pane:nth-of-type(3) select.kind", "code")
    code = scroller(page, "code")
    code.click(position={"x": 200, "y": 100})
    for _ in range(5):
        page.keyboard.press("ArrowDown")
    page.wait_for_timeout(300)  # smooth scrolling
    assert prop(code, "scrollTop") > 0
    assert page.inner_text("#view-label") == "before step 1 of 6"
    page.keyboard.press("]")
    assert page.inner_text("#view-label").startswith("after step 1 of 6")
    page.keyboard.press("Alt+ArrowRight")
    assert page.inner_text("#view-label").startswith("after step 2 of 6")
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert page.inner_text("#view-label") == "before step 1 of 6"
    assert "[" in page.inner_text("#side .help") and "]" in page.inner_text("#side .help")
    assert page.errors == []


def test_every_pane_keeps_its_scroll_position_across_steps(page, exported):
    page.set_viewport_size({"width": 1500, "height": 500})  # stage II scrolls too
    page.goto(exported.as_uri())
    page.select_option(".pane:nth-of-type(3) select.kind", "code")
    code, stage2 = scroller(page, "code"), scroller(page, "stage2")
    code.evaluate("(e) => { e.scrollTop = 3000; }")
    stage2.evaluate("(e) => { e.scrollTop = 100; e.scrollLeft = 50; }")
    assert (prop(code, "scrollTop"), prop(stage2, "scrollTop"), prop(stage2, "scrollLeft")) == (3000, 100, 50)
    for key in ("]", "]", "["):
        page.keyboard.press(key)
        assert (prop(code, "scrollTop"), prop(stage2, "scrollTop"), prop(stage2, "scrollLeft")) == (3000, 100, 50)
    assert page.inner_text("#view-label").startswith("after step 1 of 6")


def test_dragging_a_handle_resizes_the_panes(page, exported):
    page.goto(exported.as_uri())
    first, second = page.locator(".pane").nth(0), page.locator(".pane").nth(1)
    before = box(first)["width"], box(second)["width"]
    handle = box(page.locator('#panes .handle[data-between="1"]'))
    x, y = handle["x"] + handle["width"] / 2, handle["y"] + 200
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 100, y, steps=4)
    page.mouse.move(x + 200, y, steps=4)
    page.mouse.up()
    after = box(first)["width"], box(second)["width"]
    assert after[0] == pytest.approx(before[0] + 200, abs=2) and after[1] == pytest.approx(before[1] - 200, abs=2)
    page.keyboard.press("]")  # the panes are drawn again at their new sizes
    assert (box(page.locator(".pane").nth(0))["width"], box(page.locator(".pane").nth(1))["width"]) == pytest.approx(after, abs=1)
    side = box(page.locator("#side"))["width"]
    bar = box(page.locator("#side-handle"))
    page.mouse.move(bar["x"] + bar["width"] / 2, 300)
    page.mouse.down()
    page.mouse.move(bar["x"] + bar["width"] / 2 - 100, 300, steps=5)
    page.mouse.up()
    assert box(page.locator("#side"))["width"] == pytest.approx(side - 100, abs=2)


def test_the_wrap_toggle_wraps_long_lines(page, exported):
    page.goto(exported.as_uri())
    header = row(page, "stage3", "def csr_spmm(")
    body = scroller(page, "stage3")
    height = box(header)["height"]
    assert prop(body, "scrollWidth") > prop(body, "clientWidth")  # cut off: scroll sideways to read it
    page.click("#wrap")
    assert "on" in classes(page.locator("#wrap"))
    assert box(header)["height"] > 2 * height
    assert prop(body, "scrollWidth") <= prop(body, "clientWidth")
    page.keyboard.press("w")
    assert box(header)["height"] == height and "on" not in classes(page.locator("#wrap"))


def test_a_step_diff_of_stage_iii_and_of_the_generated_code(page, exported):
    page.goto(exported.as_uri())
    page.click('#steps li[data-step="2"]')
    diff = page.locator('.pane[data-kind="diff"]')
    assert diff.locator(".info").inner_text().startswith("after step 2: split(")
    diff.locator("select.diff-of").select_option("stage3")
    assert diff.locator(".info").inner_text().endswith("(stage III)")
    assert "k_1" in "".join(diff.locator(".row.add").all_inner_texts())
    diff.locator("select.diff-of").select_option("code")
    assert diff.locator(".info").inner_text().endswith("(generated code)")
    added = "\n".join(diff.locator(".row.add").all_inner_texts())
    assert diff.locator(".row.del").count() > 0 and "!dbg" in added  # LLVM IR
    page.keyboard.press("]")  # the diff follows the step, still of the code
    assert diff.locator(".info").inner_text().startswith("after step 3: reorder(")
    assert diff.locator(".info").inner_text().endswith("(generated code)")


def test_the_address_reopens_the_same_view(page, browser, exported):
    page.goto(exported.as_uri())
    page.click('#steps li[data-step="3"]')
    page.locator('.pane[data-kind="diff"] select.diff-of').select_option("code")
    page.select_option(".pane:nth-of-type(2) select.kind", "code")
    page.click("#wrap")
    handle = box(page.locator('#panes .handle[data-between="1"]'))
    page.mouse.move(handle["x"] + 4, 300)
    page.mouse.down()
    page.mouse.move(handle["x"] + 154, 300, steps=5)
    page.mouse.up()
    row(page, "script", "C[i, k] = C[i, k] +").click(position={"x": 30, "y": 5})
    link = wait_for_url(page, "step=3", "wrap=1", "of=code", "pin=28", "panes=script%2Ccode%2Cdiff")
    widths = [box(page.locator(".pane").nth(k))["width"] for k in range(3)]
    assert "script=" not in link  # an exported page is its own script

    other = browser.new_context(viewport={"width": 1500, "height": 900}).new_page()
    other.goto(link)
    assert other.inner_text("#view-label").startswith("after step 3 of 6: reorder(")
    assert [other.locator(".pane").nth(k).get_attribute("data-kind") for k in range(3)] == ["script", "code", "diff"]
    assert "wrap" in classes(other.locator("#panes"))
    assert [box(other.locator(".pane").nth(k))["width"] for k in range(3)] == pytest.approx(widths, abs=2)
    assert other.locator('.pane[data-kind="diff"] .info').inner_text().endswith("(generated code)")
    assert "pinned" in classes(script_row(other, 28))
    other.context.close()


@pytest.fixture(scope="module")
def served():
    original = Script(example_text(), SCRIPT_NAME, history=example_history()).explore()
    srv = ExplorerServer(original, 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv, original
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def server(served):
    """The module's server, showing the example again, with the default time limit."""
    srv, original = served
    srv.exploration = original
    srv.compiler.timeout = 30.0
    return srv


def editor_text(page):
    """The editor's text, line by line (an empty line reads as a line break)."""
    return "\n".join(t.replace("\n", "") for t in page.locator(".cm-content .cm-line").all_inner_texts())


def test_the_server_shows_a_located_error_and_recompiles(page, server, tmp_path):
    page.goto(server.url)
    page.click("#edit")
    editor = page.locator(".cm-content")
    assert editor_text(page) == example_text()

    editor.fill(example_text().replace("T.float32(0)", "T.float32(0"))
    page.click("#compile")
    problem = page.locator("#problem")
    problem.wait_for()
    assert problem.inner_text().startswith("line 27, column 32\nexamples/csr_spmm.py:27:32: error: invalid Python syntax: '(' was never closed")
    assert page.locator(".cm-gutterElement.cm-error-gutter").inner_text().strip() == "27"
    assert "T.float32(0" in page.locator(".cm-line.cm-error-line").inner_text()
    assert page.inner_text("#status") == "error at line 27, column 32: invalid Python syntax: '(' was never closed"

    canary = tmp_path / "canary"
    editor.fill(f"import os\nos.system('touch {canary}')\n" + example_text())
    page.click("#compile")
    # A locator waits inside Playwright's own world; a wait_for_function string would be evaluated
    # in the page, which the explorer's CSP (no 'unsafe-eval') refuses once the wait must poll.
    page.locator("#problem", has_text="line 2, column 1").wait_for()
    assert problem.inner_text().startswith("line 2, column 1")
    assert "a script file holds imports, @T.prim_func functions, @T.macro helpers and @I.ir_module classes only" in problem.inner_text()
    assert not canary.exists()

    editor.fill(example_text().replace("T.float32(0)", "T.float32(1)"))
    page.keyboard.press("Control+Enter")
    page.locator('.pane[data-kind="script"] .rows').wait_for()
    sync_api.expect(page.locator("#status")).to_have_text("compiled csr_spmm")
    assert "T.float32(1.0)" in page.inner_text('.pane[data-kind="stage3"]')
    assert "T.float32(1)" in script_row(page, 27).inner_text()
    assert page.errors == []
    assert all(url.startswith(server.url) for url in page.requests)


def test_tab_indents_in_the_editor(page, server):
    page.goto(server.url)
    page.click("#edit")
    line = page.locator(".cm-line", has_text="C[i, k] = C[i, k] +")
    before = line.inner_text()
    line.click()
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert line.inner_text() == "    " + before
    assert page.locator(".cm-editor.cm-focused").count() == 1  # Tab did not leave the editor
    page.keyboard.press("Shift+Tab")
    assert line.inner_text() == before
    assert page.locator(".cm-content span").count() > 20  # highlighted Python
    assert page.errors == []


def test_a_renamed_function_compiles(page, server):
    page.goto(server.url)
    page.click("#edit")
    page.locator(".cm-content").fill(example_text().replace("def csr_spmm(", "def my_spmm("))
    page.click("#compile")
    sync_api.expect(page.locator("#status")).to_have_text("compiled my_spmm")
    assert page.inner_text("#title").startswith("my_spmm")
    assert "def my_spmm(" in page.inner_text('.pane[data-kind="script"]')
    assert "T.sblock(\"csr_spmm1\")" in page.inner_text('.pane[data-kind="stage2"]')  # its global_symbol is kept


def test_a_compile_past_the_time_limit_says_so_in_the_page(page, server):
    server.compiler.timeout = 0.05
    page.goto(server.url)
    page.click("#edit")
    page.click("#compile")
    page.locator("#problem", has_text="took longer").wait_for()
    assert page.inner_text("#problem") == (f"{SCRIPT_NAME}: the compile took longer than 0.05 s and was stopped "
                                          "(sparsetir explore --compile-timeout SECONDS raises the limit)")
    assert page.inner_text("#status").startswith(f"error: {SCRIPT_NAME}: the compile took longer than 0.05 s")


def test_a_link_reopens_an_edited_script_compiled(page, browser, server):
    page.goto(server.url)
    page.click("#edit")
    edited = example_text().replace("T.float32(0)", "T.float32(3)")
    page.locator(".cm-content").fill(edited)
    page.click("#compile")
    sync_api.expect(page.locator("#status")).to_have_text("compiled csr_spmm")
    page.click('#steps li[data-step="4"]')
    link = wait_for_url(page, "step=4", "script=z")
    # the server shows the example again: the link alone brings the edit back
    request = urllib.request.Request(server.url + "api/compile", json.dumps({"script": example_text()}).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        assert answer.status == 200

    other = browser.new_context(viewport={"width": 1500, "height": 900}).new_page()
    other.goto(link)
    sync_api.expect(other.locator("#status")).to_have_text("compiled csr_spmm: the script of this link")
    assert other.inner_text("#view-label").startswith("after step 4 of 6: vectorize(")
    assert "T.float32(3)" in other.locator('.pane[data-kind="script"]').inner_text()
    assert "T.float32(3)" in other.inner_text('.pane[data-kind="stage2"]')
    other.context.close()
