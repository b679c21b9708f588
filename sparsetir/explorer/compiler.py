"""Compiles of edited scripts, each in a worker process, with a time limit, cancelled when unwanted.

A compile lowers and builds whatever the user typed: a huge unrolled loop can take minutes, and
a compile nobody waits for any more should not keep a core busy. So each compile runs in a
worker process, and the server thread that waits for it kills the worker when

- the time limit passes: the answer says ``SCRIPT: the compile took longer than N s``;
- the client that asked has gone (its connection closed);
- the same client asked for a newer compile (the older answer would only be thrown away).

A killed worker is replaced. One idle worker is kept started, so that a compile does not wait
for Python and TVM to import; the time limit counts from the moment the worker has the script.

A worker is a fresh interpreter (``python -c BOOT``: no copy of the server's threads and
sockets) talking through a ``multiprocessing`` pipe, which pickles and frames the messages. It
is not a ``multiprocessing.Process``: a spawned one re-runs the parent's main script, and
``sparsetir.explore(sch).serve()`` is called from scripts with no ``if __name__ == "__main__"``.
"""

from __future__ import annotations

import importlib
import multiprocessing
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..errors import ScriptError, SparseTIRError

#: the default time limit of one compile, in seconds (``--compile-timeout``)
DEFAULT_TIMEOUT = 30.0
#: how often a waiting thread checks its client and the clock, in seconds
POLL = 0.05
#: how long a new worker may take to import sparsetir before the compile is given up, in seconds
START_LIMIT = 300.0
#: a compile's answer in the worker: ``("ok", document)`` or ``("error", located error)``
Result = tuple[str, dict[str, Any]]


def compile_script(script: Any, text: str, func: Optional[str]) -> Result:
    """The default job, run in the worker: ``script.explore(text, func)``'s document, or the
    error as the page shows it (a script error with its line, column and caret)."""
    try:
        return "ok", script.explore(text, func).document
    except ScriptError as err:
        return "error", located(err)
    except SparseTIRError as err:
        return "error", {"message": str(err), "file": script.name}


def located(err: ScriptError) -> dict[str, Any]:
    """A script error as the page shows it: where, what, and the rendered line with its caret."""
    return {"message": err.message, "file": err.filename, "line": err.line, "col": err.col, "rendered": err.render()}


@dataclass(frozen=True)
class Outcome:
    """How a compile ended: ``"ok"`` (``value`` is the document), ``"error"`` (a compile error),
    ``"timeout"`` (past the time limit), ``"cancelled"`` (client gone or superseded) or
    ``"failed"`` (the worker died); ``value`` is then the error as the page shows it."""

    status: str
    value: dict[str, Any]


