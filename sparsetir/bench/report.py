"""The benchmark's results: one row per case, and their table, summary, JSON and plot.

Speedups are sparsetir's over a peer measured in the same run (peer time / sparsetir time, so
above 1 means sparsetir is faster); "faster" is the speedup over whichever of SciPy and torch
was faster on that row, the figure that matters to a user of those choosing a library. Intel
MKL, where it is installed, gets its own column and its own line in the summary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .kernels import Case
from .timing import ALONE, Interleave, Timing

OURS = "sparsetir"
# sparsetir's second call on structures it has seen (spgemm, add, multiply: the numeric phase
# alone), beside its full first call (``OURS``) on the same row.
CACHED = f"{OURS}:cached"
# spgemm's full call with ``sorted=False`` (rows in the order products reach them, as MKL's
# result), beside the full call that sorts them (``OURS``) on the same row.
UNSORTED = f"{OURS}:unsorted"
PEERS = ("scipy", "torch", "mkl")
# The peers whose faster one the "vs faster" column and the summary compare with.
FASTER_OF = ("scipy", "torch")
MKL = "mkl"
SCHEMA = "sparsetir-bench/2"
JSON_NAME = "bench.json"
PLOT_NAME = "bench.png"


class Measured:
    """What a row of ``timings`` (implementation name -> Timing) answers: each one's time, which
    failed and why, and the faster of SciPy and torch."""

    timings: dict[str, Timing]

    @property
    def errors(self) -> dict[str, str]:
        """Why each implementation that failed its check failed."""
        return {name: t.error for name, t in self.timings.items() if t.error}

    def ms(self, name: str, best: bool = False) -> Optional[float]:
        """The median (or ``best`` round's) per-call time of ``name``; None if it failed."""
        timing = self.timings.get(name)
        if timing is None:
            return None
        return timing.best_ms if best else timing.median_ms

    @property
    def faster_peer(self) -> Optional[str]:
        """Of SciPy and torch, the one with the lower median time on this row."""
        timed = [name for name in FASTER_OF if self.ms(name)]
        return min(timed, key=self.ms) if timed else None


@dataclass
class Row(Measured):
    """The measurements of every implementation on one case."""

    matrix: str
    source: str
    shape: tuple[int, int]
    nnz: int
    kernel: str
    width: Optional[int]
    bytes_moved: int
    timings: dict[str, Timing]
    # The op every timed call followed (interleaved mode), in words; None when timed alone.
    interleaved_with: Optional[str] = None
    # Per other format sparsetir also ran on (``--formats``): its conversion, or auto's choice.
    formats: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, case: Case, source: str, timings: dict[str, Timing],
           between: Optional[Interleave] = None) -> "Row":
        """The row for ``case`` (a matrix read from ``source``) measured as ``timings``, each
        call after ``between`` (None: timed alone)."""
        shape = (int(case.matrix.shape[0]), int(case.matrix.shape[1]))
        return cls(case.matrix_name, source, shape, int(case.matrix.nnz), case.kernel,
                   case.width, case.bytes_moved, timings,
                   between.description if between else None)

    @property
    def peers(self) -> list[str]:
        """The peers measured on this row, in the table's order."""
        return [name for name in PEERS if name in self.timings]

    def gbps(self, name: str) -> Optional[float]:
        """Effective bandwidth of ``name``: a minimal kernel's bytes over its median time."""
        ms = self.ms(name)
        return self.bytes_moved / (ms * 1e6) if ms else None

    def speedup(self, peer: Optional[str], best: bool = False, ours: str = OURS) -> Optional[float]:
        """sparsetir's (``ours``: that implementation's) speedup over ``peer`` (above 1:
        sparsetir is faster).

        From median times, or with ``best`` from each one's fastest round: the conservative
        figure when a peer's thread pool collapses under contention in some rounds.
        """
        mine, theirs = self.ms(ours, best), self.ms(peer, best) if peer else None
        return theirs / mine if mine and theirs else None

    def to_json(self) -> dict[str, Any]:
        """This row as plain JSON data."""
        return {
            "matrix": self.matrix,
            "source": self.source,
            "shape": list(self.shape),
            "nnz": self.nnz,
            "kernel": self.kernel,
            "width": self.width,
            "bytes_moved": self.bytes_moved,
            "interleaved_with": self.interleaved_with,
            "passed": not self.errors,
            "impls": {
                name: {
                    "ms": t.median_ms,
                    "best_ms": t.best_ms,
                    "gbps": self.gbps(name),
                    "first_call_ms": t.first_call_ms,
                    "calls_per_round": t.calls_per_round,
                    "round_ms": t.round_ms,
                    "results_checked": t.results_checked,
                    "error": t.error,
                }
                for name, t in self.timings.items()
            },
            "speedup": {peer: self.speedup(peer) for peer in self.peers},
            "speedup_from_best_rounds": {
                peer: self.speedup(peer, best=True) for peer in self.peers
            },
            "faster_peer": self.faster_peer,
            "speedup_faster_peer": self.speedup(self.faster_peer),
            "cached_gain": self.cached_gain,
            "cached_speedup": {peer: _ratio(self.ms(peer), self.ms(CACHED)) for peer in self.peers}
            if CACHED in self.timings else None,
            "unsorted_speedup": {peer: self.speedup(peer, ours=UNSORTED) for peer in self.peers}
            if UNSORTED in self.timings else None,
            "formats": {name: {**facts, "speedup_over_csr": self.format_speedup(name)}
                        for name, facts in self.formats.items()},
        }

    @property
    def cached_gain(self) -> Optional[float]:
        """sparsetir's full call over its cached one (above 1: the cached symbolic phase pays)."""
        full, cached = self.ms(OURS), self.ms(CACHED)
        return full / cached if full and cached else None

    def format_speedup(self, name: str) -> Optional[float]:
        """sparsetir's time on CSR over its time on format ``name`` (above 1: the format is faster)."""
        csr, other = self.ms(OURS), self.ms(f"{OURS}:{name}")
        return csr / other if csr and other else None


