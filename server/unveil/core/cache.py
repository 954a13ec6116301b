"""The on-disk cache in the user cache directory: what later processes need not compute again.

The kinds of entries, each a file ``<cache dir>/<namespace>/<key>``:

* ``tokenizer/`` — the parsed ``o200k_base`` ranks (:mod:`unveil.core.tokens`), ``marshal``, and
  the short tokens' ranks as a :class:`~unveil.core.rank_table.RankTable` (its own layout);
* ``rules/`` — the load-time analysis of the pattern rules (literal prefilters, single-line and
  match-width bounds; :mod:`unveil.core.checks.directives`), ``marshal``, keyed by the SHA-256
  of the rule files' bytes and the unveil version;
* ``regex/`` — compiled ``regex`` patterns (:mod:`unveil.core.rxcache`), ``marshal`` of pickles,
  keyed by the unveil, Python and ``regex`` versions;
* ``rules/`` also holds the parsed rule files (:mod:`unveil.core.rules`), ``marshal``, keyed by
  their names and bytes;
* ``data/`` — the parsed tables of unveil's bundled TOML data files (:func:`load_toml`),
  ``marshal``, keyed by the unveil version and each file's name and bytes;
* ``files/`` — one CLI result per scanned file (:mod:`unveil.core.results`), ``pickle``, keyed by
  :func:`file_key`: the unveil version, the rules and settings hash, the file's path and bytes and
  the bytes of every file its ``@imports`` reached.

The directory is ``$UNVEIL_CACHE_DIR`` when set, else platformdirs' ``user_cache_dir("unveil")``
(``~/.cache/unveil`` on Linux); it is created with mode 0700. ``UNVEIL_NO_CACHE=1`` (the CLI's
``--no-cache`` sets it, so pool workers see it too) turns every read and write off. Nothing
here ever raises: an unreadable, corrupt or unwritable cache is the same as an empty one (every
entry carries the SHA-256 of its payload, checked on every read), and a
write goes to a temporary file renamed into place, so a concurrent reader never sees half an
entry. The cache only ever holds what unveil computed itself from bytes it hashed; a scanned
file cannot name or place an entry.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

ENV_DIR = "UNVEIL_CACHE_DIR"
ENV_OFF = "UNVEIL_NO_CACHE"
FORMAT = 4
"""Bumped when an entry's layout changes; part of every key."""
_MAGIC = b"UNVC2"
"""Every entry is ``_MAGIC``, the SHA-256 of the payload (32 bytes), then the payload: a
truncated or altered file is a miss, never a wrong value."""


def enabled() -> bool:
    """Whether the cache is used (``UNVEIL_NO_CACHE`` unset, empty or ``0``)."""
    return os.environ.get(ENV_OFF, "") in ("", "0")


def disable() -> None:
    """Turn the cache off for this process and the processes it starts (``--no-cache``)."""
    os.environ[ENV_OFF] = "1"


def cache_dir() -> Path | None:
    """The cache directory (not created), or ``None`` when the cache is off or no directory
    can be determined."""
    root = _cache_root()
    return Path(root) if root is not None else None


def _cache_root() -> str | None:
    """:func:`cache_dir` as a string (read per entry: the environment may change between
    calls, ``--no-cache`` sets it; the platform directory is looked up once)."""
    if not enabled():
        return None
    env = os.environ.get(ENV_DIR)
    if env:
        return env
    return _platform_dir()


@lru_cache(maxsize=1)
def _platform_dir() -> str | None:
    try:
        import platformdirs

        return str(platformdirs.user_cache_dir("unveil", appauthor=False))
    except Exception:  # noqa: BLE001 - no cache rather than no scan
        return None


def _path(namespace: str, key: str) -> Path | None:
    p = entry_path(namespace, key)
    return Path(p) if p is not None else None


def _read(namespace: str, key: str) -> bytes | None:
    """The payload of an entry whose checksum holds, else ``None``."""
    path = entry_path(namespace, key)
    if path is None:
        return None
    try:
        data = _read_file(path)  # str paths: a Path per hit costs more
    except (OSError, ValueError):
        return None
    head = len(_MAGIC) + 32
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    payload = data[head:]
    if hashlib.sha256(payload).digest() != data[len(_MAGIC) : head]:
        return None
    return payload


