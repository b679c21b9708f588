"""PyTorch Geometric, imported only when a model asks for the "pyg" backend (an optional extra)."""

from __future__ import annotations

import importlib.util
from types import ModuleType


def pyg_available() -> bool:
    """Whether ``torch_geometric`` is installed."""
    try:
        return importlib.util.find_spec("torch_geometric") is not None
    except (ImportError, ValueError):  # e.g. blocked with sys.modules["torch_geometric"] = None
        return False


def pyg_nn() -> ModuleType:
    """``torch_geometric.nn``, or an ImportError saying how to install it."""
    try:
        import torch_geometric.nn
    except ImportError as err:
        raise ImportError("the pyg backend needs PyTorch Geometric: pip install 'sparsetir[gnn]'") from err
    return torch_geometric.nn
