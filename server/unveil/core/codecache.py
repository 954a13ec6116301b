"""Code objects of the methods ``dataclasses``, ``attrs`` and ``cattrs`` generate, kept between
processes (start-up time, issue 10).

``lsprotocol.types`` defines about 580 ``attrs`` classes. For each, ``attrs`` writes the source
of ``__init__``, ``__repr__``, ``__eq__`` … and compiles it with the built-in ``compile``
(``attr._make._compile_and_eval``); ``cattrs`` does the same for the (un)structuring function of
each message type it first meets (``cattrs.gen``). Those compiles were about 0.25 s of the
server's 0.6 s from spawn to the ``initialize`` response on this machine. The standard
library's ``dataclasses`` does the same with the built-in ``exec`` of a source string for each
of unveil's own 86 dataclasses: about 30 ms of a 0.3 s ``unveil check`` of one file.

:func:`install` (called by ``unveil serve`` before the server imports ``pygls``, and by
``unveil check`` and the other commands before they import the analysis; idempotent) puts a
``compile`` (``attrs``, ``cattrs``) or an ``exec`` (``dataclasses``) in the globals of those
modules, in front of the built-in:

* a ``(source, filename, future flags)`` triple found in the table gets its stored code object;
* any other is compiled by the built-in and added to the table, which is written back at exit
  (:data:`MAX_ENTRIES` entries at most, sources of at most :data:`MAX_SOURCE` code points).

Only ``compile(str, str, "exec")`` and ``exec(str, globals[, locals])`` are served; anything
else goes to the built-in. A source is compiled as the built-in would have compiled it for the
calling module: with the ``__future__`` features in effect there (``compile`` and ``exec``
inherit them from the code that calls them; this module's own are not passed on). The table is
one ``marshal`` entry of :mod:`unveil.core.cache` (``code/<key>``; key: the unveil version, the
Python version and build, and the path, size and modification time of each fronted module: a
code object is valid only for the interpreter that made it), under the cache's own SHA-256
check; a table that is missing, damaged or of another layout is ignored and rewritten. A loaded
entry is used only if its ``co_filename`` is the filename asked for.

This is what CPython does for every imported module (``__pycache__``: marshalled code objects
in a folder of the user's), for sources that are the libraries' own: the generated text depends
on the classes' definitions only, never on a scanned file. ``UNVEIL_NO_CACHE`` leaves the
libraries alone.
"""

from __future__ import annotations
import __future__

import atexit
import builtins
import importlib
import importlib.util
import sys
import threading
from types import CodeType
from typing import Any

NAMESPACE = "code"
SERVER_MODULES = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts", "dataclasses")
"""Modules fronted for the language server (``lsprotocol``'s classes and unveil's own)."""
CLI_MODULES = ("dataclasses",)
"""Modules fronted for the command line (which never imports ``attrs``)."""
MODULES = SERVER_MODULES
"""The default of :func:`install`. A module that defines a ``compile`` or ``exec`` of its own
is not fronted."""
_EXEC_MODULES = frozenset({"dataclasses"})
"""Modules that generate code with ``exec(source)``; the others call ``compile``."""
MAX_ENTRIES = 8192
"""Most code objects the table keeps (``lsprotocol`` and the server need about 800)."""
MAX_SOURCE = 50_000
"""Longest source (code points) the table keeps."""
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag
"""The ``compiler_flag`` bits of every ``__future__`` feature (what ``compile`` inherits)."""

stats = {"loaded": 0, "compiled": 0, "stored": 0}
"""Counts for this process (tests and the benchmark read them)."""

_table: dict[tuple[str, str, int], CodeType] = {}
_key: str | None = None
_dirty = False
_installed: list[str] = []
_modules: tuple[str, ...] = ()
_lock = threading.Lock()
_builtin_compile = builtins.compile
_builtin_exec = builtins.exec


def table_key(modules: tuple[str, ...] | None = None) -> str:
    """The cache key of this interpreter's table for ``modules`` (default: those
    :func:`install` fronted, else :data:`MODULES`): the unveil version, the Python version and
    bytecode tag, and the path, size and modification time of each module's file (an upgrade of
    ``attrs`` or ``cattrs`` is a new table; ``importlib.metadata`` would cost more than the
    table saves)."""
    import os

    from unveil.core import cache

    parts: list[bytes | str] = [cache.version_tag(), sys.version, sys.implementation.cache_tag or "", "flags"]
    for name in modules or _modules or MODULES:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None) or ""
        try:
            st = os.stat(origin)
            parts += [origin, f"{st.st_size}:{st.st_mtime_ns}"]
        except OSError:
            parts += [name, ""]
    return "methods-" + cache.digest(parts)[:32]


