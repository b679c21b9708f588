"""The script language: parser, printer and the ``T`` namespace (``from sparsetir.script import tir as T``)."""

from . import tir
from .api import parse, parse_file

__all__ = ["parse", "parse_file", "tir"]
