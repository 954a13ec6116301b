"""Compiled ``regex`` patterns kept between processes (start-up time, issue 10).

The ``regex`` module parses and compiles a pattern in Python: about 1 ms of CPU per pattern, and
one ``unveil check`` compiles several hundred (the checks' module-level patterns and the pattern
rules of ``rules/*.toml``), 0.5–0.9 s per process. A compiled ``regex.Pattern`` pickles as its
compiled code (``regex`` registers a ``copyreg`` reducer that calls its C constructor
``regex._regex.compile`` with that code), so loading one back costs about 30 µs and parses
nothing.

:func:`install` (called by the entry points before they import the analysis modules:
``unveil serve`` at start, ``unveil check`` once it has a file to analyse, so that a run the
result cache answers whole never imports ``regex``; idempotent) puts a front on ``regex``'s
compile function
(``regex._main._compile``, which ``regex.compile``, ``regex.search`` and the other module
functions all call):

* a pattern found in the table is loaded from its pickle (once per process, then kept);
* any other pattern is compiled by ``regex`` as before; when the compiling code runs at module
  level (an import: its patterns are fixed in the source) or inside :func:`recording` (the rule
  loader), its pickle is added to the table, which is written back at exit
  (:data:`MAX_ENTRIES` entries at most, patterns of at most :data:`MAX_PATTERN` code points).
  Patterns built at run time from anything else, e.g. a scanned file, are never stored.

The table is one entry of :mod:`unveil.core.cache` (``regex/<key>``; key: the unveil version,
the Python version and the ``regex`` version, since a pickle is valid only for the ``regex``
build that wrote it): the ``marshal`` of ``{"regex": {(pattern, flags): pickle bytes}, "re": {(pattern, flags): _sre.compile
arguments}}``, under the cache's
own SHA-256 check. A file that is missing, truncated, altered or of another layout is ignored (and rewritten at exit); an entry that fails to load, or loads to
a pattern with other source or flags, is dropped and compiled afresh. Unpickling admits only
``regex._regex.compile``, so an entry can build a pattern and nothing else.

The standard library's ``re`` gets the same treatment (its parser and code generator are Python
too; ``commands`` loads about 250 path patterns on first use): its compile function
(``re._compile``) is fronted the same way, and the arguments ``re`` passes to its C constructor
(``_sre.compile``: the pattern, flags, code, group count and group names, captured by a
forwarding stand-in for the ``_sre`` module inside ``re``'s compiler) are what the table keeps;
loading an entry calls ``_sre.compile`` with them, which validates the code. Where either
library's layout differs from the one described here, that library is left alone.

What a pattern matches never changes: a table entry is the code ``regex`` itself produced for
that (pattern, flags) pair, loaded the way ``pickle.loads`` loads it. Bytes patterns, patterns
with named lists (keyword arguments) and the ``LOCALE`` and ``DEBUG`` flags go straight to
``regex``. ``UNVEIL_NO_CACHE`` (``--no-cache``) leaves ``regex`` untouched.
"""

from __future__ import annotations

import atexit
import io
import pickle
import sys
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator

NAMESPACE = "regex"
MAX_ENTRIES = 4096
"""Most patterns the table keeps (the bundled code and rules need about 1,000)."""
MAX_PATTERN = 20_000
"""Longest pattern source (code points) the table keeps."""

_lock = threading.Lock()
_local = threading.local()
_installed = False
_table: dict[tuple[str, int], bytes] = {}
_live: dict[tuple[str, int], Any] = {}
_re_table: dict[tuple[str, int], tuple] = {}
_re_live: dict[tuple[str, int], Any] = {}
_re_original: Any = None
_re_compiler: Any = None  # the module whose global ``_sre`` builds patterns (re._compiler, sre_compile)
_sre_real: Any = None
_dirty = False
_key: str | None = None
_original: Any = None
stats = {"loaded": 0, "compiled": 0, "stored": 0, "dropped": 0}
"""Counters for this process: patterns loaded from the table, compiled by ``regex``, added to the
table, and table entries dropped as unusable."""


class _PatternOnly(pickle.Unpickler):
    """Unpickles a ``regex`` pattern and nothing else."""

    def find_class(self, module: str, name: str):
        if module == "regex._regex" and name == "compile":
            from regex import _regex

            return _regex.compile
        raise pickle.UnpicklingError(f"not a regex pattern: {module}.{name}")


def _load_pattern(blob: bytes):
    return _PatternOnly(io.BytesIO(blob)).load()


