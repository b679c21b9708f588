"""The explorer page: one HTML file holding its stylesheet, its script and the document.

The same page serves both modes: saved as a file (``--html``, Jupyter) it works offline, and
the server sends it as its only page, with the script editor (``static/editor.js``, CodeMirror 6
bundled from npm by ``tools/explorer-editor``; its licenses in ``static/editor.LICENSES.txt``). Nothing is loaded from anywhere: the Content Security
Policy in the page forbids every fetch except, in server mode, to the server itself.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from string import Template
from typing import Any

from .highlight import stylesheet

#: the policy of a saved page: inline style and script, nothing fetched
STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
#: the policy of the served page: the same, plus requests to the server it came from
SERVER_CSP = STATIC_CSP + "; connect-src 'self'"


#: the page's own script, in the order it is inlined: helpers first, the app last
SCRIPTS = ("layout.js", "share.js", "explorer.js")
#: the script editor (CodeMirror 6, bundled by tools/explorer-editor), inlined in served pages only
EDITOR = "editor.js"


def render_page(document: dict[str, Any], *, served: bool = False) -> str:
    """The page showing ``document``; ``served`` for the server (which answers edits, so its
    page also carries the editor)."""
    css, template = _asset("explorer.css"), _asset("explorer.html")
    js = "\n".join(_asset(name) for name in SCRIPTS)
    editor = _asset(EDITOR) if served and document.get("editable") else ""
    for text, end in ((css, "</style"), (js, "</script"), (editor, "</script")):
        if end in text.lower():
            raise ValueError(f"an explorer asset contains {end!r} and cannot be inlined")
    return Template(template).substitute(
        csp=SERVER_CSP if served else STATIC_CSP,
        title=html.escape(str(document.get("title", ""))),
        css=css,
        highlight_css=stylesheet(),
        editor=f"<script>\n{editor}\n</script>" if editor else "",
        js=js,
        data=embedded_json(document),
    )


def embedded_json(value: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: every ``<``, ``>`` and ``&`` escaped, so
    no text in it (a script line reading ``</script>``) can end the element."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")