def _read_table(key: str) -> dict[tuple[str, str, int], CodeType]:
    """The table from the cache; an empty dict for anything unusable."""
    from unveil.core import cache

    got = cache.load_marshal(NAMESPACE, key)
    if not isinstance(got, dict):
        return {}
    return {
        k: v
        for k, v in got.items()
        if isinstance(k, tuple)
        and len(k) == 3
        and isinstance(k[0], str)
        and isinstance(k[1], str)
        and isinstance(k[2], int)
        and isinstance(v, CodeType)
        and v.co_filename == k[1]
    }


def _code(source: str, filename: str, flags: int) -> CodeType:
    """The code of ``source`` compiled in ``"exec"`` mode with the ``__future__`` ``flags`` (and
    no others): from the table, else compiled and added."""
    global _dirty
    key = (source, filename, flags)
    code = _table.get(key)
    if code is not None:
        stats["loaded"] += 1
        return code
    code = _builtin_compile(source, filename, "exec", flags, True)
    stats["compiled"] += 1
    if len(source) <= MAX_SOURCE and len(_table) < MAX_ENTRIES:
        with _lock:
            _table[key] = code
            _dirty = True
        stats["stored"] += 1
    return code


def _front(
    source: Any, filename: Any, mode: Any, flags: int = 0, dont_inherit: bool = False, optimize: int = -1, **kwargs: Any
) -> Any:
    """``compile`` for the fronted modules: see the module docstring."""
    inherited = 0 if dont_inherit else sys._getframe(1).f_code.co_flags & _FUTURE_FLAGS
    if (
        flags == 0
        and optimize == -1
        and not kwargs
        and mode == "exec"
        and type(source) is str
        and type(filename) is str
    ):
        return _code(source, filename, inherited)
    return _builtin_compile(source, filename, mode, flags | inherited, True, optimize, **kwargs)


def _exec_front(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> Any:  # noqa: A002
    """``exec`` for the fronted modules: see the module docstring. Without ``globals``, the
    caller's globals and locals, as the built-in takes them."""
    frame = sys._getframe(1)
    if globals is None:
        globals = frame.f_globals
        if locals is None:
            locals = frame.f_locals
    if type(source) is str and not kwargs:
        source = _code(source, "<string>", frame.f_code.co_flags & _FUTURE_FLAGS)
    elif type(source) is str:
        source = _builtin_compile(source, "<string>", "exec", frame.f_code.co_flags & _FUTURE_FLAGS, True)
    return _builtin_exec(source, globals, locals, **kwargs)


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


def install(modules: tuple[str, ...] = MODULES) -> list[str]:
    """Front ``compile`` (or ``exec``, :data:`_EXEC_MODULES`) in ``modules`` (imported here:
    before the classes are defined). Returns the modules fronted; none when the cache is off,
    and a module that cannot be imported or defines its own ``compile``/``exec`` is skipped. A
    second call fronts none (the table's key depends on the modules). Never raises."""
    global _key, _modules
    from unveil.core import cache

    if _installed or not cache.enabled():
        return list(_installed)
    _modules = tuple(modules)
    try:
        _key = table_key(_modules)
        _table.update(_read_table(_key))
    except Exception:  # noqa: BLE001 - no table: every compile goes to the built-in
        _key = None
    for name in _modules:
        try:
            mod = importlib.import_module(name)
        except Exception:  # noqa: BLE001
            continue
        attr_name, front = ("exec", _exec_front) if name in _EXEC_MODULES else ("compile", _front)
        if attr_name in mod.__dict__:
            continue  # its own, not the built-in: left alone
        mod.__dict__[attr_name] = front
        _installed.append(name)
    if _installed:
        atexit.register(save)
    return list(_installed)


def uninstall() -> None:
    """Give the modules back the built-in ``compile``/``exec`` and forget the table (tests)."""
    global _key, _dirty, _modules
    for name in _installed:
        mod = sys.modules.get(name)
        if mod is None:
            continue
        for attr_name, front in (("compile", _front), ("exec", _exec_front)):
            if mod.__dict__.get(attr_name) is front:
                del mod.__dict__[attr_name]
    _installed.clear()
    _table.clear()
    _key, _dirty, _modules = None, False, ()
    try:
        atexit.unregister(save)
    except Exception:  # noqa: BLE001
        pass
