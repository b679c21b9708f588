"""Python the fuzzer injects into scripts: if any of it ever runs, the worker notices.

Every payload touches only the canary, a file named ``CANARY`` relative to the worker's working
directory (its own folder inside the run's temporary directory), or calls something the worker's
audit hook records and refuses (``os.system``, ``subprocess``, ``exec``/``eval``, a write outside
that folder). A mutation can replace a string token by another one of the script, never edit inside
it, so a payload cannot be turned into a write elsewhere; the audit hook blocks that anyway.
"""

from __future__ import annotations

#: The canary's file name, relative to the worker's working directory.
CANARY = "fz_canary"

#: Expressions that, evaluated, create the canary or raise an audit event the worker records.
EXPRESSIONS = [
    '__import__("os").system("touch {c}")',
    'open("{c}", "w")',
    'open("{c}", "a").write("x") or 4',
    '(lambda: open("{c}", "w"))()',
    '(lambda x=open("{c}", "w"): 4)()',
    'f"{{open(\'{c}\', \'w\')}}"',
    "f'{{__import__(\"os\").system(\"touch {c}\")}}'",
    '[open("{c}", "w") for _ in range(1)]',
    '{{k: open("{c}", "w") for k in "a"}}',
    '(x for x in [open("{c}", "w")])',
    '(fz := open("{c}", "w"))',
    '__import__("subprocess").run(["touch", "{c}"])',
    '__import__("pathlib").Path("{c}").touch()',
    'eval("open(\'{c}\', \'w\')")',
    'exec("open(\'{c}\', \'w\')")',
    'getattr(__import__("builtins"), "open")("{c}", "w")',
    '__builtins__["open"]("{c}", "w") if isinstance(__builtins__, dict) else __builtins__.open("{c}", "w")',
    'T.__dict__["__builtins__"]["open"]("{c}", "w")',
    '__import__("io").FileIO("{c}", "w")',
    '().__class__.__base__.__subclasses__()',
    'T.int32(open("{c}", "w") is None) + 4',
    'T.int32(__import__("os").system("touch {c}"))',
    'compile("open(\'{c}\', \'w\')", "x", "exec")',
    '__import__("sys").exit(3)',
    'breakpoint()',
    'print(open("{c}", "w"))',
    'int(open("{c}", "w").write("7"))',
    'm if open("{c}", "w") else m',
    '(open("{c}", "w"), 4)[1]',
    'T.int32(len([open("{c}", "w")]))',
]

#: Statements (one or more lines, indented by four spaces per level) that do the same.
STATEMENTS = [
    '__import__("os").system("touch {c}")',
    'import os\nos.system("touch {c}")',
    'from os import system\nsystem("touch {c}")',
    'open("{c}", "w").close()',
    'with open("{c}", "w") as fz:\n    pass',
    'for fz in [open("{c}", "w")]:\n    pass',
    'fz = open("{c}", "w")',
    'fz: int = open("{c}", "w")',
    'assert open("{c}", "w")',
    'def fz():\n    open("{c}", "w")\nfz()',
    'class Fz:\n    x = open("{c}", "w")',
    'try:\n    open("{c}", "w")\nexcept Exception:\n    pass',
    'global fz\nfz = open("{c}", "w")',
    'raise SystemExit(open("{c}", "w"))',
    'exec("open(\'{c}\', \'w\')")',
    'T.evaluate(open("{c}", "w"))',
    'T.evaluate(__import__("os").system("touch {c}"))',
    'async def fz():\n    await open("{c}", "w")',
    'lambda: open("{c}", "w")',
    'del fz',
    'if open("{c}", "w"):\n    pass',
    'while open("{c}", "w"):\n    break',
    'print(f"{{open(\'{c}\', \'w\')}}")',
]

#: Payloads with no effect the worker can see even when run (they probe other things: a parser
#: that walks ``__subclasses__``, exits, or defines code it never calls); the self-test skips them.
INERT = frozenset({
    '().__class__.__base__.__subclasses__()',
    '__import__("sys").exit(3)',
    'async def fz():\n    await open("{c}", "w")',
    'lambda: open("{c}", "w")',
    'del fz',
})

#: Texts for docstrings and comments: harmless as text, but a parser that evaluates them runs them.
DOC_TEXTS = [
    'open("{c}", "w")',
    '"sparse_tir_level": 1',
    'T.func_attr({{"sparse_tir_level": 1}}) __import__("os").system("touch {c}")',
    '{{"sparse_tir_level": 1}}',
]


def expression(k: int) -> str:
    """Payload expression number ``k`` (modulo their count)."""
    return EXPRESSIONS[k % len(EXPRESSIONS)].format(c=CANARY)


def statement(k: int) -> str:
    """Payload statement number ``k`` (modulo their count); lines separated by ``\\n``."""
    return STATEMENTS[k % len(STATEMENTS)].format(c=CANARY)


def doc_text(k: int) -> str:
    """Docstring/comment text number ``k``."""
    return DOC_TEXTS[k % len(DOC_TEXTS)].format(c=CANARY)
