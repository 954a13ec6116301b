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


def read_bytes(path: str | os.PathLike, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed). ``max_bytes=None``: no
    size cap. Raises :class:`RefusedRead` (not a regular file; more than ``max_bytes``) or the
    ``OSError`` of ``stat``/``open``/``read``."""
    p = os.fspath(path)
    _refuse_mode(p, os.stat(p).st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(p, flags)
    try:
        st = os.fstat(fd)
        _refuse_mode(p, st.st_mode)
        if max_bytes is not None and st.st_size > max_bytes:
            raise RefusedRead(p, f"refused to read: {st.st_size:,} bytes is more than the {max_bytes:,}-byte limit")
        parts: list[bytes] = []
        total = 0
        while True:
            want = _CHUNK if max_bytes is None else min(_CHUNK, max_bytes + 1 - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise RefusedRead(p, f"refused to read: more than the {max_bytes:,}-byte limit")
        return b"".join(parts)
    finally:
        os.close(fd)


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