def _read_file(path: str) -> bytes:
    """The bytes of the cache entry at ``path`` with four system calls (``open``, ``fstat``, one
    ``read`` of one byte more than the size, ``close``): the built-in ``open(…).read()`` adds an
    ``ioctl``, two ``lseek`` calls and a second ``read``, a sixth of a warm corpus run's system
    calls. A read shorter than asked is taken as the end of the file: an entry cut short fails
    its checksum and is a miss. Raises ``OSError``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        want = max(os.fstat(fd).st_size + 1, 1 << 12)
        parts = []
        while True:
            chunk = os.read(fd, want)
            parts.append(chunk)
            if len(chunk) < want:
                break
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def _write(namespace: str, key: str, data: bytes) -> bool:
    p = _path(namespace, key)
    if p is None:
        return False
    try:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + hashlib.sha256(data).digest())
                fh.write(data)
            os.replace(tmp, p)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        return True
    except OSError:
        return False


def load_marshal(namespace: str, key: str) -> Any:
    """The ``marshal`` value stored under ``key``, or ``None``."""
    data = _read(namespace, key)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError, OverflowError):
        return None


def store_marshal(namespace: str, key: str, value: Any) -> bool:
    """Store ``value`` (marshal-able: str, bytes, int, tuples, lists, dicts, frozensets …)."""
    try:
        data = marshal.dumps(value)
    except ValueError:
        return False
    return _write(namespace, key, data)


def load_bytes(namespace: str, key: str) -> bytes | None:
    """The bytes stored under ``key`` (:func:`store_bytes`), or ``None``."""
    return _read(namespace, key)


def store_bytes(namespace: str, key: str, data: bytes) -> bool:
    """Store ``data`` as it is (a layout of its own, e.g. :mod:`unveil.core.rank_table`)."""
    return _write(namespace, key, data)


def load_pickle(namespace: str, key: str) -> Any:
    """The pickled value stored under ``key``, or ``None`` (also when it no longer unpickles,
    e.g. after a class changed)."""
    data = _read(namespace, key)
    if data is None:
        return None
    try:
        return pickle.loads(data)
    except Exception:  # noqa: BLE001 - a stale or corrupt entry is a miss
        return None


def entry_path(namespace: str, key: str) -> str | None:
    """Where the entry under ``key`` is (whether or not it exists), as a string; ``None`` when
    the cache is off."""
    root = _cache_root()
    return None if root is None else os.path.join(root, namespace, key)


def store_pickle(namespace: str, key: str, value: Any) -> bool:
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001
        return False
    return _write(namespace, key, data)


def digest(parts: Iterable[bytes | str]) -> str:
    """Hex SHA-256 over ``parts``, each length-prefixed so no two sequences collide."""
    h = hashlib.sha256()
    for part in parts:
        b = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def version_tag() -> str:
    """The unveil version and this module's :data:`FORMAT`, part of every key."""
    from unveil import __version__

    return f"{__version__}/{FORMAT}"


def load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The TOML table of the bundled data file at ``path`` (prices, kinds, schemas, catalogues),
    parsed once per file content: the table is kept under ``data/`` keyed by the unveil version
    and the file's name and bytes (``marshal``; TOML's dates and times are stored as tuples,
    which no TOML table holds, and made again on loading). Loading an entry takes a fraction of
    a millisecond where ``tomllib`` takes 1–5 ms per file. For unveil's own files only: user
    configuration is read through :mod:`unveil.core.safe_read`. Raises what reading and
    ``tomllib.loads`` raise (``OSError``, ``UnicodeDecodeError``, ``tomllib.TOMLDecodeError``)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    key = "toml-" + digest([version_tag(), os.path.basename(os.fspath(path)), raw])[:32]
    got = load_marshal("data", key)
    if isinstance(got, dict):
        try:
            return _from_marshal(got)
        except (TypeError, ValueError):
            pass  # not an entry this function wrote: parsed again below
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    table = tomllib.loads(raw.decode("utf-8"))
    store_marshal("data", key, _to_marshal(table))
    return table


_TIME_TYPES = ("datetime", "date", "time")


def _to_marshal(value: Any) -> Any:
    """A TOML value with every date, time and date-time as ``(type name, ISO 8601 text)``."""
    import datetime

    if isinstance(value, dict):
        return {k: _to_marshal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_marshal(v) for v in value]
    for name in _TIME_TYPES:  # datetime before date: a datetime is a date
        if isinstance(value, getattr(datetime, name)):
            return (name, value.isoformat())
    return value


def _from_marshal(value: Any) -> Any:
    """:func:`_to_marshal` undone. Raises ``TypeError``/``ValueError`` on a tuple it did not make."""
    import datetime

    if isinstance(value, dict):
        return {k: _from_marshal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_marshal(v) for v in value]
    if isinstance(value, tuple):
        name, text = value
        if name not in _TIME_TYPES:
            raise ValueError(f"not a TOML time type: {name!r}")
        return getattr(datetime, name).fromisoformat(text)
    return value
