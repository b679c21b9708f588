"""``python -m fuzz``: check mutated sparsetir scripts of both stages; see ``fuzz/__init__.py``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .corpus import build_corpus
from .runner import FINDINGS, check_all, run, seeds_as_mutants, self_test

EPILOG = """\
Each mutant is parsed, printed, parsed again (compared with structural_equal) and lowered
(no TVM build) in a worker process. Findings, each saved as OUT/CLASS/NNNNNN-stageS.py (the
script) and .json (what happened):
  non_sparsetir_exception  something other than a sparsetir.SparseTIRError escaped, or a
                           sparsetir.InternalError (sparsetir's own "this is a bug" error)
  crash                    the worker process died (e.g. a segfault in TVM)
  hang                     no answer within --timeout-s
  code_execution           script text ran: an audited event (os.system, subprocess, exec,
                           a file write) or a file appeared in the worker's folder
  round_trip_mismatch      a parsed program printed to text that parses to something else
                           (or does not parse at all)
  bad_diagnostic           a parse error that does not start with the script's file name or
                           names sparsetir's own files
A LoweringError wrapping TVM's own refusal is clean (counted apart in the summary line).
Exit status 1 if there is any finding. Reproduce one script: sparsetir show OUT/CLASS/FILE.py

examples:
  python -m fuzz --count 10000 --jobs 2 --seed 1 --out /tmp/fuzz-out
  python -m fuzz --count 500 --stages 2 --seed 7
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m fuzz",
        description="Fuzz the sparsetir script parsers with mutated stage-I and stage-II scripts "
        "(token and line edits, injected Python, deep nesting, huge literals, None arithmetic, "
        "stage-level edits).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--count", type=int, default=1000, help="mutants to check (default 1000), "
                        "alternating between the stages")
    parser.add_argument("--seed", type=int, default=0, help="random seed; mutant k depends only on "
                        "the seed, k and the corpus (default 0)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout-s", type=float, default=5.0, help="seconds per script before it "
                        "counts as a hang (default 5)")
    parser.add_argument("--out", type=Path, default=None, help="folder for the findings (default: a "
                        "new temporary folder, printed at the end)")
    parser.add_argument("--stages", choices=["1", "2", "both"], default="both", help="which seeds to "
                        "mutate (default both)")
    parser.add_argument("--schedules", type=int, default=None, metavar="N", help="schedule only the "
                        "first N stage-I functions for stage-II seeds (default: all; faster startup)")
    parser.add_argument("--self-test", action="store_true", help="only check that every payload, "
                        "run as Python, is detected")
    parser.add_argument("--seeds-only", action="store_true", help="only check the unmutated seeds: "
                        "each must parse, round-trip and lower with no event recorded")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.self_test:
        blind = self_test(args.jobs, args.timeout_s)
        print("\n".join(blind) or "self-test: every payload was detected")
        return 1 if blind else 0
    start = time.monotonic()
    corpus = build_corpus(schedules=args.schedules)
    for skipped in corpus.skipped:
        print(f"corpus: skipped {skipped}", file=sys.stderr)
    print(f"corpus: {len(corpus.of_stage(1))} stage-I and {len(corpus.of_stage(2))} stage-II seeds "
          f"({time.monotonic() - start:.1f} s)", file=sys.stderr)
    if args.seeds_only:
        results = check_all(seeds_as_mutants(corpus), args.jobs, args.timeout_s)
        for r in results:
            if r.reply["outcome"] != "ok" or r.finding:
                print(f"{r.mutant.seed}: {r.finding or r.reply['outcome']} [{r.reply.get('phase')}] "
                      f"{r.reply.get('error')}: {r.reply.get('message')} {r.reply.get('events') or ''}")
        findings = sum(1 for r in results if r.finding)
        print(f"{len(results)} seeds, {findings} findings")
        return 1 if findings else 0
    out = args.out
    if out is None:
        import tempfile

        out = Path(tempfile.mkdtemp(prefix="sparsetir-fuzz-findings-"))
    stages = (1, 2) if args.stages == "both" else (int(args.stages),)
    progress = _progress_bar(args.count) if not args.quiet and sys.stderr.isatty() else (lambda it: it)
    start = time.monotonic()
    summary = run(corpus, args.seed, args.count, args.jobs, args.timeout_s, out, progress, stages)
    elapsed = time.monotonic() - start
    for (finding, phase, error, message), n in summary.signatures().most_common():
        print(f"  {n:5d}  {finding}  [{phase}] {error}: {message}")
    print(summary.line())
    rate = f"{elapsed:.0f} s ({1000 * elapsed / max(1, args.count):.0f} s per 1000 scripts, {args.jobs} jobs)"
    print(f"{rate}; findings in {out}" if summary.findings else f"{rate}; no findings")
    return 1 if any(summary.count(f) for f in FINDINGS) else 0


def _progress_bar(total: int):
    from tqdm import tqdm

    return lambda it: tqdm(it, total=total, unit="script", smoothing=0.05)


if __name__ == "__main__":
    sys.exit(main())
