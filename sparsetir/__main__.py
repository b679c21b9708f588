"""``python -m sparsetir``: the same as the ``sparsetir`` command."""

from sparsetir.cli import main

raise SystemExit(main())
