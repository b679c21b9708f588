"""Parsing whole script files or texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Union

from ..errors import InternalError, ScriptError, SparseTIRError
from ..ir.function import SparseFunction
from .parser import parse_module
from .source import MAX_SCRIPT_CHARS, Source


def parse(
    text: str, filename: str = "<script>", captures: Mapping[str, Any] | None = None, *, spans: bool = True
) -> Union[SparseFunction, dict[str, SparseFunction]]:
    """Parse the text of a script file: one function in, that function out; several, a dict by name.

    A function whose ``T.func_attr`` says ``"sparse_tir_level": 1`` is read as stage II and gives
    a ``Stage2Function``; the others are stage-I ``SparseFunction``s.

    ``spans=False`` gives the nodes no source spans, and the pipeline then fills none in
    (``transforms/pipeline.py``): no ``sparsetir.spans`` block table, no script lines in the
    generated code, and no pass spends time on them. Errors found while parsing are still located;
    errors found later (lowering, schedule checks) name no script line.
    """
    if not isinstance(text, str):
        raise ScriptError(f"a script is text (str), got {type(text).__name__}", str(filename))
    try:
        functions = parse_module(Source(text, filename, spans=spans), captures)
    except ScriptError as err:
        raise err.with_traceback(None) from err.__cause__
    except SparseTIRError:
        raise
    except Exception as err:  # a bug: no input may make the parser fail any other way
        raise InternalError(f"{filename}: reading the script failed inside sparsetir "
                            f"({type(err).__name__}: {err}); please report this script") from err
    if len(functions) == 1:
        return next(iter(functions.values()))
    return functions


def parse_file(path: Union[str, Path], *, spans: bool = True) -> Union[SparseFunction, dict[str, SparseFunction]]:
    """Parse a script file from disk; errors name the file (``spans``: as for ``parse``). A file
    too large to hold a script that is read (over ``MAX_SCRIPT_CHARS`` characters of at most 4
    bytes each) is refused before it is read."""
    path = Path(path)
    size = path.stat().st_size
    if size > 4 * MAX_SCRIPT_CHARS:
        raise ScriptError(f"the script file is {size:,} bytes long; at most {MAX_SCRIPT_CHARS:,} characters are read "
                          "(split it into several files)", str(path), 1, 1)
    return parse(path.read_text(), str(path), spans=spans)