def table_key() -> str:
    """The cache key of this interpreter's table (unveil, Python and ``regex`` versions)."""
    import regex

    from unveil.core import cache

    return "patterns-" + cache.digest([cache.version_tag(), sys.version, str(regex.__version__)])[:32]


def _read_table(key: str) -> tuple[dict[tuple[str, int], bytes], dict[tuple[str, int], tuple]]:
    """``(regex table, re table)`` from the cache; empty dicts for anything unusable."""
    from unveil.core import cache

    got = cache.load_marshal(NAMESPACE, key)
    if not isinstance(got, dict):
        return {}, {}

    def entries(table, kind) -> dict:
        if not isinstance(table, dict):
            return {}
        return {
            k: v
            for k, v in table.items()
            if isinstance(k, tuple)
            and len(k) == 2
            and isinstance(k[0], str)
            and isinstance(k[1], int)
            and isinstance(v, kind)
        }

    return entries(got.get("regex"), bytes), entries(got.get("re"), tuple)


def save() -> bool:
    """Write the table back if this process added or dropped entries (registered with
    ``atexit`` by :func:`install`). Returns whether a file was written."""
    global _dirty
    from unveil.core import cache

    if not _dirty or _key is None or not cache.enabled():
        return False
    with _lock:
        table = {"regex": dict(_table), "re": dict(_re_table)}
        _dirty = False
    return cache.store_marshal(NAMESPACE, _key, table)


