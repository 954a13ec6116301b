"""Code objects of the methods ``attrs`` and ``cattrs`` generate, kept between processes
(language server start-up, issue 10).

``lsprotocol.types`` defines about 580 ``attrs`` classes. For each, ``attrs`` writes the source
of ``__init__``, ``__repr__``, ``__eq__`` … and compiles it with the built-in ``compile``
(``attr._make._compile_and_eval``); ``cattrs`` does the same for the (un)structuring function of
each message type it first meets (``cattrs.gen``). Those compiles were about 0.25 s of the
server's 0.6 s from spawn to the ``initialize`` response on this machine.

:func:`install` (called by ``unveil serve`` before the server imports ``pygls``; idempotent)
puts a ``compile`` in the globals of those modules, in front of the built-in:

* a ``(source, filename)`` pair found in the table gets its stored code object;
* any other is compiled by the built-in and added to the table, which is written back at exit
  (:data:`MAX_ENTRIES` entries at most, sources of at most :data:`MAX_SOURCE` code points).

Only calls of the form ``compile(str, str, "exec")`` are served; anything else goes to the
built-in. The table is one ``marshal`` entry of :mod:`unveil.core.cache` (``code/<key>``; key:
the unveil version, the Python version and build, and the ``attrs`` and ``cattrs`` versions: a
code object is valid only for the interpreter that made it), under the cache's own SHA-256 check;
a table that is missing, damaged or of another layout is ignored and rewritten. A loaded entry
is used only if its ``co_filename`` is the filename asked for.

This is what CPython does for every imported module (``__pycache__``: marshalled code objects
in a folder of the user's), for sources that are the libraries' own: the generated text depends
on the classes' definitions only, never on a scanned file. ``UNVEIL_NO_CACHE`` leaves the
libraries alone.
"""

from __future__ import annotations

import atexit
import builtins
import importlib
import importlib.util
import sys
import threading
from types import CodeType
from typing import Any

NAMESPACE = "code"
MODULES = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")
"""Modules whose ``compile`` is fronted (a module that defines a ``compile`` of its own is not)."""
MAX_ENTRIES = 8192
"""Most code objects the table keeps (``lsprotocol`` and the server need about 700)."""
MAX_SOURCE = 50_000
"""Longest source (code points) the table keeps."""

stats = {"loaded": 0, "compiled": 0, "stored": 0}
"""Counts for this process (tests and the benchmark read them)."""

_table: dict[tuple[str, str], CodeType] = {}
_key: str | None = None
_dirty = False
_installed: list[str] = []
_lock = threading.Lock()
_builtin_compile = builtins.compile


def table_key() -> str:
    """The cache key of this interpreter's table: the unveil version, the Python version and
    bytecode tag, and the path, size and modification time of each fronted module's file (an
    upgrade of ``attrs`` or ``cattrs`` is a new table; ``importlib.metadata`` would cost more
    than the table saves)."""
    import os

    from unveil.core import cache

    parts: list[bytes | str] = [cache.version_tag(), sys.version, sys.implementation.cache_tag or ""]
    for name in MODULES:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) or ""
        try:
            st = os.stat(origin)
            parts += [origin, f"{st.st_size}:{st.st_mtime_ns}"]
        except OSError:
            parts += [name, ""]
    return "methods-" + cache.digest(parts)[:32]


def _read_table(key: str) -> dict[tuple[str, str], CodeType]:
    """The table from the cache; an empty dict for anything unusable."""
    from unveil.core import cache

    got = cache.load_marshal(NAMESPACE, key)
    if not isinstance(got, dict):
        return {}
    return {
        k: v
        for k, v in got.items()
        if isinstance(k, tuple)
        and len(k) == 2
        and isinstance(k[0], str)
        and isinstance(k[1], str)
        and isinstance(v, CodeType)
        and v.co_filename == k[1]
    }


def _front(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
    """``compile`` for the fronted modules: see the module docstring."""
    global _dirty
    if args or kwargs or mode != "exec" or type(source) is not str or type(filename) is not str:
        return _builtin_compile(source, filename, mode, *args, **kwargs)
    key = (source, filename)
    code = _table.get(key)
    if code is not None:
        stats["loaded"] += 1
        return code
    code = _builtin_compile(source, filename, mode)
    stats["compiled"] += 1
    if len(source) <= MAX_SOURCE and len(_table) < MAX_ENTRIES:
        with _lock:
            _table[key] = code
            _dirty = True
        stats["stored"] += 1
    return code


def save() -> bool:
    """Write the table back if this process added entries (registered with ``atexit`` by
    :func:`install`). Returns whether a file was written."""
    global _dirty
    from unveil.core import cache

    if not _dirty or _key is None or not cache.enabled():
        return False
    with _lock:
        table = dict(_table)
        _dirty = False
    return cache.store_marshal(NAMESPACE, _key, table)


def install() -> list[str]:
    """Front ``compile`` in :data:`MODULES` (imported here: before ``lsprotocol`` defines its
    classes). Returns the modules fronted; none when the cache is off, and a module that cannot
    be imported or does not use ``compile`` is skipped. Never raises."""
    global _key
    from unveil.core import cache

    if _installed or not cache.enabled():
        return list(_installed)
    try:
        _key = table_key()
        _table.update(_read_table(_key))
    except Exception:  # noqa: BLE001 - no table: every compile goes to the built-in
        _key = None
    for name in MODULES:
        try:
            mod = importlib.import_module(name)
        except Exception:  # noqa: BLE001
            continue
        if "compile" in mod.__dict__:
            continue  # its own compile, not the built-in: left alone
        mod.__dict__["compile"] = _front
        _installed.append(name)
    if _installed:
        atexit.register(save)
    return list(_installed)


def uninstall() -> None:
    """Give the modules back the built-in ``compile`` and forget the table (tests)."""
    global _key, _dirty
    for name in _installed:
        mod = sys.modules.get(name)
        if mod is not None and mod.__dict__.get("compile") is _front:
            del mod.__dict__["compile"]
    _installed.clear()
    _table.clear()
    _key, _dirty = None, False
    try:
        atexit.unregister(save)
    except Exception:  # noqa: BLE001
        pass
