"""``sparsetir explore FILE``: the explorer for a script file, served locally or saved as one page."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from ..errors import ScriptError, SparseTIRError
from .exploration import explore_file
from .server import serve


def parse_widths(items: Optional[list[str]]) -> dict[str, int]:
    """``--width NAME=VALUE`` options as a dict (a ``ValueError`` naming a malformed one)."""
    widths: dict[str, int] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"--width {item!r}: expected NAME=INTEGER, such as feat_size=128")
        widths[name] = int(value)
    return widths


def run(args: argparse.Namespace) -> int:
    """Build the exploration of ``args.file``; write it to ``--html`` or serve it on 127.0.0.1."""
    if not args.compile_timeout > 0:
        print(f"sparsetir explore: --compile-timeout {args.compile_timeout:g}: expected a positive number of seconds",
              file=sys.stderr)
        return 1
    try:
        exploration = explore_file(args.file, args.func, args.schedule, args.target, args.code,
                                   widths=parse_widths(args.width))
    except ScriptError as err:
        print(err.render(), file=sys.stderr)
        return 1
    except (OSError, SparseTIRError, ValueError) as err:
        print(f"sparsetir explore: {err}", file=sys.stderr)
        return 1
    if args.html:
        path = exploration.save(args.html)
        size = path.stat().st_size / 1024
        steps = len(exploration.document["steps"])
        print(f"sparsetir explore: wrote {path} ({size:.0f} KiB; {steps} schedule step{'s' * (steps != 1)})")
        return 0
    try:
        serve(exploration, port=args.port, open_browser=not args.no_browser, compile_timeout=args.compile_timeout)
    except OSError as err:  # the port is taken, say
        print(f"sparsetir explore: cannot serve on 127.0.0.1:{args.port}: {err}", file=sys.stderr)
        return 1
    return 0
