"""Running mutants through a pool of worker processes and classifying what comes back.

Each worker (``fuzz.worker``) lives in its own folder of a temporary directory and checks one
script at a time. A worker that dies mid-script is a *crash* of that script, one that runs past
the time limit a *hang* (it is killed); either way a fresh worker takes its place.
"""

from __future__ import annotations

import json
import random
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional

from .corpus import REPO, Corpus
from .mutators import mutate

#: Finding classes, in the order the summary lists them.
FINDINGS = ("non_sparsetir_exception", "crash", "hang", "code_execution", "round_trip_mismatch", "bad_diagnostic")
PLURALS = {"non_sparsetir_exception": "non-sparsetir exceptions", "crash": "crashes", "hang": "hangs",
           "code_execution": "code executions", "round_trip_mismatch": "round-trip mismatches",
           "bad_diagnostic": "bad diagnostics"}
WORKER_START_S = 180.0


@dataclass(frozen=True)
class Mutant:
    """One script to check: its number in the run, the seed it came from and how it was made."""

    index: int
    stage: int
    seed: str
    mutations: tuple[str, ...]
    text: str


def mutants(corpus: Corpus, seed: int, count: int, stages: tuple[int, ...] = (1, 2)) -> Iterator[Mutant]:
    """``count`` mutants, alternating over ``stages``; mutant ``k`` depends only on ``seed`` and ``k``."""
    pools = {s: corpus.of_stage(s) for s in stages if corpus.of_stage(s)}
    order = sorted(pools)
    for k in range(count):
        stage = order[k % len(order)]
        rng = random.Random(f"{seed}:{k}")
        origin = rng.choice(pools[stage])
        text, applied = mutate(origin.text, rng)
        yield Mutant(k, stage, origin.name, tuple(applied), text)


@dataclass
class Result:
    """What checking one mutant gave: a finding class (or None) and the worker's reply."""

    mutant: Mutant
    finding: Optional[str]
    reply: dict[str, Any]


def classify(reply: dict[str, Any]) -> Optional[str]:
    """The finding class of a worker's reply, or None when the script was handled cleanly."""
    if reply.get("events") or reply.get("files"):
        return "code_execution"
    return {"exception": "non_sparsetir_exception", "mismatch": "round_trip_mismatch",
            "bad_diagnostic": "bad_diagnostic"}.get(reply["outcome"])


class Worker:
    """One ``fuzz.worker`` process and the mutant it is checking."""

    def __init__(self, home: Path, log: Path):
        self.home = home
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fuzz.worker", str(home)], cwd=REPO, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1,
        )
        self.current: Optional[Mutant] = None
        self.deadline = 0.0
        self.ready = False

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, mutant: Mutant, timeout_s: float, mode: str = "check") -> None:
        self.current = mutant
        self.deadline = time.monotonic() + timeout_s
        self.proc.stdin.write(json.dumps({"id": mutant.index, "text": mutant.text, "mode": mode}) + "\n")
        self.proc.stdin.flush()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()

    def death(self) -> str:
        """How the process ended, in words."""
        code = self.proc.wait()
        if code < 0:
            import signal

            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"