class Compiler:
    """Runs compiles in worker processes: ``timeout`` seconds each at most, ``max_workers`` at a
    time. ``job(script, text, func) -> Result`` runs in the worker; it must be importable by name
    (a module-level function), since the worker is a fresh interpreter."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, *, job: Callable[..., Result] = compile_script,
                 max_workers: int = 2):
        if not timeout > 0:
            raise ValueError(f"the compile time limit must be positive, not {timeout}")
        self.timeout = timeout
        self.job = job
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: dict[int, _Worker] = {}  # pid -> the worker compiling
        self._latest: dict[str, threading.Event] = {}  # client -> set when a newer compile replaces its own
        self._closed = False

    def start(self) -> None:
        """Start the idle worker now, so that the first compile finds sparsetir imported."""
        with self._lock:
            if not self._idle and not self._closed:
                self._idle.append(_Worker(self.job))

    def running(self) -> list[int]:
        """The process ids of the workers compiling now."""
        with self._lock:
            return list(self._busy)

    def compile(self, script: Any, text: str, func: Optional[str], *, client: str = "",
                gone: Callable[[], bool] = lambda: False) -> Outcome:
        """Compile ``text`` as ``script.explore`` would, in a worker; ``client`` names who asks
        (a newer compile of the same client cancels this one), ``gone()`` says whether they have
        stopped waiting."""
        replaced = self._supersede(client)

        def cancelled() -> Optional[Outcome]:
            if replaced.is_set():
                return Outcome("cancelled", {"message": "a newer compile replaced this one", "file": script.name})
            if gone():
                return Outcome("cancelled", {"message": "the page stopped waiting", "file": script.name})
            return None

        while not self._slots.acquire(timeout=POLL):
            if (outcome := cancelled()) is not None:
                return outcome
        try:
            worker = self._take()
            try:
                return self._run(worker, script, text, func, cancelled)
            finally:
                self._release(worker)
        finally:
            self._slots.release()
            with self._lock:
                if self._latest.get(client) is replaced:
                    del self._latest[client]

    def close(self) -> None:
        """Kill every worker, idle or compiling."""
        with self._lock:
            self._closed = True
            workers, self._idle = self._idle + list(self._busy.values()), []
        for worker in workers:
            worker.kill()

    def _run(self, worker: "_Worker", script: Any, text: str, func: Optional[str],
             cancelled: Callable[[], Optional[Outcome]]) -> Outcome:
        started = time.monotonic()
        try:
            while not worker.ready():
                if (outcome := cancelled()) is not None:
                    worker.kill()
                    return outcome
                if time.monotonic() - started > START_LIMIT:
                    worker.kill()
                    return Outcome("failed", {"message": f"the compile worker did not start in {START_LIMIT:.0f} s",
                                              "file": script.name})
            worker.conn.send((script, text, func))
            deadline = time.monotonic() + self.timeout
            while not worker.conn.poll(POLL):
                if (outcome := cancelled()) is not None:
                    worker.kill()
                    return outcome
                if time.monotonic() > deadline:
                    worker.kill()
                    return Outcome("timeout", {
                        "message": f"{script.name}: the compile took longer than {self.timeout:g} s and was stopped "
                                   "(sparsetir explore --compile-timeout SECONDS raises the limit)",
                        "file": script.name})
            status, value = worker.conn.recv()
        except (EOFError, OSError) as err:  # the worker died: out of memory, a crash in TVM
            worker.kill()
            return Outcome("failed", {"message": f"{script.name}: the compile worker died "
                                                 f"(exit code {worker.process.returncode}): {err or type(err).__name__}",
                                      "file": script.name})
        return Outcome(status, value)

    def _supersede(self, client: str) -> threading.Event:
        replaced = threading.Event()
        with self._lock:
            previous = self._latest.get(client)
            self._latest[client] = replaced
        if previous is not None:
            previous.set()
        return replaced

    def _take(self) -> "_Worker":
        with self._lock:
            if self._closed:
                raise SparseTIRError("the explorer server is shutting down")
            worker = self._idle.pop() if self._idle else _Worker(self.job)
            self._busy[worker.process.pid] = worker
            return worker

    def _release(self, worker: "_Worker") -> None:
        with self._lock:
            self._busy.pop(worker.process.pid, None)
            if worker.alive() and not self._closed and not self._idle:
                self._idle.append(worker)
                return
            replace = not self._closed and not self._idle
            if replace:  # the next compile should not wait for an import either
                self._idle.append(_Worker(self.job))
        if worker.alive():
            worker.kill()


class _Worker:
    """One worker process: it says it is ready once sparsetir and ``job`` are imported, then
    answers each ``(script, text, func)`` it is sent with ``job``'s result."""

    def __init__(self, job: Callable[..., Result]):
        self.conn, child = multiprocessing.Pipe()
        self.process = subprocess.Popen([sys.executable, "-c", BOOT, str(child.fileno())], pass_fds=[child.fileno()])
        child.close()
        self.conn.send(list(sys.path))
        self.conn.send((job.__module__, job.__qualname__))
        self._ready = False
        self._killed = False

    def ready(self) -> bool:
        """Whether the worker has started (waits up to ``POLL`` seconds for it)."""
        if not self._ready and self.conn.poll(POLL):
            if self.conn.recv() != "ready":
                raise EOFError("the worker did not start")
            self._ready = True
        return self._ready

    def alive(self) -> bool:
        return not self._killed and self.process.poll() is None

    def kill(self) -> None:
        self._killed = True
        self.process.kill()
        self.process.wait()
        self.conn.close()


#: the worker's first lines: only the standard library until the parent's import path is set
BOOT = ("import sys; from multiprocessing.connection import Connection; conn = Connection(int(sys.argv[1])); "
        "sys.path[:] = conn.recv(); from sparsetir.explorer.compiler import serve; serve(conn)")


def serve(conn: Any) -> None:
    """The worker's loop (in the worker process, started by ``BOOT``): import the job, say so,
    then answer every compile sent until the server closes the pipe."""
    module, name = conn.recv()
    job: Any = importlib.import_module(module)
    for part in name.split("."):
        job = getattr(job, part)
    conn.send("ready")
    while True:
        try:
            script, text, func = conn.recv()
        except EOFError:  # the server has gone
            return
        conn.send(job(script, text, func))
