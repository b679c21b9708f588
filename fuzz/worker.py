"""A fuzz worker: a long-lived process that checks one script per request and reports the outcome.

Run as ``python -m fuzz.worker DIR`` by the runner, never by hand. It works in ``DIR`` (its own
folder: the canary a payload writes lands there), imports sparsetir, warms it up, and only then
installs an audit hook (``sys.addaudithook``) that records — and refuses — what script text must
never do: run a command, start a process, write a file outside ``DIR``, evaluate code compiled from
a string. Requests and replies are JSON lines on the pipes the runner gave it (stdin and the
original stdout); anything sparsetir or a payload prints goes to stderr.

Per script: ``sparsetir.parse``; then for each function print it, parse the print again and
compare (``structural_equal``), and lower what is left (stage I: ``lower_sparse_iter`` then
``lower_sparse_buffer``; stage II: ``lower_sparse_buffer``). Any exception that is not a
``SparseTIRError`` is a finding; so is an audit event or a file appearing in ``DIR``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any, Optional

#: Audit events that script text must never cause; the hook records them and raises.
FORBIDDEN_EVENTS = (
    "os.system", "subprocess.Popen", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
    "os.forkpty", "pty.spawn", "os.kill", "os.killpg", "os.remove", "os.rename", "os.rmdir",
    "os.mkdir", "os.symlink", "os.link", "os.truncate", "os.chmod", "os.chown", "os.putenv",
    "os.unsetenv", "shutil.rmtree", "shutil.copyfile", "shutil.move", "socket.connect",
    "socket.bind", "urllib.Request", "webbrowser.open", "ctypes.dlopen", "ctypes.call_function",
    "builtins.input", "builtins.breakpoint", "pdb.Pdb", "sys.settrace", "sys.setprofile",
)
SCRIPT_NAME = "<fuzz>"
SELF_TEST_NAME = "<fuzz-self-test>"
PRINTED_NAME = "<printed>"
PACKAGE_DIR = str(Path(__file__).resolve().parents[1] / "sparsetir")
#: The file names sparsetir.parse is given here: its own ast.parse of the script is expected.
PARSED_NAMES = (SCRIPT_NAME, PRINTED_NAME, SELF_TEST_NAME)


class Refused(BaseException):
    """Raised by the audit hook to stop an operation script text caused (not an ``Exception``, so
    no ``except Exception`` in the code under test swallows it)."""


class Sandbox:
    """The audit hook's state: armed while a script is checked, with the events it recorded."""

    def __init__(self, home: Path):
        self.home = home.resolve()
        self.armed = False
        self.events: list[str] = []
        self.trusted_code = SELF_TEST_NAME  # the self-test's own exec of a payload

    def _inside_home(self, path: Any) -> bool:
        try:
            return Path(os.fsdecode(path)).resolve().is_relative_to(self.home)
        except Exception:  # noqa: BLE001 - an fd or an odd path object: treat as outside
            return False

    def hook(self, event: str, args: tuple) -> None:
        if not self.armed:
            return
        if event.startswith(FORBIDDEN_EVENTS):
            self._refuse(event, args)
        elif event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writing:
                self.events.append(f"open for writing: {path!r}")
                if not self._inside_home(path):
                    self._refuse(event, args)
            elif isinstance(path, (str, bytes)) and "fz_canary" in os.fsdecode(path):
                self.events.append(f"open: {path!r}")
        elif event == "exec":
            code = args[0]
            filename = getattr(code, "co_filename", "")
            if filename != self.trusted_code and not os.path.isfile(filename) and not _trusted_caller():
                self.events.append(f"exec of code compiled from text ({filename!r})")
                self._refuse(event, args)
        elif event == "compile" and len(args) >= 2 and not _trusted_caller():
            source, filename = args[0], args[1]
            if not isinstance(source, (str, bytes)):  # an AST compiled to code: about to run
                self.events.append(f"compile of an AST to code ({filename!r})")
            elif filename not in PARSED_NAMES and not os.path.isfile(str(filename)):
                self.events.append(f"compile of a string ({filename!r}): {_short((source,))}")

    def _refuse(self, event: str, args: tuple) -> None:
        self.events.append(f"{event}{_short(args)}")
        self.armed = False  # the hook's own work must not recurse
        try:
            raise Refused(f"audit: {event}")
        finally:
            self.armed = True


#: Library code that compiles and evaluates text of its own (never the script's): tvm_ffi builds
#: Python frames for C++ errors by eval; Python's traceback parses source lines to place carets.
_TRUSTED_CALLERS = (os.path.join("tvm_ffi", "error.py"), os.path.join("", "traceback.py"))


def _trusted_caller() -> bool:
    """True when the compile/exec the hook sees comes from one of ``_TRUSTED_CALLERS`` (the first
    frame above the hook that is not ``ast.py``)."""
    frame = sys._getframe(2)  # 0: this function, 1: the hook, 2: who called compile/exec
    while frame is not None and frame.f_code.co_filename.endswith(os.path.join("", "ast.py")):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.endswith(_TRUSTED_CALLERS)


def _short(args: tuple) -> str:
    text = repr(args)
    return text if len(text) < 200 else text[:200] + "...)"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:500] if text else ""


def _functions(parsed: Any) -> list[Any]:
    return list(parsed.values()) if isinstance(parsed, dict) else [parsed]


