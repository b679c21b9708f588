"""The explorer's local server: the page, and recompiling the script edited in it.

It is the standard library's ``ThreadingHTTPServer`` (a thread per request), with these limits:

- it listens on 127.0.0.1 only (no option to listen elsewhere);
- it answers only requests whose ``Host`` is this server (``127.0.0.1:PORT`` or
  ``localhost:PORT``): a page on another site cannot reach it through a DNS name rebound to
  127.0.0.1;
- it serves its own page at ``/`` and nothing else (no file is read from a request's path);
- ``POST /api/compile`` takes ``{"script": text, "func": name}`` as JSON (at most 1 MiB), only
  from its own page: a request whose ``Origin`` (or ``Sec-Fetch-Site``) names another origin is
  refused, and a cross-site form cannot send JSON;
- the script is read by ``sparsetir.parse``, the allow-list parser, which never evaluates
  text; a script that is not one (Python, say) gets the parser's located error, and nothing
  from a request is ever run;
- a compile runs in a worker process (``compiler.Compiler``) within a time limit, and is
  cancelled when its client goes away or sends a newer one, so that no compile holds up a page
  load or another client; a client that stalls mid-request is dropped after ``client_timeout``.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import webbrowser
from dataclasses import replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

from ..errors import SparseTIRError
from .compiler import DEFAULT_TIMEOUT, Compiler
from .exploration import Exploration
from .page import SERVER_CSP

HOST = "127.0.0.1"
MAX_BODY = 1 << 20
COMPILE_PATH = "/api/compile"
#: how long a client may stall in the middle of a request before it is dropped, in seconds
CLIENT_TIMEOUT = 20.0
#: the answer to each way a compile ends (``Outcome.status``)
COMPILE_STATUS = {"error": HTTPStatus.UNPROCESSABLE_ENTITY, "timeout": HTTPStatus.GATEWAY_TIMEOUT,
                  "cancelled": HTTPStatus.CONFLICT, "failed": HTTPStatus.INTERNAL_SERVER_ERROR}


class ExplorerServer(ThreadingHTTPServer):
    """An explorer server on 127.0.0.1; ``exploration`` is what its page shows now (the last
    edit that compiled). ``compile_timeout`` bounds one compile, ``client_timeout`` a stalled
    client, both in seconds; ``compiler`` runs the compiles (by default a ``Compiler`` with
    ``compile_timeout``)."""

    daemon_threads = True

    def __init__(self, exploration: Exploration, port: int = 0, log: bool = False, *,
                 compile_timeout: float = DEFAULT_TIMEOUT, client_timeout: float = CLIENT_TIMEOUT,
                 compiler: Optional[Compiler] = None):
        super().__init__((HOST, port), _Handler)
        self.exploration = exploration
        self.log = log
        self.client_timeout = client_timeout
        self.compiler = compiler or Compiler(compile_timeout)
        if exploration.script is not None:
            self.compiler.start()
        self.lock = threading.Lock()  # guards exploration and its cached page
        self._page: Optional[tuple[Exploration, bytes]] = None

    def page(self) -> bytes:
        """The page of the exploration shown now, rendered once per exploration."""
        with self.lock:
            exploration, cached = self.exploration, self._page
        if cached is not None and cached[0] is exploration:
            return cached[1]
        page = exploration.html(served=True).encode("utf-8")
        with self.lock:
            self._page = (exploration, page)
        return page

    def server_close(self) -> None:
        super().server_close()
        self.compiler.close()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The address of the page."""
        return f"http://{HOST}:{self.port}/"

    def hosts(self) -> set[str]:
        """The ``Host`` values that name this server."""
        return {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    def origins(self) -> set[str]:
        """The origins of this server's own page."""
        return {f"http://{host}" for host in self.hosts()}


class _Handler(BaseHTTPRequestHandler):
    server: ExplorerServer
    server_version = "sparsetir-explorer"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.client_timeout  # StreamRequestHandler sets it on the socket
        super().setup()

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if not self._host_ok():
            return
        if self.path.split("?", 1)[0] not in ("/", "/index.html"):
            return self._send_json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no such page: {self.path}"}})
        self._send(HTTPStatus.OK, self.server.page(), "text/html; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok() or not self._origin_ok():
            return
        if self.path != COMPILE_PATH:
            return self._send_json(HTTPStatus.NOT_FOUND, {"error": {"message": f"no such endpoint: {self.path}"}})
        request = self._read_json()
        if request is None:
            return
        script = self.server.exploration.script
        if script is None:
            return self._refuse(HTTPStatus.FORBIDDEN, "this exploration has no script file to edit")
        try:
            outcome = self.server.compiler.compile(script, request["script"], request.get("func"),
                                                   client=request.get("client") or "", gone=self._client_gone)
        except SparseTIRError as err:  # shutting down
            return self._refuse(HTTPStatus.SERVICE_UNAVAILABLE, str(err))
        if outcome.status != "ok":
            if outcome.status == "cancelled" and self._client_gone():
                return  # nobody to answer
            return self._send_json(COMPILE_STATUS[outcome.status], {"error": outcome.value, "status": outcome.status})
        document = outcome.value
        with self.server.lock:
            self.server.exploration = Exploration(document, replace(script, text=request["script"], func=document["func"]))
        self._send_json(HTTPStatus.OK, {"document": document})

    def _client_gone(self) -> bool:
        """Whether the client has closed its connection (it reads as the end of the stream)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    # -- checks ----------------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        if self.headers.get("Host", "") in self.server.hosts():
            return True
        self._refuse(HTTPStatus.FORBIDDEN, "refused: the Host header does not name this server")
        return False

    def _origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        site = self.headers.get("Sec-Fetch-Site")
        if origin is not None and origin not in self.server.origins():
            self._refuse(HTTPStatus.FORBIDDEN, f"refused: a request from another origin ({origin})")
            return False
        if site is not None and site not in ("same-origin", "none"):
            self._refuse(HTTPStatus.FORBIDDEN, f"refused: a {site} request")
            return False
        return True

    def _read_json(self) -> Optional[dict[str, Any]]:
        if self.headers.get("Content-Type", "").split(";", 1)[0].strip() != "application/json":
            self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the script as application/json")
            return None
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._refuse(HTTPStatus.LENGTH_REQUIRED, "a Content-Length is required")
            return None
        if not 0 <= length <= MAX_BODY:
            self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"a script is at most {MAX_BODY} bytes")
            return None
        try:
            request = json.loads(self.rfile.read(length))
        except (ValueError, UnicodeDecodeError):
            request = None
        if not (isinstance(request, dict) and isinstance(request.get("script"), str)
                and isinstance(request.get("func"), (str, type(None)))
                and isinstance(request.get("client"), (str, type(None))) and len(request.get("client") or "") <= 100):
            self._refuse(HTTPStatus.BAD_REQUEST, 'expected {"script": text, "func": name or null, "client": id}')
            return None
        return request

    # -- answers ---------------------------------------------------------------------------------

    def _refuse(self, status: HTTPStatus, message: str) -> None:
        self._send_json(status, {"error": {"message": message}})

    def _send_json(self, status: HTTPStatus, value: Any) -> None:
        self._send(status, json.dumps(value, separators=(",", ":")).encode("utf-8"), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", SERVER_CSP + "; frame-ancestors 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the page went away: nobody to answer
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
        if self.server.log:
            sys.stderr.write(f"sparsetir explore: {self.address_string()} {format % args}\n")


def serve(exploration: Exploration, port: int = 0, open_browser: bool = True, log: bool = True,
          compile_timeout: float = DEFAULT_TIMEOUT) -> None:
    """Serve ``exploration`` on 127.0.0.1:``port`` (0: a free port) until interrupted; a compile
    of an edit is stopped after ``compile_timeout`` seconds."""
    server = ExplorerServer(exploration, port, log, compile_timeout=compile_timeout)
    print(f"sparsetir explore: serving {exploration.document['title']} at {server.url} (Ctrl+C stops)", flush=True)
    if open_browser:
        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
