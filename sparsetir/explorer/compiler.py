"""Compiles of edited scripts, each in a worker process, with a time limit, cancelled when unwanted.

A compile lowers and builds whatever the user typed: a huge unrolled loop can take minutes, and
a compile nobody waits for any more should not keep a core busy. So each compile runs in a
worker process (``multiprocessing``'s spawn context: no copy of the server's threads and
sockets), and the server thread that waits for it kills the worker when

- the time limit passes: the answer says ``SCRIPT: the compile took longer than N s``;
- the client that asked has gone (its connection closed);
- the same client asked for a newer compile (the older answer would only be thrown away).

A killed worker is replaced. One idle worker is kept started, so that a compile does not wait
for Python and TVM to import; the time limit counts from the moment the worker has the script.
"""

from __future__ import annotations

import multiprocessing
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
        self._context = multiprocessing.get_context("spawn")
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
                self._idle.append(_Worker(self._context, self.job))

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
                                                 f"(exit code {worker.process.exitcode}): {err or type(err).__name__}",
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
            worker = self._idle.pop() if self._idle else _Worker(self._context, self.job)
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
                self._idle.append(_Worker(self._context, self.job))
        if worker.alive():
            worker.kill()


class _Worker:
    """One worker process: it says it is ready once sparsetir is imported, then answers each
    ``(script, text, func)`` it is sent with ``job``'s result."""

    def __init__(self, context: Any, job: Callable[..., Result]):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, job), daemon=True, name="sparsetir-explore-compile")
        self.process.start()
        child.close()
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
        return not self._killed and self.process.is_alive()

    def kill(self) -> None:
        self._killed = True
        self.process.kill()
        self.process.join()
        self.conn.close()


def _serve(conn: Any, job: Callable[..., Result]) -> None:
    """The worker's loop (in the worker process)."""
    conn.send("ready")
    while True:
        try:
            script, text, func = conn.recv()
        except EOFError:  # the server has gone
            return
        conn.send(job(script, text, func))