def check(text: str) -> dict[str, Any]:
    """Check one script; the reply's ``outcome`` is ``ok``, ``sparsetir_error``, ``exception``,
    ``mismatch`` or ``bad_diagnostic``, with the phase and error where there is one."""
    import sparsetir

    phase = "parse"
    try:
        parsed = sparsetir.parse(text, SCRIPT_NAME)
    except sparsetir.InternalError as err:
        return _exception(phase, err)
    except sparsetir.SparseTIRError as err:
        rendered = str(err)
        reply = {"outcome": "sparsetir_error", "phase": phase, "error": type(err).__name__,
                 "message": _first_line(err), "located": getattr(err, "line", None) is not None}
        internal = PACKAGE_DIR in getattr(err, "message", rendered) and PACKAGE_DIR not in text
        if not rendered.startswith(SCRIPT_NAME) or internal:
            reply.update(outcome="bad_diagnostic", message=f"the error does not start with the script's "
                         f"name or names sparsetir's own files: {rendered[:500]}")
        return reply
    except BaseException as err:  # noqa: BLE001 - every other exception is what we look for
        return _exception(phase, err)
    try:
        stages = []
        for func in _functions(parsed):
            stage = 2 if isinstance(func, sparsetir.Stage2Function) else 1
            stages.append(stage)
            phase = "print"
            printed = func.script()
            phase = "reparse"
            try:
                again = sparsetir.parse(printed, PRINTED_NAME)
            except sparsetir.SparseTIRError as err:
                return {"outcome": "mismatch", "phase": phase, "error": type(err).__name__,
                        "message": f"the printed program does not parse back: {_first_line(err)}", "printed": printed}
            again = again.get(func.name) if isinstance(again, dict) else again
            phase = "compare"
            if again is None or not sparsetir.structural_equal(func, again):
                return {"outcome": "mismatch", "phase": phase, "error": "",
                        "message": "print -> parse gives a different program", "printed": printed}
            phase = "lower"
            if stage == 1:
                func = sparsetir.lower_sparse_iter(func)
            sparsetir.lower_sparse_buffer(func)
        return {"outcome": "ok", "phase": "done", "stages": stages}
    except sparsetir.InternalError as err:  # sparsetir's own "this is a bug" wrapper: a finding
        return _exception(phase, err)
    except sparsetir.SparseTIRError as err:
        cause = err.__cause__
        return {"outcome": "sparsetir_error", "phase": phase, "error": type(err).__name__,
                "message": _first_line(err), "located": getattr(err, "line", None) is not None,
                # a LoweringError wrapping TVM's own refusal: clean, but worth counting
                "foreign_cause": cause is not None and not isinstance(cause, sparsetir.SparseTIRError)}
    except BaseException as err:  # noqa: BLE001
        return _exception(phase, err)


def _exception(phase: str, err: BaseException) -> dict[str, Any]:
    if isinstance(err, KeyboardInterrupt):
        raise err
    return {"outcome": "exception", "phase": phase, "error": f"{type(err).__module__}.{type(err).__qualname__}",
            "message": _first_line(err), "traceback": "".join(traceback.format_exception(err))[-6000:]}


def _exec_payload(text: str) -> dict[str, Any]:
    """Self-test only: run ``text`` as Python, to prove the detectors see what a payload does."""
    try:
        exec(compile(text, SELF_TEST_NAME, "exec"), {"T": _tir(), "m": 4, "n": 4})  # noqa: S102 - our own payloads, in the sandbox
    except BaseException as err:  # noqa: BLE001
        return {"outcome": "exception", "phase": "exec", "error": type(err).__name__, "message": _first_line(err)}
    return {"outcome": "ok", "phase": "exec"}


def _tir() -> Any:
    from sparsetir.script import tir

    return tir


def _new_files(home: Path) -> list[str]:
    found = []
    for entry in home.iterdir():
        found.append(entry.name)
        if entry.is_dir() and not entry.is_symlink():
            for sub in entry.rglob("*"):
                sub.unlink() if not sub.is_dir() else None
            for sub in sorted(entry.rglob("*"), reverse=True):
                sub.rmdir()
            entry.rmdir()
        else:
            entry.unlink()
    return found


def warm_up() -> None:
    """Exercise every path ``check`` takes once, so imports and caches happen before the hook."""
    from fuzz.corpus import REPO

    import sparsetir

    f = sparsetir.parse((REPO / "examples" / "csr_spmm.py").read_text(), SCRIPT_NAME)
    check(f.script())
    check(sparsetir.lower_sparse_iter(f).script())
    check("@T.prim_func\ndef f(:\n")
    check('@T.prim_func\ndef f(a: T.handle):\n    T.func_attr({"sparse_tir_level": 1})\n    T.evaluate(0)\n')


def serve(home: Path, requests: Any, replies: Any) -> None:
    """Answer requests (JSON lines) until stdin closes."""
    sandbox = Sandbox(home)
    sys.addaudithook(sandbox.hook)
    for line in requests:
        request = json.loads(line)
        sandbox.events = []
        sandbox.armed = True
        try:
            if request.get("mode") == "exec_payload":
                reply = _exec_payload(request["text"])
            elif request.get("mode") == "crash":  # self-tests of the runner
                import faulthandler

                faulthandler._sigsegv()
            elif request.get("mode") == "hang":
                while True:
                    pass
            else:
                reply = check(request["text"])
        finally:
            sandbox.armed = False
        reply["events"] = list(sandbox.events)
        reply["files"] = _new_files(home)
        reply["id"] = request["id"]
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv: Optional[list[str]] = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    home = Path(argv[0]).resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.chdir(home)
    replies = os.fdopen(os.dup(1), "w")  # the protocol's channel; fd 1 now goes to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    warnings.simplefilter("ignore")  # SyntaxWarnings about mutants like `1in`
    warm_up()
    _new_files(home)
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    serve(home, sys.stdin, replies)


if __name__ == "__main__":
    main()
