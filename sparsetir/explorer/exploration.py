"""``sparsetir.explore``: what the explorer shows for one function, as a page, a file or a server.

Where the schedule steps come from: a ``Schedule`` passed to ``explore`` brings its history; a
script file brings none by itself, since a schedule is Python code and the explorer never runs
Python it is given. A file's schedule is data instead: a history as ``sch.history.to_json()``
writes it, named with ``--schedule`` or found beside the script as ``NAME.schedule.json``. Its
steps are replayed through ``Schedule.apply_step``, which accepts only the primitives it lists.
A program with no schedule of its own shows the steps of the default CPU schedule, which
``sparsetir.build`` applies to it (``schedule/default``; its width parameters left symbolic,
unless the function given is specialized, e.g. ``f.specialize({"feat": 128})``).
"""

from __future__ import annotations

import html
import linecache
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Union

from ..errors import ScriptError, SparseTIRError
from ..ir import structural_equal
from ..schedule import History, Schedule
from ..script import parse
from ..trace import home_of
from ..transforms import pipeline
from .document import build_document
from .page import render_page

SIDECAR_SUFFIX = ".schedule.json"


@dataclass(frozen=True)
class Script:
    """A script as the explorer compiles it: its text, the file name its spans use, the function
    to show, the schedule history to replay on it, and the target and code format."""

    text: str
    name: str
    func: Optional[str] = None
    history: Optional[History] = None
    target: str = "llvm"
    code: Optional[str] = None
    #: without a ``history``: show the steps of the default schedule (else none)
    default_schedule: bool = True
    #: scalar parameters bound to constants before exploring (``SparseFunction.specialize``),
    #: e.g. a width, so that the default schedule shows the variant a call with it runs
    widths: tuple[tuple[str, int], ...] = ()

    def explore(self, text: Optional[str] = None, func: Optional[str] = None) -> "Exploration":
        """The exploration of ``func`` (default: this script's) in ``text`` (default: this
        script's), read only by the allow-list parser: a ``ScriptError`` (with line and column)
        when the text is not a script. An edit may rename the function: a script with one
        function shows it whatever its name; with several, one of the name asked for, else the
        first, and the document's ``func_note`` says so."""
        text = self.text if text is None else text
        found = _functions(parse(text, self.name))
        name, func_note = pick_function(found, func or self.func)
        script = replace(self, text=text, func=name)
        program = found[name]
        if self.widths:
            try:
                program = program.specialize(dict(self.widths))
            except (KeyError, TypeError) as err:
                raise SparseTIRError(f"--width: {err.args[0] if err.args else err}") from err
        history, note = self.history, None
        if history is None and self.default_schedule:
            history, note = default_history(program, self.target)
        document = build_document(program, script.text, history, target=script.target, code=script.code,
                                  functions=list(found), editable=True, note=note)
        document["func_note"] = func_note
        return Exploration(document, script)


def pick_function(found: dict[str, Any], wanted: Optional[str]) -> tuple[str, Optional[str]]:
    """The function of ``found`` to show when ``wanted`` was asked for, and a note when it is
    not that one: the only function is shown whatever its name (a rename in the editor)."""
    if wanted in found:
        return wanted, None
    first = next(iter(found))
    if len(found) == 1 or wanted is None:
        return first, None
    return first, f"the script has no function {wanted!r} any more: showing {first!r}, its first"


@dataclass(frozen=True)
class Exploration:
    """The explorer's view of one function: its document, and the script to recompile edits
    of (``None`` when there is no script file to edit: the page is then read-only)."""

    document: dict[str, Any]
    script: Optional[Script] = None

    def html(self, served: bool = False) -> str:
        """The self-contained page (``served``: as the server sends it, with editing)."""
        document = self.document if served and self.script else {**self.document, "editable": False}
        return render_page(document, served=served)

    def save(self, path: Union[str, Path]) -> Path:
        """Write the page to ``path``: one file that opens offline in any browser."""
        path = Path(path)
        path.write_text(self.html(), encoding="utf-8")
        return path

    def serve(self, port: int = 0, open_browser: bool = True, compile_timeout: float = 30.0) -> None:
        """Serve the page on 127.0.0.1 (``port`` 0: any free port) until interrupted; the
        script can be edited and recompiled in the page when there is one, each compile
        stopped after ``compile_timeout`` seconds."""
        from .server import serve

        serve(self, port=port, open_browser=open_browser, compile_timeout=compile_timeout)

    def _repr_html_(self) -> str:
        # Jupyter: the page in an iframe, so that its style and script stay its own.
        return (f'<iframe srcdoc="{html.escape(self.html(), quote=True)}" '
                'style="width:100%;height:720px;border:1px solid #ddd;border-radius:6px"></iframe>')


