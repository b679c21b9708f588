"""A fuzzer for the sparsetir script language: mutated scripts of both stages must fail cleanly.

``python -m fuzz --count 10000 --jobs 2 --seed 1`` mutates valid stage-I scripts (the examples
and test fixtures) and stage-II texts printed at run time (lowered, scheduled, ops kernels) and
checks each mutant in a sandboxed worker process. The run fails on any exception that is not a
``sparsetir.SparseTIRError``, a worker crash, a hang, any sign that script text was executed,
or a program whose printed text parses back to a different one.

CI runs a small budget of it (``tests/script/test_fuzz.py``) with a seed that changes every UTC
day; a failure prints the seed, and ``pytest tests/script/test_fuzz.py --fuzz-seed N`` reruns it.
The campaigns run so far, with their commands and results: ``bench/notes/fuzz.md``.

- ``corpus.py``: the seeds.
- ``payloads.py``: the Python injected into scripts, each detectable if it ever runs.
- ``mutators.py``: the mutations (token, line, injection, nesting, literals, levels).
- ``worker.py``: one process checking scripts, with the audit hook that sees code run.
- ``runner.py``: the pool of workers, timeouts, crash attribution, the summary and findings.
- ``__main__.py``: the command line.
"""
