"""The one reader for every file unveil opens on the user's behalf: scanned files, imported
files, watched files, project configuration, rule files and price tables.

A scanned repository is hostile: ``.unveil.toml -> /dev/zero`` would otherwise be read until
memory runs out, and a named pipe (FIFO) blocks ``open()`` forever. So every read:

1. ``os.stat`` the path (following symlinks) and refuses anything that is not a regular file
   without opening it (FIFOs, sockets, character and block devices, folders);
2. opens it with ``O_NONBLOCK`` (a FIFO swapped in after the check cannot block the open) and
   checks ``os.fstat`` of the opened descriptor again, so the check and the read see the same file;
3. for configuration, rule and price files, refuses more than ``max_bytes`` (default
   :data:`MAX_CONFIG_BYTES`, 1 MiB) — also when the file grows while being read, or reports size
   0 like files under ``/proc``. Scanned files have no cap: they are read in full.

Refusals raise :class:`RefusedRead`, an ``OSError`` whose message names the file and the reason,
so callers that already handle ``OSError`` report it as they report an unreadable file.

Pure: no LSP, no CLI imports.
"""

from __future__ import annotations

import os
import stat
from typing import Sequence

MAX_CONFIG_BYTES = 1024 * 1024
"""Largest configuration, rule or price file read (bytes)."""

_CHUNK = 1 << 20


class RefusedRead(OSError):
    """A file unveil will not read: not a regular file, or larger than the bound. ``str()`` is one
    line naming the path and the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.filename = path
        self.strerror = reason
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
"""How a file is opened for reading: never blocking on a FIFO, never becoming the controlling
terminal, not inherited by child processes, no text translation (Windows)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def _refuse_mode(path: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _kind(mode)
        what = kind if kind.startswith("not ") else f"{kind}, not a regular file"
        raise RefusedRead(path, f"refused to read: {what}")


def read_bytes(path: str | os.PathLike, max_bytes: int | None = None, *, checked: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed). ``max_bytes=None``: no
    size cap. Raises :class:`RefusedRead` (not a regular file; more than ``max_bytes``) or the
    ``OSError`` of ``stat``/``open``/``read``.

    The file is ``stat``-ed before it is opened (opening a device can act on it) and again,
    through the open descriptor, after: ``checked=True`` (the caller has just seen a regular
    file there: a folder listing, a ``stat``) leaves out the first. The first ``read`` asks for
    one byte more than the size ``fstat`` gave: when exactly that size comes back, the file has
    been read whole in one call (a file whose size says nothing, as in ``/proc``, is read to
    an empty read)."""
    p = os.fspath(path)
    if not checked:
        _refuse_mode(p, os.stat(p).st_mode)
    fd = os.open(p, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        _refuse_mode(p, st.st_mode)
        size = st.st_size
        if max_bytes is not None and size > max_bytes:
            raise RefusedRead(p, f"refused to read: {size:,} bytes is more than the {max_bytes:,}-byte limit")
        parts: list[bytes] = []
        total = 0
        want = size + 1 if 0 < size < _CHUNK else _CHUNK
        while True:
            if max_bytes is not None:
                want = min(want, max_bytes + 1 - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise RefusedRead(p, f"refused to read: more than the {max_bytes:,}-byte limit")
            if total == size and len(parts) == 1 and len(chunk) < want:
                break  # the whole file, as its size said, and nothing after it
            want = _CHUNK
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def will_need(paths: Sequence[str]) -> int:
    """Ask the kernel to start reading each of ``paths`` into the page cache, without waiting
    for it (``posix_fadvise(POSIX_FADV_WILLNEED)``, POSIX.1-2001; Linux reads ahead
    asynchronously): reading them one by one afterwards then seldom waits on the disk. Returns
    how many were advised. Only regular files are advised (each is opened with ``O_NONBLOCK``
    and checked with ``fstat``, as :func:`read_bytes` does); a path that cannot be opened is
    skipped, and nothing is read. For paths the caller has seen as regular files (a folder
    listing; the result cache's own entries); a no-op where ``posix_fadvise`` is missing."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:
        return 0
    done = 0
    for p in paths:
        try:
            fd = os.open(p, _OPEN_FLAGS)
        except (OSError, ValueError):
            continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                advise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
                done += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return done


def decode(data: bytes) -> str:
    """Strict UTF-8, or UTF-8 with ``surrogateescape`` when ``data`` holds invalid bytes (each bad
    byte becomes one code point U+DC80..U+DCFF; nothing is lost)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def read_text(path: str | os.PathLike, max_bytes: int | None = None) -> str:
    """:func:`read_bytes` decoded with :func:`decode` (scanned and imported files)."""
    return decode(read_bytes(path, max_bytes))


def read_config_text(path: str | os.PathLike, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """A configuration, rule or price file as strict UTF-8, at most ``max_bytes`` bytes. Raises
    :class:`RefusedRead`, ``OSError`` or ``UnicodeDecodeError``."""
    return read_bytes(path, max_bytes).decode("utf-8")
