"""The explorer's document: everything one page shows about one function, as JSON data.

It is read only from the trace records (``sparsetir/trace``): the listings of every stage, the
pass record, the schedule snapshots. Its shape::

    {"title", "file", "func", "functions", "target", "code_format", "editable", "script": pane id,
     "func_note", "script_text", "views": [view], "steps": [step], "steps_note", "steps_error", "start_stage",
     "panes": {pane id: pane}, "lines": [highlighted line]}

A *view* is every stage as of one point of the schedule history (view 0: before any step, view
k: after step k): the pane ids of stage I, II, III and of the generated code, and the passes the
pipeline runs from there to stage III, each with its time and diff. A *step* is one step of the
history: the primitive with its arguments as text, its stage, and the diffs it made (of the
program at its stage, and of stage III and the generated code against the step before). Panes
(``pane.Pane``) are stored once however many views show them, and a pane's lines are indices
into one table of distinct highlighted lines.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..driver import build
from ..errors import SparseTIRError
from ..runtime.target import as_target, is_gpu
from ..schedule import History, Step
from ..trace import code_listing, home_of, listing, record_passes, replay_snapshots
from ..trace.code import mark_stores
from ..transforms import pipeline
from .diff import diff_rows
from .init_lines import init_lines, link_inits
from .pane import Pane

STAGE_NAMES = {1: "I", 2: "II", 3: "III"}
NO_SCHEDULE = ("No schedule steps: sparsetir.explore(sch) shows the steps of a Schedule; for a script file, "
               "pass --schedule FILE.json (a history written by sch.history.to_json()) or put it beside "
               "the script as NAME.schedule.json.")


def build_document(func: Any, script: str, history: Optional[History] = None, *, target: str = "llvm",
                   code: Optional[str] = None, functions: Optional[list[str]] = None,
                   editable: bool = False, note: Optional[str] = None) -> dict[str, Any]:
    """The document of ``func`` (stage I, II or III), whose script text is ``script``.

    ``history`` is a schedule history to replay on ``func`` (its steps and the view after each);
    ``code`` is the format of the generated code: ``"ll"`` (LLVM IR, the CPU default), ``"asm"``
    or ``"cuda"`` (the GPU default). ``functions`` names every function of the script (for the
    page's function list) and ``editable`` says whether the page may send an edited script back.
    ``note`` is said above the steps (by default: how to get steps, when there is no history).
    """
    home = home_of(func)
    code = code or ("cuda" if is_gpu(as_target(target)) else "ll")
    panes = _Panes(home, init_lines(script))
    replay = replay_snapshots(func, history)
    name = pipeline.function_name(func)
    document = {
        "title": f"{name} \u2014 {home or 'script'}",
        "file": home,
        "func": name,
        "functions": functions or [name],
        "func_note": None,  # why the function shown is not the one asked for (exploration.pick_function)
        "target": target if isinstance(target, str) else str(target),
        "code_format": code,
        "editable": editable,
        "script": panes.add(Pane.of_script(script) if script else Pane.missing("the script text is not available")),
        "script_text": script,
        "views": (views := _views(replay.snapshots, panes, target, code)),
        "steps": [_step(k, snap, replay.snapshots[k - 1], panes, views) for k, snap in enumerate(replay.snapshots) if k],
        "steps_note": note if note is not None else None if history is not None else NO_SCHEDULE,
        "steps_error": replay.error,
        "start_stage": STAGE_NAMES[replay.snapshots[0].stage] if replay.snapshots else None,
    }
    document["panes"], document["lines"] = panes.to_json()
    return document


class _Panes:
    """The panes of a document, each stored once, and the listing of each program computed once."""

    def __init__(self, home: Optional[str], inits: dict[int, frozenset[int]]):
        self.home = home
        self.inits = inits  # the script's ``with T.init():`` lines (init_lines.py)
        self.ids: dict[tuple, str] = {}
        self.panes: dict[str, Pane] = {}
        self.programs: dict[int, tuple[Any, Pane]] = {}  # id(program) -> (program kept alive, pane)
        self.lines: dict[str, int] = {}  # distinct highlighted lines -> their index

    def line_id(self, html: str) -> int:
        """The index of a highlighted line in the document's table of lines."""
        return self.lines.setdefault(html, len(self.lines))

    def add(self, pane: Pane) -> str:
        key = (pane.lang, pane.text, pane.origins, pane.note)
        if key not in self.ids:
            self.ids[key] = f"p{len(self.ids)}"
            self.panes[self.ids[key]] = pane
        return self.ids[key]

    def program(self, program: Any) -> Pane:
        """The pane of a program at stage I, II or III."""
        if id(program) not in self.programs:
            try:
                pane = link_inits(Pane.of_listing(listing(program), "python", self.home), self.inits)
            except SparseTIRError as err:  # a program a schedule made that its stage cannot print
                pane = Pane.missing(f"Printing the program failed: {err}")
            self.programs[id(program)] = (program, pane)
        return self.programs[id(program)][1]

    def to_json(self) -> tuple[dict[str, Any], list[str]]:
        """The panes, and the table of distinct highlighted lines that panes and diffs index
        into (generated code repeats most of its lines from one step to the next)."""
        panes = {key: pane.to_json(self.line_id) for key, pane in self.panes.items()}
        return panes, list(self.lines)


def _views(snapshots: list, panes: _Panes, target: str, code: str) -> list[dict[str, Any]]:
    views = []
    last = {1: None, 2: None}  # the last program seen at stage I and II
    for snapshot in snapshots:
        stage, program = snapshot.stage, snapshot.program
        if stage < 3:
            last[stage] = program
        stages: dict[int, Any] = {1: last[1], 2: last[2] if stage >= 2 else None, 3: program if stage == 3 else None}
        passes, error = [], None
        try:
            records = record_passes(program)
        except SparseTIRError as err:
            records, error = [], str(err)
        for record in records:
            if record.stage_after == 2 and stages[2] is None:
                stages[2] = record.after
            passes.append({
                "name": record.name,
                "ms": round(record.seconds * 1e3, 2),
                "stages": [STAGE_NAMES[record.stage_before], STAGE_NAMES[record.stage_after]],
                "diff": diff_rows(panes.program(record.before), panes.program(record.after), panes.line_id),
            })
        if records:
            stages[3] = records[-1].after
        first = snapshots[0].stage
        view = {f"stage{k}": panes.add(_stage_pane(panes, stages[k], k, first, error)) for k in (1, 2, 3)}
        view["code"] = panes.add(link_inits(_code_pane(stages[3], panes.home, target, code, error), panes.inits))
        view["passes"] = passes
        view["error"] = error
        views.append(view)
    return views


def _stage_pane(panes: _Panes, program: Any, stage: int, start: int, error: Optional[str]) -> Pane:
    if program is not None:
        return panes.program(program)
    if stage < start:
        return Pane.missing(f"The program starts at stage {STAGE_NAMES[start]}: there is no stage {STAGE_NAMES[stage]}.")
    return Pane.missing(f"Lowering failed: {error}")


def _code_pane(stage3: Any, home: Optional[str], target: str, fmt: str, error: Optional[str]) -> Pane:
    if stage3 is None:
        return Pane.missing(f"Lowering failed: {error}")
    try:
        text = build(stage3, target).source(fmt)
    except (SparseTIRError, ValueError) as err:
        return Pane.missing(f"Code generation for {target} failed: {err}")
    marked = _marked_cuda(stage3, target) if fmt == "cuda" else None
    return Pane.of_listing(code_listing(text, fmt, home or "", marked), fmt, home)


def _marked_cuda(stage3: Any, target: str) -> Optional[str]:
    """The CUDA C of ``stage3`` with its stores marked by script line (``trace.code``), or
    ``None`` when the marked program does not compile (then no CUDA line is linked)."""
    try:
        return build(mark_stores(stage3), target).source("cuda")
    except (SparseTIRError, ValueError):
        return None


def _step(number: int, snapshot: Any, before: Any, panes: _Panes, views: list[dict[str, Any]]) -> dict[str, Any]:
    old, new = panes.program(before.program), panes.program(snapshot.program)
    return {
        "number": number,
        "primitive": snapshot.step.primitive,
        "text": step_text(snapshot.step),
        "stage": STAGE_NAMES[snapshot.stage],
        "diff": diff_rows(old, new, panes.line_id),
        # what the step changed downstream: stage III and the generated code, against the step before
        "stage3_diff": _view_diff(panes, views[number - 1]["stage3"], views[number]["stage3"]),
        "code_diff": _view_diff(panes, views[number - 1]["code"], views[number]["code"]),
    }


def _view_diff(panes: _Panes, before: str, after: str) -> Optional[list[list[Any]]]:
    """The diff of two panes by id; ``None`` when either has no program (lowering failed)."""
    old, new = panes.panes[before], panes.panes[after]
    if old.note is not None or new.note is not None:
        return None
    return diff_rows(old, new, panes.line_id)


def step_text(step: Step) -> str:
    """A step as a call: ``split(loop=loop("csr_spmm1", 1), factors=[None, 8], ...)``."""
    return f"{step.primitive}({', '.join(f'{k}={_arg_text(v)}' for k, v in step.args.items())})"


def _arg_text(value: Any) -> str:
    if isinstance(value, dict) and value.get("handle") == "sblock":
        nth = f", nth={value['nth']}" if value.get("nth") else ""
        return f'block("{value["name"]}"{nth})'
    if isinstance(value, dict) and value.get("handle") == "loop":
        nth = f", nth={value['nth']}" if value.get("nth") else ""
        return f'loop("{value["sblock"]}", {value["index"]}{nth})'
    if isinstance(value, list):
        return "[" + ", ".join(_arg_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_arg_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value) if isinstance(value, str) else repr(value)
