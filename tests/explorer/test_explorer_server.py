"""The explorer server: 127.0.0.1 only, its own page only, edits only through the allow-list
parser, compiles in a worker process within a time limit, cancelled when nobody waits for them."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import sparsetir
from sparsetir.explorer import Script, explore
from sparsetir.explorer.compiler import Compiler
from sparsetir.explorer.server import ExplorerServer
from explorer_helpers import CHECKOUT, EXAMPLE, SCRIPT_NAME, SLOW, example_history, example_text, line_of, page_document, slow_job


@pytest.fixture(scope="module")
def server():
    exploration = Script(example_text(), SCRIPT_NAME, history=example_history()).explore()
    srv = ExplorerServer(exploration, 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def started(srv):
    """Serve ``srv`` on a thread; the server is returned."""
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def stop(srv):
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


def compile_request(srv, script, func=None, client=None, **headers):
    return request(srv, "POST", "/api/compile", {"script": script, "func": func, "client": client},
                   {"Origin": f"http://127.0.0.1:{srv.port}", **headers})


def wait_until(condition, seconds=120.0):
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a killed child not yet reaped is a zombie
        return stat.read().split(") ", 1)[1][0] != "Z"


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
    assert answer["error"]["message"] == "a script file holds imports, @T.prim_func functions, @T.macro helpers and @I.ir_module classes only"
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
        assert status == 400 and answer["error"]["message"] == 'expected {"script": text, "func": name or null, "client": id}'
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


def test_a_renamed_function_is_shown_whatever_its_name(server):
    renamed = example_text().replace("def csr_spmm(", "def my_spmm(")
    status, _, answer = compile_request(server, renamed, func="csr_spmm")
    assert status == 200, answer
    assert answer["document"]["func"] == "my_spmm" and answer["document"]["func_note"] is None
    status, _, answer = compile_request(server, example_text(), func="my_spmm")
    assert status == 200 and answer["document"]["func"] == "csr_spmm"


@pytest.fixture(scope="module")
def slow_server():
    """A server whose compiles of a script holding ``SLOW`` take ten minutes."""
    srv = started(ExplorerServer(Script(example_text(), SCRIPT_NAME, history=example_history()).explore(), 0,
                                 compiler=Compiler(60, job=slow_job)))
    yield srv
    stop(srv)


#: a script that fails to parse: its compile ends at once (after the worker's start)
BROKEN = example_text().replace("T.float32(0)", "T.float32(0")


def compile_in_thread(srv, script, client):
    answers = []
    thread = threading.Thread(target=lambda: answers.append(compile_request(srv, script, client=client)), daemon=True)
    thread.start()
    return thread, answers


def test_a_slow_compile_does_not_hold_up_page_loads(slow_server):
    thread, answers = compile_in_thread(slow_server, SLOW + example_text(), "slow-client")
    wait_until(lambda: slow_server.compiler.running())
    (pid,) = slow_server.compiler.running()
    for _ in range(3):
        start = time.monotonic()
        status, _, page = request(slow_server, "GET", "/")
        assert status == 200 and time.monotonic() - start < 1.0
    assert answers == [] and alive(pid)
    compile_request(slow_server, BROKEN, client="slow-client")  # replaces the slow one
    thread.join(30)
    assert answers[0][0] == 409


def test_a_newer_compile_from_the_same_client_cancels_the_older(slow_server):
    thread, answers = compile_in_thread(slow_server, SLOW + example_text(), "client-a")
    wait_until(lambda: slow_server.compiler.running())
    (pid,) = slow_server.compiler.running()
    other, other_answers = compile_in_thread(slow_server, SLOW + example_text(), "client-b")
    wait_until(lambda: len(slow_server.compiler.running()) == 2)
    status, _, answer = compile_request(slow_server, BROKEN, client="client-a")
    assert status == 422 and answer["error"]["line"] == 27  # the newer one's own answer
    thread.join(30)
    status, _, answer = answers[0]
    assert status == 409 and answer["status"] == "cancelled"
    assert answer["error"]["message"] == "a newer compile replaced this one"
    assert not alive(pid)
    assert other_answers == [] and len(slow_server.compiler.running()) == 1  # another client's goes on
    compile_request(slow_server, BROKEN, client="client-b")
    other.join(30)
    assert other_answers[0][0] == 409


def test_a_compile_is_stopped_when_its_client_goes_away(slow_server):
    body = json.dumps({"script": SLOW + example_text(), "func": None, "client": "leaving"}).encode()
    sock = socket.create_connection(("127.0.0.1", slow_server.port))
    sock.sendall(f"POST /api/compile HTTP/1.1\r\nHost: 127.0.0.1:{slow_server.port}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    wait_until(lambda: slow_server.compiler.running())
    (pid,) = slow_server.compiler.running()
    sock.close()
    wait_until(lambda: not slow_server.compiler.running(), 10)
    wait_until(lambda: not alive(pid), 10)


def test_a_compile_past_its_time_limit_ends_in_a_located_message():
    srv = started(ExplorerServer(Script(example_text(), SCRIPT_NAME, history=example_history()).explore(), 0,
                                 compile_timeout=0.05))
    try:
        before = srv.exploration
        status, _, answer = compile_request(srv, example_text())
        assert status == 504 and answer["status"] == "timeout"
        assert answer["error"]["message"] == (f"{SCRIPT_NAME}: the compile took longer than 0.05 s and was stopped "
                                              "(sparsetir explore --compile-timeout SECONDS raises the limit)")
        assert answer["error"]["file"] == SCRIPT_NAME
        assert srv.compiler.running() == [] and srv.exploration is before
    finally:
        stop(srv)


def test_a_stalled_client_is_dropped():
    srv = started(ExplorerServer(explore(example_function_at_stage_3()), 0, client_timeout=0.5))
    try:
        sock = socket.create_connection(("127.0.0.1", srv.port))
        sock.settimeout(30)
        sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n".encode())  # and never the blank line
        start = time.monotonic()
        assert sock.recv(1024) == b""  # the server closed the connection
        assert time.monotonic() - start < 10
        sock.close()
    finally:
        stop(srv)


def example_function_at_stage_3():
    return sparsetir.lower_sparse_buffer(sparsetir.lower_sparse_iter(sparsetir.parse(example_text(), SCRIPT_NAME)))


def test_a_worker_does_not_rerun_the_script_that_started_the_server(tmp_path):
    """``sparsetir.explore(sch).serve()`` is called from scripts without a ``__main__`` guard; a
    worker started by multiprocessing's spawn would run such a script again."""
    main = tmp_path / "unguarded.py"
    main.write_text(f"""import sys
sys.path[:0] = {[str(CHECKOUT)]!r}
from sparsetir.explorer import Script
from sparsetir.explorer.compiler import Compiler
print("started", flush=True)
text = open({str(EXAMPLE)!r}).read()
compiler = Compiler(120)
print(compiler.compile(Script(text, "unguarded.py", default_schedule=False), text, None).status, flush=True)
compiler.close()
""")
    done = subprocess.run([sys.executable, str(main)], capture_output=True, text=True, timeout=280, cwd=tmp_path)
    assert done.stdout == "started\nok\n", done.stderr