def explore(program: Any, *, target: str = "llvm", code: Optional[str] = None,
            source: Optional[str] = None, default_schedule: bool = True) -> Exploration:
    """The explorer for a program: every stage side by side, each line linked to its script lines.

    ``program`` is a ``sparsetir.Schedule`` (its steps are shown, and every pane as of each
    step), or a function at stage I, II or III. ``target`` is what to generate code for
    (``"llvm"``: the host CPU; ``"cuda"``), ``code`` its format (``"ll"``, ``"asm"``,
    ``"cuda"``). The script text comes from the file the function was written in; pass it as
    ``source`` when that file cannot be read. In Jupyter the result shows itself; elsewhere
    ``.save(path)`` writes the page and ``.serve()`` opens it from a local server. A program
    that is not a ``Schedule`` shows the steps of the default schedule ``sparsetir.build``
    gives it (``default_schedule=False``: no steps).
    """
    history = None
    if isinstance(program, Schedule):
        program, history = program.initial, program.history
    home = home_of(program)
    text = source if source is not None else "".join(linecache.getlines(home)) if home else ""
    script = _script_of(program, text, home, history, target, code)
    if script is not None:
        return replace(script, default_schedule=default_schedule).explore()
    note = None
    if history is None and default_schedule:
        history, note = default_history(program, target)
    return Exploration(build_document(program, text, history, target=target, code=code, note=note))


def explore_file(path: Union[str, Path], func: Optional[str] = None, schedule: Optional[Union[str, Path]] = None,
                 target: str = "llvm", code: Optional[str] = None, widths: Optional[dict[str, int]] = None) -> Exploration:
    """The explorer for a script file: ``func`` (default: its first function), with the schedule
    history in ``schedule`` or, when not given, in ``NAME.schedule.json`` beside it, if any, else
    the default schedule's steps; ``schedule="none"``: no steps, ``"default"``: the default
    schedule's even when there is a ``NAME.schedule.json``. ``widths`` binds scalar parameters
    (a feature width) to constants first, as a call with them would."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    keyword = str(schedule) if str(schedule) in ("none", "default") else None
    sidecar = Path(schedule) if schedule is not None and keyword is None else path.with_suffix(SIDECAR_SUFFIX)
    history = None
    if keyword is None and (schedule is not None or sidecar.is_file()):
        try:
            history = History.from_json(sidecar.read_text(encoding="utf-8"))
        except (ValueError, KeyError, TypeError) as err:
            raise SparseTIRError(f"{sidecar}: not a schedule history written by sch.history.to_json() ({err})") from err
    found = _functions(parse(text, str(path)))
    if func is not None and func not in found:
        raise SparseTIRError(f"{path} has no function {func!r}; it has {', '.join(found)}")
    return Script(text, str(path), func, history, target, code, default_schedule=keyword != "none",
                  widths=tuple((widths or {}).items())).explore()


#: What the explorer says above the steps of a default schedule.
DEFAULT_NOTE = ("The default CPU schedule: what sparsetir.build applies to this program, which has no schedule of "
                "its own (width parameters stay symbolic here; each call's widths get a specialized variant). "
                "--schedule FILE.json replays another schedule, --schedule none shows none.")


def default_history(program: Any, target: str) -> tuple[Optional[History], Optional[str]]:
    """The history of the default schedule of ``program`` and the note to show with it; (None,
    None) where ``build`` gives it none (a GPU target, stage III, a program scheduled already)."""
    from ..runtime.target import as_target, is_gpu
    from ..schedule.default import default_schedule, is_scheduled

    try:
        if is_gpu(as_target(target)) or pipeline.stage_of(program) == 3 or is_scheduled(program):
            return None, None
        return default_schedule(program).schedule.history, DEFAULT_NOTE
    except SparseTIRError:
        return None, None  # the program does not lower: its panes say why


def _functions(parsed: Any) -> dict[str, Any]:
    """The script's functions by name (an @I.ir_module class gives several), each followed by
    the symbolic program of one that assembles a sparse output (``<name>_symbolic``: the kernel
    ``build`` runs first, counting the output's rows)."""
    from ..ir.assembly import assembled_axes
    from ..ir.function import SparseFunction
    from ..ir.module import by_name
    from ..transforms.assemble import symbolic_function

    found: dict[str, Any] = {}
    for name, func in by_name(parsed).items():
        found[name] = func
        if isinstance(func, SparseFunction) and assembled_axes(func) and f"{name}_symbolic" not in found:
            found[f"{name}_symbolic"] = symbolic_function(func)
    return found


def _script_of(program: Any, text: str, home: Optional[str], history: Optional[History], target: str,
               code: Optional[str]) -> Optional[Script]:
    """The script to recompile edits of: the file's text, when the whole file is a script and its
    function of that name is ``program`` itself (not a program lowered from it)."""
    if not text or not home:
        return None
    try:
        found = _functions(parse(text, home))
    except ScriptError:
        return None  # a Python module holding a decorated function: shown, not editable
    name = pipeline.function_name(program)
    if name not in found or pipeline.stage_of(found[name]) != pipeline.stage_of(program):
        return None
    if not structural_equal(found[name], program):
        return None
    return Script(text, home, name, history, target, code)
