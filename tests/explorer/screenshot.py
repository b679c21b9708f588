"""Take the README's screenshot of the explorer: ``python tests/explorer/screenshot.py docs/explorer.png``.

It exports examples/csr_spmm.py (with its schedule), opens the page in headless Chromium, goes
to step 5 of the schedule, shows the script, stage III and the LLVM IR, and pins script line 28.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

CHECKOUT = Path(__file__).resolve().parents[2]


def main(out: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "explorer.html"
        subprocess.run([sys.executable, "-m", "sparsetir", "explore", "examples/csr_spmm.py", "--html", str(page_file)],
                       cwd=CHECKOUT, check=True)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=shutil.which("chromium"))
            page = browser.new_page(viewport={"width": 1600, "height": 880})
            page.goto(page_file.as_uri())
            for _ in range(5):
                page.click("#next-step")
            page.select_option(".pane:nth-of-type(2) select.kind", "stage3")
            page.select_option(".pane:nth-of-type(3) select.kind", "code")
            page.click('.pane[data-kind="script"] .row:has(.lineno:text-is("28"))', position={"x": 30, "y": 5})
            page.mouse.move(5, 875)
            page.screenshot(path=out)
            browser.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/explorer.png")