def summary(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Per kernel: the geometric-mean and the minimum speedup over the faster of SciPy and
    torch, and (``vs_mkl``, None without MKL rows) over MKL."""
    result: dict[str, dict[str, Any]] = {}
    for kernel in dict.fromkeys(row.kernel for row in rows):
        kernel_rows = [row for row in rows if row.kernel == kernel]
        result[kernel] = _ratios(kernel_rows, lambda row: row.faster_peer)
        if any(MKL in row.timings for row in kernel_rows):
            result[kernel]["vs_mkl"] = _ratios(kernel_rows, lambda row: MKL)
        else:
            result[kernel]["vs_mkl"] = None
        unsorted = [row for row in kernel_rows if UNSORTED in row.timings and MKL in row.timings]
        result[kernel]["unsorted_vs_mkl"] = _ratios(unsorted, lambda row: MKL, UNSORTED) if unsorted else None
        gains = [row.cached_gain for row in kernel_rows if row.cached_gain]
        if gains:
            result[kernel]["cached_gain"] = {"rows": len(gains), "geomean": geomean(gains), "min": min(gains)}
    return result


def _ratio(top: Optional[float], bottom: Optional[float]) -> Optional[float]:
    return top / bottom if top and bottom else None


def _ratios(rows: Sequence[Row], peer_of, ours: str = OURS) -> dict[str, Any]:
    """The geometric mean and the minimum of sparsetir's (``ours``') speedup over ``peer_of(row)``."""
    speedups = [(row.speedup(peer_of(row), ours=ours), row) for row in rows]
    speedups = [(s, row) for s, row in speedups if s]
    if not speedups:
        return {"rows": 0, "geomean_speedup": None, "min_speedup": None}
    low, where = min(speedups, key=lambda pair: pair[0])
    return {
        "rows": len(speedups),
        "geomean_speedup": geomean([s for s, _ in speedups]),
        "min_speedup": low,
        "min_at": {"matrix": where.matrix, "width": where.width, "peer": peer_of(where)},
    }


def mode_line(mode: str, interleaved_with: str, pause_s: float) -> str:
    """How the calls were timed, in one line above the table."""
    if mode == ALONE:
        return (
            f"timed alone (--alone): batches of back-to-back calls, each after a "
            f"{pause_s * 1e3:g} ms pause and one untimed call"
        )
    return f"timed interleaved: every timed call follows an untimed {interleaved_with}"


def table(rows: Sequence[Row]) -> str:
    """The results as an aligned text table, one line per row."""
    peers = [name for name in PEERS if any(name in row.timings for row in rows)]
    cached = any(CACHED in row.timings for row in rows)
    unsorted = any(UNSORTED in row.timings for row in rows)
    header = ["matrix", "shape", "nnz", "kernel", "width", f"{OURS} ms"] + (["cached ms"] if cached else [])
    header += ["unsorted ms"] if unsorted else []
    header += [f"{peer} ms" for peer in peers] + ["GB/s"]
    header += [f"vs {peer}" for peer in peers] + ["vs faster"] + (["full/cached"] if cached else [])
    lines = [header]
    for row in rows:
        line = [row.matrix, f"{row.shape[0]}x{row.shape[1]}", str(row.nnz), row.kernel,
                "-" if row.width is None else str(row.width)]
        line += [ms_cell(row.timings.get(name))
                 for name in [OURS, *([CACHED] if cached else []), *([UNSORTED] if unsorted else []), *peers]]
        line.append(_number(row.gbps(OURS), "{:.1f}"))
        line += [_number(row.speedup(peer), "{:.2f}x") for peer in peers]
        line.append(_number(row.speedup(row.faster_peer), "{:.2f}x"))
        if cached:
            line.append(_number(row.cached_gain, "{:.2f}x"))
        lines.append(line)
    return align(lines, text_columns={0, 1, 3})  # matrix, shape and kernel


def summary_lines(rows: Sequence[Row]) -> list[str]:
    """The summary as text: one line per kernel, and one more for MKL where it ran."""
    lines = []
    for kernel, stats in summary(rows).items():
        lines.append(_summary_line(kernel, "the faster peer", stats))
        if stats["vs_mkl"] is not None:
            lines.append(_summary_line(kernel, MKL, stats["vs_mkl"]))
        if stats.get("unsorted_vs_mkl"):
            lines.append(_summary_line(f"{kernel}, rows left unsorted (sorted=False, as MKL leaves them)", MKL,
                                       stats["unsorted_vs_mkl"]))
        gain = stats.get("cached_gain")
        if gain:
            lines.append(f"{kernel}: a call on structures seen before (cached symbolic phase) is "
                         f"{gain['geomean']:.2f}x faster than the full call (geomean over {gain['rows']} rows; "
                         f"minimum {gain['min']:.2f}x)")
    return lines


def _summary_line(kernel: str, over: str, stats: dict[str, Any]) -> str:
    if not stats["rows"]:
        return f"{kernel}: no speedup over {over} measured"
    where = stats["min_at"]
    at = where["matrix"] + ("" if where["width"] is None else f" width {where['width']}")
    return (
        f"{kernel}: geomean speedup over {over} {stats['geomean_speedup']:.2f}x over "
        f"{stats['rows']} rows; minimum {stats['min_speedup']:.2f}x ({at}, vs {where['peer']})"
    )


def format_summary(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Per format sparsetir also ran on: the geometric mean and minimum of its speedup over
    sparsetir's CSR kernel (its time on CSR over its time on the format)."""
    result: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(name for row in rows for name in row.formats):
        speedups = [(row.format_speedup(name), row) for row in rows if name in row.formats]
        speedups = [(s, row) for s, row in speedups if s]
        if not speedups:
            result[name] = {"rows": 0, "geomean_speedup": None, "min_speedup": None}
            continue
        low, where = min(speedups, key=lambda pair: pair[0])
        result[name] = {
            "rows": len(speedups),
            "geomean_speedup": geomean([s for s, _ in speedups]),
            "min_speedup": low,
            "min_at": {"matrix": where.matrix, "width": where.width},
        }
    return result


