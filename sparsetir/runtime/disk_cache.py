"""Compiled kernels on disk: a new process loads them instead of compiling again.

Each entry is a kernel library (``KEY.so``, linked by ``toolchain.py``) and a record
(``KEY.json``): the stage-III function, the structure constraints and the library's SHA-256.
``KEY`` is a hash of the program (TVM's JSON of the stage-III function), the target (which
names the CPU) and the *code fingerprint*: sparsetir's own source, TVM's version and the
format below. Any change to sparsetir or TVM thus starts a new directory; nothing stale is ever
loaded. ``sparsetir.ops`` also keeps *aliases* (``NAME.alias``): its kernel configuration
(operation, dtype, width, target) to the key of the program it compiles to, so a second process
finds an op's kernel without scheduling it again.

Writers write to a private temporary file and rename it into place (atomic on POSIX), the
record last: concurrent processes see a whole entry or none, and two processes compiling the
same kernel both leave a valid one. A reader checks the record's format and the library's hash
before loading it; an entry that fails (truncated, edited, from an interrupted copy) is removed
and compiled again.

The directory is ``$SPARSETIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparsetir``, else
``~/.cache/sparsetir``; ``DiskCache(path)`` or ``set_directory`` choose another, and
``sparsetir cache`` shows or clears it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

from .._tvm import Expr, load_json_same_version, tirx, tvm, tvm_ffi
from .constraints import Constraint, IndicesConstraint, IndptrConstraint, LastOf

ENV_VAR = "SPARSETIR_CACHE_DIR"
#: Bumped whenever the layout or the record changes.
FORMAT = 1
PACKAGE = Path(__file__).resolve().parent.parent


def default_root() -> Path:
    """Where the cache lives unless told otherwise."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sparsetir"


def native_directory() -> Path:
    """Where sparsetir's own native helpers (the parallel launcher) are built."""
    return _writable(default_root() / "native")


def _writable(directory: Path) -> Path:
    """``directory`` if it can be created and written, else a private temporary one."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if os.access(directory, os.W_OK):
            return directory
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="sparsetir-"))


#: Parts of the package that cannot change a compiled kernel (tools around the compiler).
NOT_IN_FINGERPRINT = ("bench", "data", "explorer", "models", "cli.py", "show.py", "__main__.py")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of everything a compiled kernel depends on besides its program and target: TVM's
    version and sparsetir's source (but ``NOT_IN_FINGERPRINT``)."""
    digest = hashlib.sha256(f"format {FORMAT}\ntvm {tvm.__version__}\nffi {tvm_ffi.__version__}\n".encode())
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE)
        if path.suffix in (".py", ".c") and relative.parts[0] not in NOT_IN_FINGERPRINT and path.is_file():
            digest.update(str(relative).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def program_key(func: "tirx.PrimFunc", target: "tvm.target.Target") -> str:
    """The key of ``func`` compiled for ``target``."""
    text = tvm.ir.save_json(func)
    return hashlib.sha256(f"{code_fingerprint()}\n{target}\n{text}".encode()).hexdigest()


def name_key(name: str) -> str:
    """The key of an alias ``name`` (for ``sparsetir.ops``: its kernel configuration)."""
    return hashlib.sha256(f"{code_fingerprint()}\n{name}".encode()).hexdigest()


@dataclass(frozen=True)
class StoredKernel:
    """A kernel found on disk: its library and what a ``Kernel`` needs besides."""

    key: str
    library: Path
    func: "tirx.PrimFunc"
    constraints: tuple[Constraint, ...]


class DiskCache:
    """Kernel libraries and their records in one directory; safe under concurrent processes."""

    def __init__(self, root: Optional[os.PathLike] = None, enabled: bool = True):
        self._root = Path(root).expanduser() if root is not None else None
        self.enabled = enabled
        self._lock = threading.Lock()
        self.loads = 0
        self.stores = 0
        self.rejected = 0

    @property
    def root(self) -> Path:
        """The cache's top directory."""
        return self._root if self._root is not None else default_root()

    def set_directory(self, root: Optional[os.PathLike]) -> None:
        """Use ``root`` from now on (None: the default)."""
        self._root = Path(root).expanduser() if root is not None else None

    @property
    def directory(self) -> Path:
        """Where this version of sparsetir keeps its entries."""
        return self.root / f"v{FORMAT}" / code_fingerprint()[:16]

    def load(self, key: str) -> Optional[StoredKernel]:
        """The entry ``key``, verified; None when it is missing or broken (then removed)."""
        if not self.enabled:
            return None
        record_path = self.directory / f"{key}.json"
        try:
            raw = record_path.read_bytes()
        except OSError:
            return None
        library = self.directory / f"{key}.so"
        try:
            record = json.loads(raw)
            if not isinstance(record, dict) or record.get("format") != FORMAT or record.get("key") != key:
                raise ValueError("not a record of this format")
            if _file_hash(library) != record["sha256"]:
                raise ValueError("library does not match its record")
            objects = load_json_same_version(record["objects"])  # written by this TVM: the fingerprint says so
            func = objects[0]
            if not isinstance(func, tirx.PrimFunc):
                raise ValueError("no function in the record")
            constraints = tuple(_decode(item, objects) for item in record["constraints"])
        except Exception:  # noqa: BLE001 - any damage to an entry means: compile again
            self.rejected += 1
            self._remove(key)
            return None
        self.loads += 1
        return StoredKernel(key, library, func, constraints)

    def store(self, key: str, executable: Any, func: "tirx.PrimFunc", constraints: Sequence[Constraint]) -> Path:
        """Link ``executable`` into the entry ``key`` with its record; the library's path."""
        from . import toolchain

        directory = _writable(self.directory) if self.enabled else _scratch_directory()
        library = directory / f"{key}.so"
        fd, scratch = tempfile.mkstemp(prefix=f".{key}-", suffix=".so", dir=directory)
        os.close(fd)
        try:
            with tempfile.TemporaryDirectory(prefix="sparsetir-link-") as work:
                executable.export_library(scratch, fcompile=toolchain.link_shared, workspace_dir=work)
            objects: list[Any] = [func]
            record = {
                "format": FORMAT,
                "key": key,
                "sha256": _file_hash(Path(scratch)),
                "constraints": [_encode(c, objects) for c in constraints],
            }
            record["objects"] = tvm.ir.save_json(tvm.runtime.convert(objects))
            os.replace(scratch, library)  # atomic: a reader sees the old file, the new one, or none
        finally:
            if os.path.exists(scratch):
                os.unlink(scratch)
        _write_atomic(directory / f"{key}.json", json.dumps(record).encode())
        self.stores += 1
        return library

    def alias(self, name: str, key: str) -> None:
        """Record that ``name`` compiles to the entry ``key``."""
        if self.enabled:
            _write_atomic(_writable(self.directory) / f"{name_key(name)}.alias", key.encode())

    def resolve(self, name: str) -> Optional[str]:
        """The key ``name`` compiles to, if recorded."""
        if not self.enabled:
            return None
        try:
            key = (self.directory / f"{name_key(name)}.alias").read_text().strip()
        except (OSError, UnicodeDecodeError):
            return None
        return key if len(key) == 64 and all(c in "0123456789abcdef" for c in key) else None

    def entries(self) -> list[Path]:
        """The libraries of every version's entries."""
        top = self.root / f"v{FORMAT}"
        return sorted(top.glob("*/*.so")) if top.is_dir() else []

    def size(self) -> int:
        """Bytes used by every version's entries."""
        top = self.root / f"v{FORMAT}"
        return sum(p.stat().st_size for p in top.rglob("*") if p.is_file()) if top.is_dir() else 0

    def clear(self) -> None:
        """Remove every entry of every version (the launcher stays)."""
        shutil.rmtree(self.root / f"v{FORMAT}", ignore_errors=True)

    def _remove(self, key: str) -> None:
        for suffix in (".json", ".so"):
            try:
                (self.directory / f"{key}{suffix}").unlink()
            except OSError:
                pass


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_atomic(target: Path, data: bytes) -> None:
    fd, scratch = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)