@contextmanager
def recording() -> Iterator[None]:
    """Within this block (in this thread), every pattern ``regex`` compiles is added to the
    table (the rule loader: patterns that come from rule files)."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def records(fn):
    """Decorator: ``fn`` runs inside :func:`recording` (a loader that compiles patterns from
    bundled data on first use, e.g. the command checks' path catalogues)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with recording():
            return fn(*args, **kwargs)

    return wrapper


def _keep() -> bool:
    """Whether the pattern being compiled comes from module-level code or :func:`recording`."""
    if getattr(_local, "depth", 0):
        return True
    # frame 0: _front; 1: regex's module function (compile, search …); 2: its caller
    f: FrameType | None = sys._getframe(2)
    for _ in range(3):
        if f is None:
            return False
        if f.f_code.co_name == "<module>":
            return True
        f = f.f_back
    return False


def _front(pattern, flags=0, ignore_unused=False, kwargs=None, cache_it=True):
    global _dirty
    original = _original
    assert original is not None
    if kwargs or type(pattern) is not str:
        return original(pattern, flags, ignore_unused, kwargs, cache_it)
    try:
        iflags = int(flags)
    except (TypeError, ValueError):
        return original(pattern, flags, ignore_unused, kwargs, cache_it)
    if iflags & _PASS_FLAGS:
        return original(pattern, flags, ignore_unused, kwargs, cache_it)
    key = (pattern, iflags)
    got = _live.get(key)
    if got is not None:
        return got
    blob = _table.get(key)
    if blob is not None:
        try:
            got = _load_pattern(blob)
        except Exception:  # noqa: BLE001 - an unusable entry is compiled afresh
            got = None
        if got is not None and getattr(got, "pattern", None) == pattern and _flags_ok(got, iflags):
            stats["loaded"] += 1
            _live[key] = got
            return got
        with _lock:
            _table.pop(key, None)
            _dirty = True
        stats["dropped"] += 1
    compiled = original(pattern, flags, ignore_unused, kwargs, cache_it)
    stats["compiled"] += 1
    if len(pattern) <= MAX_PATTERN and len(_table) < MAX_ENTRIES and _keep():
        try:
            blob = pickle.dumps(compiled, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - not storable: still compiled
            return compiled
        with _lock:
            _table[key] = blob
            _dirty = True
        _live[key] = compiled
        stats["stored"] += 1
    return compiled


class _SreStandIn:
    """Stands in for the ``_sre`` module inside ``re``'s compiler: forwards everything and notes,
    per thread, the arguments of the last ``compile`` call."""

    def __init__(self, real) -> None:
        self._real = real

    def __getattr__(self, name: str):
        return getattr(self._real, name)

    def compile(self, *args):
        _local.sre_args = args
        return self._real.compile(*args)


def _re_front(pattern, flags):
    global _dirty
    original = _re_original
    assert original is not None
    if type(pattern) is not str:
        return original(pattern, flags)
    try:
        iflags = int(flags)
    except (TypeError, ValueError):
        return original(pattern, flags)
    if iflags & _RE_PASS_FLAGS:
        return original(pattern, flags)
    key = (pattern, iflags)
    got = _re_live.get(key)
    if got is not None:
        return got
    args = _re_table.get(key)
    if args is not None:
        try:
            got = _sre_real.compile(*args)
        except Exception:  # noqa: BLE001 - an unusable entry is compiled afresh
            got = None
        if got is not None and got.pattern == pattern and (got.flags & iflags) == iflags:
            stats["loaded"] += 1
            _re_live[key] = got
            return got
        with _lock:
            _re_table.pop(key, None)
            _dirty = True
        stats["dropped"] += 1
    _local.sre_args = None
    compiled = original(pattern, flags)
    args = getattr(_local, "sre_args", None)
    _local.sre_args = None
    if args is None or not args or args[0] != pattern:
        return compiled  # found in re's own cache: nothing was compiled
    stats["compiled"] += 1
    if len(pattern) <= MAX_PATTERN and len(_re_table) < MAX_ENTRIES and _keep():
        try:
            import marshal

            plain = _plain(tuple(args))
            marshal.dumps(plain)
        except (ValueError, TypeError):
            return compiled
        with _lock:
            _re_table[key] = plain
            _dirty = True
        _re_live[key] = compiled
        stats["stored"] += 1
    return compiled


_RE_PASS_FLAGS = 0


def _plain(value):
    """``value`` with every ``int`` subclass (``re``'s named opcodes) made a plain ``int``, so
    ``marshal`` can store it; raises ``TypeError`` for anything but str, bytes, int, None and
    lists, tuples and dicts of them."""
    if value is None or type(value) in (str, bytes, int, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    raise TypeError(f"not storable: {type(value).__name__}")


def _install_re() -> None:
    """Front the standard library's ``re`` (see the module docstring) when its layout is the
    known one: ``re._compile(pattern, flags)`` and a compiler module with a global ``_sre``."""
    global _re_original, _re_compiler, _sre_real, _RE_PASS_FLAGS
    import re

    compiler: Any = getattr(re, "_compiler", None) or sys.modules.get("sre_compile")
    original = getattr(re, "_compile", None)
    real = getattr(compiler, "_sre", None)
    if compiler is None or not callable(original) or real is None or not callable(getattr(real, "compile", None)):
        return
    _RE_PASS_FLAGS = int(re.LOCALE) | int(re.DEBUG)
    _re_original, _re_compiler, _sre_real = original, compiler, real
    compiler._sre = _SreStandIn(real)
    re._compile = _re_front  # type: ignore[attr-defined]


def _flags_ok(pattern, iflags: int) -> bool:
    """A loaded pattern's flags include every flag it was asked for (``regex`` adds the
    encoding and version flags it chose)."""
    return (int(pattern.flags) & iflags) == iflags


_PASS_FLAGS = 0


def install() -> bool:
    """Front ``regex``'s compile function with the table (see the module docstring); loads the
    table. Idempotent. Returns whether the front is in place (``False`` when the cache is off or
    this ``regex`` has no ``_main._compile``)."""
    global _installed, _original, _key, _table, _PASS_FLAGS
    from unveil.core import cache

    if _installed:
        return True
    if not cache.enabled():
        return False
    try:
        import regex
        from regex import _main
    except ImportError:  # pragma: no cover - regex is a dependency
        return False
    original = getattr(_main, "_compile", None)
    if not callable(original):
        return False
    with _lock:
        if installed():  # another thread got here first
            return True
        _PASS_FLAGS = int(regex.LOCALE) | int(regex.DEBUG)
        try:
            _key = table_key()
            _table, re_table = _read_table(_key)
        except Exception:  # noqa: BLE001 - no table rather than no scan
            _key, _table, re_table = None, {}, {}
        _original = original
        _main._compile = _front
        _re_table.clear()
        _re_table.update(re_table)
        _install_re()
        _installed = True
    atexit.register(save)
    return True


def uninstall() -> None:
    """Put ``regex``'s own compile function back (tests) and forget the loaded table."""
    global _installed, _original, _table, _dirty, _key, _re_original, _re_compiler, _sre_real
    with _lock:
        if not _installed:
            return
        from regex import _main

        if _main._compile is _front:
            _main._compile = _original
        import re

        if _re_original is not None and getattr(re, "_compile", None) is _re_front:
            re._compile = _re_original  # type: ignore[attr-defined]
        if _re_compiler is not None and isinstance(getattr(_re_compiler, "_sre", None), _SreStandIn):
            _re_compiler._sre = _sre_real
        _installed, _original, _key, _dirty = False, None, None, False
        _re_original = _re_compiler = _sre_real = None
        _table = {}
        _live.clear()
        _re_table.clear()
        _re_live.clear()
    try:
        atexit.unregister(save)
    except Exception:  # noqa: BLE001
        pass


def installed() -> bool:
    return _installed