def format_table(rows: Sequence[Row]) -> str:
    """spmm on each other format beside CSR: times, speedups over CSR, conversions, auto's choice."""
    rows = [row for row in rows if row.formats]
    names = list(dict.fromkeys(name for row in rows for name in row.formats))
    header = ["matrix", "width", "csr ms"] + [f"{name} ms" for name in names] + [f"{name} vs csr" for name in names]
    header += ["conversion ms", "auto chose"]
    lines = [header]
    for row in rows:
        line = [row.matrix, "-" if row.width is None else str(row.width),
                ms_cell(row.timings.get(OURS))]
        line += [ms_cell(row.timings.get(f"{OURS}:{name}")) for name in names]
        line += [_number(row.format_speedup(name), "{:.2f}x") for name in names]
        conversions = [f"{facts['format']} {facts['conversion_ms']:.1f}" for facts in row.formats.values()
                       if "conversion_ms" in facts]
        line.append(", ".join(conversions) or "-")
        auto = row.formats.get("auto")
        line.append(f"{auto['choice']} (trial {auto['trial_ms']:.0f} ms)" if auto else "-")
        lines.append(line)
    return align(lines, text_columns={0, len(header) - 2, len(header) - 1})


def format_summary_lines(rows: Sequence[Row]) -> list[str]:
    """The format summary as text: one line per format."""
    lines = []
    for name, stats in format_summary(rows).items():
        if not stats["rows"]:
            lines.append(f"spmm on {name}: no time measured")
            continue
        where = stats["min_at"]
        at = where["matrix"] + ("" if where["width"] is None else f" width {where['width']}")
        lines.append(f"spmm on {name}: geomean speedup over sparsetir's CSR {stats['geomean_speedup']:.2f}x over "
                     f"{stats['rows']} rows; minimum {stats['min_speedup']:.2f}x ({at})")
    return lines


def write_json(path: Path, environment: dict, settings: dict, notes: list[str],
               rows: Sequence[Row]) -> None:
    """Write the whole run (environment, settings, notes, rows, summary) to ``path``."""
    document = {
        "schema": SCHEMA,
        "environment": environment,
        "settings": settings,
        "notes": notes,
        "passed": all(not row.errors for row in rows),
        "rows": [row.to_json() for row in rows],
        "summary": summary(rows),
        "formats_summary": format_summary(rows),
    }
    path.write_text(json.dumps(document, indent=2) + "\n")