class Pool:
    """``jobs`` workers under ``workdir``; ``run`` checks mutants and yields their results."""

    def __init__(self, jobs: int, workdir: Path, timeout_s: float):
        self.workdir = workdir
        self.timeout_s = timeout_s
        self.started = 0
        self.workers = [self._start() for _ in range(jobs)]
        for worker in self.workers:
            self._wait_ready(worker)

    def _start(self) -> Worker:
        self.started += 1
        home = self.workdir / f"w{self.started}"
        return Worker(home, self.workdir / f"w{self.started}.log")

    def _wait_ready(self, worker: Worker) -> None:
        ready, _, _ = select.select([worker], [], [], WORKER_START_S)
        line = worker.proc.stdout.readline() if ready else ""
        if not line.strip().startswith("{"):
            worker.kill()
            log = (self.workdir / f"{worker.home.name}.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"a fuzz worker did not start ({worker.death()}):\n{log}")
        worker.ready = True

    def _replace(self, worker: Worker) -> Worker:
        worker.kill()
        shutil.rmtree(worker.home, ignore_errors=True)
        fresh = self._start()
        self._wait_ready(fresh)
        self.workers[self.workers.index(worker)] = fresh
        return fresh

    def run(self, items: Iterable[Mutant], mode: str = "check") -> Iterator[Result]:
        queue = iter(items)
        exhausted = False
        while True:
            for worker in self.workers:
                if worker.current is None and not exhausted:
                    mutant = next(queue, None)
                    if mutant is None:
                        exhausted = True
                    else:
                        worker.send(mutant, self.timeout_s, mode)
            busy = [w for w in self.workers if w.current is not None]
            if not busy:
                return
            wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready, _, _ = select.select(busy, [], [], wait)
            for worker in ready:
                mutant = worker.current
                line = worker.proc.stdout.readline()
                if line:
                    reply = json.loads(line)
                    worker.current = None
                    yield Result(mutant, classify(reply), reply)
                    continue
                how = worker.death()
                files = sorted(p.name for p in worker.home.iterdir()) if worker.home.exists() else []
                self._replace(worker)
                reply = {"outcome": "crash", "phase": "?", "error": how, "message": f"the worker {how}", "files": files}
                yield Result(mutant, "code_execution" if files else "crash", reply)
            now = time.monotonic()
            for worker in list(self.workers):
                if worker.current is not None and worker not in ready and now > worker.deadline:
                    mutant = worker.current
                    self._replace(worker)
                    yield Result(mutant, "hang", {"outcome": "hang", "phase": "?", "error": "timeout",
                                                  "message": f"no answer within {self.timeout_s} s"})

    def close(self) -> None:
        for worker in self.workers:
            if worker.proc.poll() is None:
                worker.proc.stdin.close()
            worker.kill()


@dataclass
class Summary:
    """Counts of a run, and the results that are findings."""

    scripts: Counter = field(default_factory=Counter)  # by stage
    parsed: Counter = field(default_factory=Counter)
    outcomes: Counter = field(default_factory=Counter)  # sparsetir_error, ok, ...
    unlocated_parse_errors: int = 0
    foreign_causes: int = 0  # sparsetir errors wrapping a TVM (or other) exception from lowering
    findings: list[Result] = field(default_factory=list)

    def add(self, result: Result) -> None:
        reply, stage = result.reply, result.mutant.stage
        self.scripts[stage] += 1
        self.outcomes[reply["outcome"]] += 1
        if reply.get("phase") not in ("parse", "?"):
            self.parsed[stage] += 1
        if reply.get("foreign_cause"):
            self.foreign_causes += 1
        if reply["outcome"] == "sparsetir_error" and reply["phase"] == "parse" and not reply.get("located"):
            self.unlocated_parse_errors += 1
        if result.finding:
            self.findings.append(result)

    def count(self, finding: str) -> int:
        return sum(1 for r in self.findings if r.finding == finding)

    def line(self) -> str:
        """The one-line summary of the run."""
        total = sum(self.scripts.values())
        parts = [
            f"{total} scripts (stage I {self.scripts[1]}, stage II {self.scripts[2]})",
            f"parsed ok {sum(self.parsed.values())} (I {self.parsed[1]}, II {self.parsed[2]})",
            f"sparsetir errors {self.outcomes['sparsetir_error']} ({self.foreign_causes} wrapping TVM's)",
            *(f"{PLURALS[name]} {self.count(name)}" for name in FINDINGS),
        ]
        return ", ".join(parts)

    def signatures(self) -> Counter:
        """Findings grouped by class, error type and first words of the message."""
        out: Counter = Counter()
        for r in self.findings:
            message = r.reply.get("message", "")
            out[(r.finding, r.reply.get("phase", "?"), r.reply.get("error", ""), message[:90])] += 1
        return out


def save_finding(out: Path, result: Result) -> Path:
    """The mutant as ``out/CLASS/NNNNNN-stageS.py`` and its details beside it as ``.json``."""
    folder = out / result.finding
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{result.mutant.index:06d}-stage{result.mutant.stage}"
    (folder / f"{stem}.py").write_text(result.mutant.text)
    details = {**asdict(result.mutant), "finding": result.finding, **result.reply}
    details.pop("text")
    (folder / f"{stem}.json").write_text(json.dumps(details, indent=2))
    return folder / f"{stem}.py"


def seeds_as_mutants(corpus: Corpus) -> list[Mutant]:
    """The unmutated seeds, to be checked like mutants: every one must come back ``ok``."""
    return [Mutant(k, s.stage, s.name, (), s.text) for k, s in enumerate(corpus.seeds)]


def check_all(items: Iterable[Mutant], jobs: int, timeout_s: float, mode: str = "check") -> list[Result]:
    """Check ``items`` in a fresh pool; every result, in completion order."""
    with tempfile.TemporaryDirectory(prefix="sparsetir-fuzz-") as tmp:
        pool = Pool(jobs, Path(tmp), timeout_s)
        try:
            return list(pool.run(items, mode))
        finally:
            pool.close()


def run(corpus: Corpus, seed: int, count: int, jobs: int, timeout_s: float, out: Optional[Path],
        progress: Callable[[Iterable[Result]], Iterable[Result]] = lambda it: it,
        stages: tuple[int, ...] = (1, 2)) -> Summary:
    """Check ``count`` mutants of ``corpus`` with ``jobs`` workers; findings saved under ``out``."""
    summary = Summary()
    with tempfile.TemporaryDirectory(prefix="sparsetir-fuzz-") as tmp:
        pool = Pool(jobs, Path(tmp), timeout_s)
        try:
            for result in progress(pool.run(mutants(corpus, seed, count, stages))):
                summary.add(result)
                if result.finding and out is not None:
                    save_finding(out, result)
        finally:
            pool.close()
    return summary


def self_test(jobs: int, timeout_s: float) -> list[str]:
    """Run every payload as Python in a worker: each must be seen (else the detector is blind)."""
    from . import payloads

    texts = [payloads.statement(k) for k, t in enumerate(payloads.STATEMENTS) if t not in payloads.INERT]
    texts += [f"fz = {payloads.expression(k)}" for k, t in enumerate(payloads.EXPRESSIONS) if t not in payloads.INERT]
    items = [Mutant(k, 0, "self-test", (), text) for k, text in enumerate(texts)]
    results = check_all(items, jobs, timeout_s, mode="exec_payload")
    return [f"{r.mutant.text!r}: {r.reply}" for r in results if r.finding != "code_execution"]


__all__ = ["FINDINGS", "Mutant", "Pool", "Result", "Summary", "classify", "mutants", "run", "save_finding", "seeds_as_mutants", "check_all", "self_test"]
