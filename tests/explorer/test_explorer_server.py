"""The explorer server: 127.0.0.1 only, its own page only, edits only through the allow-list parser."""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest

import sparsetir
from sparsetir.explorer import Script, explore
from sparsetir.explorer.server import ExplorerServer
from explorer_helpers import SCRIPT_NAME, example_history, example_text, line_of, page_document


@pytest.fixture(scope="module")
def server():
    exploration = Script(example_text(), SCRIPT_NAME, history=example_history()).explore()
    srv = ExplorerServer(exploration, 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def request(srv, method, path, body=None, headers=None):
    """(status, headers, parsed body) of one request; ``Host`` is the server's unless given."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    sent = {"Host": f"127.0.0.1:{srv.port}", **(headers or {})}
    if isinstance(body, dict):
        body = json.dumps(body)
        sent.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    kind = response.getheader("Content-Type", "")
    return response.status, response, json.loads(data) if kind.startswith("application/json") else data.decode()


def compile_request(srv, script, **headers):
    return request(srv, "POST", "/api/compile", {"script": script, "func": None},
                   {"Origin": f"http://127.0.0.1:{srv.port}", **headers})


def test_it_listens_on_127_0_0_1_only(server):
    assert server.server_address[0] == "127.0.0.1"
    assert server.socket.getsockname()[0] == "127.0.0.1"
    assert server.socket.family == socket.AF_INET


def test_the_page_with_its_policy(server):
    status, response, page = request(server, "GET", "/")
    assert status == 200 and response.getheader("Content-Type") == "text/html; charset=utf-8"
    policy = response.getheader("Content-Security-Policy")
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert response.getheader("X-Content-Type-Options") == "nosniff"
    document = page_document(page)
    assert document["editable"] and len(document["steps"]) == len(example_history())


@pytest.mark.parametrize("path", ["/static/explorer.js", "/../sparsetir/__init__.py", "/etc/passwd", "/api/compile"])
def test_nothing_but_its_page(server, path):
    status, _, body = request(server, "GET", path)
    assert status == 404 and body["error"]["message"] == f"no such page: {path}"


@pytest.mark.parametrize("host", ["attacker.example", f"attacker.example:{0}", "127.0.0.1:1", "[::1]"])
def test_a_host_that_is_not_this_server_is_refused(server, host):
    """A DNS name rebound to 127.0.0.1 reaches the socket but names another host."""
    for method, body in (("GET", None), ("POST", {"script": example_text()})):
        status, _, answer = request(server, method, "/" if method == "GET" else "/api/compile", body, {"Host": host})
        assert status == 403 and "Host" in answer["error"]["message"]


def test_python_in_the_script_gets_a_located_error_and_runs_nothing(server, tmp_path):
    canary = tmp_path / "canary"
    before = server.exploration
    module = f"import os\nos.system('touch {canary}')\n" + example_text()
    status, _, answer = compile_request(server, module)
    assert status == 422
    assert answer["error"]["line"] == 2 and answer["error"]["col"] == 1
    assert answer["error"]["message"] == "a script file holds imports and @T.prim_func functions only"
    in_body = example_text().replace("C[i, k] = C[i, k] + A[i, j] * B[j, k]",
                                     f"C[i, k] = __import__('os').system('touch {canary}')")
    status, _, answer = compile_request(server, in_body)
    assert status == 422
    line = line_of("C[i, k] = C[i, k] +")
    assert (answer["error"]["line"], answer["error"]["col"]) == (line, 19)
    assert answer["error"]["message"] == "'__import__' is not allowed: scripts are never executed"
    assert answer["error"]["rendered"].startswith(f"{SCRIPT_NAME}:{line}:19: error:")
    assert not canary.exists()
    assert server.exploration is before  # a refused edit changes nothing


def test_a_request_from_another_origin_is_refused(server):
    before = server.exploration
    for headers in ({"Origin": "http://attacker.example"}, {"Origin": "null"},
                    {"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "cross-site"}):
        status, _, answer = request(server, "POST", "/api/compile", {"script": example_text()}, headers)
        assert status == 403 and "refused" in answer["error"]["message"]
    assert server.exploration is before


def test_only_json_of_bounded_size_is_read(server):
    origin = {"Origin": f"http://127.0.0.1:{server.port}"}
    # what a cross-site HTML form can send is not JSON
    status, _, answer = request(server, "POST", "/api/compile", "script=x", {**origin, "Content-Type": "text/plain"})
    assert status == 415
    # refused on its Content-Length, before any of the body is read (so none is sent here)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.putrequest("POST", "/api/compile", skip_host=True)
    for name, value in {"Host": f"127.0.0.1:{server.port}", **origin, "Content-Type": "application/json",
                        "Content-Length": str((1 << 20) + 1)}.items():
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and json.loads(response.read())["error"]["message"] == "a script is at most 1048576 bytes"
    conn.close()
    for bad in ("not json", json.dumps(["script"]), json.dumps({"script": 3})):
        status, _, answer = request(server, "POST", "/api/compile", bad, {**origin, "Content-Type": "application/json"})
        assert status == 400 and answer["error"]["message"] == 'expected {"script": text, "func": name or null}'
    status, _, _ = request(server, "POST", "/api/other", {"script": ""}, origin)
    assert status == 404


def test_an_edit_recompiles_and_replays_the_schedule(server):
    edited = example_text().replace("T.float32(0)", "T.float32(1)")
    status, _, answer = compile_request(server, edited)
    assert status == 200
    document = answer["document"]
    assert document["script_text"] == edited and len(document["steps"]) == len(example_history())
    stage3 = "\n".join(document["lines"][k] for k in document["panes"][document["views"][-1]["stage3"]]["lines"])
    assert "1.0" in stage3
    _, _, page = request(server, "GET", "/")
    assert page_document(page)["script_text"] == edited  # the page shows the last edit that compiled
    status, _, answer = compile_request(server, example_text())
    assert status == 200


def test_a_read_only_exploration_takes_no_edits():
    stage3 = sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(sparsetir.parse(example_text(), SCRIPT_NAME)))
    srv = ExplorerServer(explore(stage3), 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        status, _, answer = compile_request(srv, example_text())
        assert status == 403 and answer["error"]["message"] == "this exploration has no script file to edit"
        _, _, page = request(srv, "GET", "/")
        assert page_document(page)["editable"] is False
    finally:
        srv.shutdown()
        srv.server_close()