def write_plot(path: Path, rows: Sequence[Row]) -> None:
    """Plot sparsetir's speedup over each peer, per kernel, matrix and width, to ``path``."""
    from matplotlib import pyplot

    figure = speedup_figure(rows)
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def speedup_figure(rows: Sequence[Row]) -> Any:
    """The matplotlib figure of ``write_plot``: one axis of ratio bars per kernel."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    kernels = list(dict.fromkeys(row.kernel for row in rows))
    most = max(sum(row.kernel == kernel for row in rows) for kernel in kernels)
    figure, axes = pyplot.subplots(
        len(kernels), 1, figsize=(max(5.0, 1.2 * most + 2), 3.0 * len(kernels)), squeeze=False
    )
    for axis, kernel in zip(axes[:, 0], kernels):
        kernel_rows = [row for row in rows if row.kernel == kernel]
        peers = [name for name in PEERS if any(name in row.timings for row in kernel_rows)]
        ratio_bars(axis, {f"vs {peer}": [row.speedup(peer) for row in kernel_rows] for peer in peers})
        axis.set_xticks(range(len(kernel_rows)))
        axis.set_xticklabels(
            [row.matrix + ("" if row.width is None else f"\nw{row.width}") for row in kernel_rows]
        )
        mode = "interleaved" if kernel_rows[0].interleaved_with else "alone"
        axis.set_title(f"{kernel}, timed {mode}: sparsetir's speedup", fontsize="medium")
        axis.set_ylabel("above 1x: sparsetir is faster", fontsize="small")
        axis.legend(loc="best", fontsize="small")
    figure.tight_layout()
    return figure


def ratio_bars(axis: Any, series: dict[str, Sequence[Optional[float]]]) -> None:
    """Draw ``series`` (label -> one ratio per tick, None where not measured) on the matplotlib
    ``axis`` as grouped bars on a log scale in "x", each growing from 1x: up when ours is faster."""
    from matplotlib import ticker

    bar = 0.8 / max(1, len(series))
    shown = [1.0]
    for s, (label, values) in enumerate(series.items()):
        ys = [v or math.nan for v in values]
        xs = [i + (s - (len(series) - 1) / 2) * bar for i in range(len(ys))]
        axis.bar(xs, [y - 1.0 for y in ys], bottom=1.0, width=bar, label=label)
        shown += [y for y in ys if not math.isnan(y)]
    axis.axhline(1.0, color="black", linewidth=1)
    axis.set_yscale("log")
    low, high = min(shown) / 1.5, max(shown) * 1.5
    axis.set_ylim(low, high)
    # A log axis labels only powers of ten by default: one label ("1x") for speedups between 0.5
    # and 5. These ticks label the whole range, the densest series that fits.
    axis.yaxis.set_major_locator(ticker.FixedLocator(log_ticks(low, high)))
    axis.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:.3g}x"))
    axis.yaxis.set_minor_formatter(ticker.NullFormatter())


# Tick values per decade of a log axis, densest first.
_LOG_TICK_SERIES = ((1.0, 1.5, 2.0, 3.0, 5.0, 7.0), (1.0, 2.0, 5.0), (1.0, 3.0), (1.0,))


def log_ticks(low: float, high: float, most: int = 8) -> list[float]:
    """Round values between ``low`` and ``high`` (> 0) for a log axis: the densest series of
    ``_LOG_TICK_SERIES`` that gives at most ``most`` ticks (powers of ten when none does)."""
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    for series in _LOG_TICK_SERIES:
        ticks = [round(s * 10.0**d, 12) for d in decades for s in series if low <= s * 10.0**d <= high]
        if len(ticks) <= most:
            break
    return ticks


def geomean(values: Sequence[float]) -> float:
    """The geometric mean of positive ``values`` (at least one): the summaries' mean of ratios."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def align(lines: list[list[str]], text_columns: set[int]) -> str:
    """``lines`` of cells (the header first) as a text table: columns padded to their widest
    cell, the ``text_columns`` left-aligned and the numbers right-aligned."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) if i in text_columns else cell.rjust(w)
                  for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
        for line in lines
    )


def ms_cell(timing: Optional[Timing]) -> str:
    """A median time as a table cell: "-" when not measured, "FAIL" when its check failed."""
    if timing is None:
        return "-"
    if timing.error:
        return "FAIL"
    ms = timing.median_ms
    return _number(ms, "{:.4f}" if ms is not None and ms < 1 else "{:.3f}")


def _number(value: Optional[float], template: str) -> str:
    return "-" if value is None else template.format(value)