@lru_cache(maxsize=1)
def _scratch_directory() -> Path:
    """Where libraries go when the disk cache is off (they must still be files to be loaded)."""
    return Path(tempfile.mkdtemp(prefix="sparsetir-kernels-"))


#: The record types a record may contain: nothing else is ever constructed from one.
_RECORD_TYPES = {cls.__name__: cls for cls in (IndptrConstraint, IndicesConstraint, LastOf)}


def _encode(value: Any, objects: list[Any]) -> Any:
    """``value`` as JSON; TVM objects go to ``objects`` (saved with TVM's JSON) by index."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"int": int(value)}
    if isinstance(value, (tuple, list)):
        return {"tuple": [_encode(v, objects) for v in value]}
    if type(value).__name__ in _RECORD_TYPES and dataclasses.is_dataclass(value):
        fields = {f.name: _encode(getattr(value, f.name), objects) for f in dataclasses.fields(value)}
        return {"record": type(value).__name__, "fields": fields}
    if isinstance(value, Expr):
        objects.append(value)
        return {"object": len(objects) - 1}
    raise TypeError(f"cannot store {type(value).__name__} in a kernel record")


def _decode(value: Any, objects: Sequence[Any]) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise ValueError(f"bad record item {value!r}")
    if "int" in value:
        return int(value["int"])
    if "tuple" in value:
        return tuple(_decode(v, objects) for v in value["tuple"])
    if "object" in value:
        index = value["object"]
        if not isinstance(index, int) or not 0 < index < len(objects):
            raise ValueError(f"bad object index {index!r}")
        return objects[index]
    cls = _RECORD_TYPES[value["record"]]
    names = {f.name for f in dataclasses.fields(cls)}
    fields = value["fields"]
    if not isinstance(fields, dict) or set(fields) - names:
        raise ValueError(f"bad fields for {cls.__name__}")
    return cls(**{name: _decode(v, objects) for name, v in fields.items()})


#: The process's disk cache (``sparsetir.runtime.default_cache`` uses it).
default_disk = DiskCache()
