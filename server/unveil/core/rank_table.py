"""A BPE rank table that answers lookups without building a ``dict`` of every rank.

Reading ``o200k_base``'s 199,998 ranks into a ``dict`` costs about 45 ms in a new process (the
``marshal`` load allocates and hashes every key), although a subset encoding of one small file
(:func:`unveil.core.tokens.subset_ranks`) looks up only a few thousand byte strings. A
:class:`RankTable` keeps the ranks as four flat arrays and looks a byte string up by its
CRC-32 bucket, so loading it makes no object per rank (the arrays are views of the stored
bytes) and each lookup is a handful of index operations (about 1 µs).

Layout (:meth:`RankTable.build`, :meth:`RankTable.to_bytes`): the records (token bytes, rank)
sorted by bucket (``zlib.crc32(token) & mask``); ``first[b] .. first[b + 1]`` are bucket
``b``'s record indexes; record ``i``'s token is ``blob[start[i] : start[i + 1]]`` and its rank
``rank[i]``. The arrays are C ``unsigned int`` in this machine's byte order (``array('I')``
when built, views of the stored bytes when read back); the serialised form names its order and
item size, and :meth:`RankTable.from_bytes` refuses another.
"""

from __future__ import annotations

import struct
import sys
import zlib
from array import array
from typing import Iterable, Mapping, Union

_HEADER = struct.Struct("<8sBBIII")
_MAGIC = b"UVRANKS1"
_ORDER = 0 if sys.byteorder == "little" else 1
_ITEM = array("I").itemsize
_Ints = Union[array, memoryview]
"""An array of C ``unsigned int``: built, or a view of stored bytes."""


class RankTable:
    """Read-only ``bytes → rank`` lookups (:meth:`get`, ``in``, :func:`len`).

    Built from a mapping with :meth:`build`; stored and read back with :meth:`to_bytes` and
    :meth:`from_bytes`."""

    __slots__ = ("first", "start", "rank", "blob", "mask")

    def __init__(self, first: _Ints, start: _Ints, rank: _Ints, blob: bytes, mask: int) -> None:
        self.first, self.start, self.rank, self.blob, self.mask = first, start, rank, blob, mask

    @classmethod
    def build(cls, ranks: Mapping[bytes, int] | Iterable[tuple[bytes, int]], bucket_bits: int = 18) -> RankTable:
        """The table of ``ranks`` (a mapping or ``(token, rank)`` pairs; ranks below 2**32) with
        ``2**bucket_bits`` buckets."""
        items = ranks.items() if isinstance(ranks, Mapping) else ranks
        mask = (1 << bucket_bits) - 1
        crc = zlib.crc32
        rows = sorted((crc(t) & mask, t, r) for t, r in items)
        first = array("I", [0]) * (mask + 2)
        start = array("I", [0])
        rank = array("I")
        parts = []
        pos = 0
        for b, t, r in rows:
            first[b + 1] += 1
            pos += len(t)
            start.append(pos)
            rank.append(r)
            parts.append(t)
        for b in range(1, mask + 2):
            first[b] += first[b - 1]
        return cls(first, start, rank, b"".join(parts), mask)

    def get(self, token: bytes, default: int | None = None) -> int | None:
        """The rank of ``token``, else ``default``."""
        b = zlib.crc32(token) & self.mask
        first, start, blob = self.first, self.start, self.blob
        for i in range(first[b], first[b + 1]):
            if blob[start[i] : start[i + 1]] == token:
                return self.rank[i]
        return default

    def __contains__(self, token: object) -> bool:
        return isinstance(token, bytes) and self.get(token) is not None

    def __len__(self) -> int:
        return len(self.rank)

    def items(self) -> Iterable[tuple[bytes, int]]:
        """Every ``(token, rank)``, in table order."""
        start, blob = self.start, self.blob
        for i, r in enumerate(self.rank):
            yield blob[start[i] : start[i + 1]], r

    def to_bytes(self) -> bytes:
        """The table serialised: :data:`_HEADER` (magic, this machine's byte order and item
        size, mask, record count, token bytes), then the ``first``, ``start`` and ``rank``
        arrays and the token bytes."""
        head = _HEADER.pack(_MAGIC, _ORDER, _ITEM, self.mask, len(self.rank), len(self.blob))
        return b"".join((head, self.first.tobytes(), self.start.tobytes(), self.rank.tobytes(), self.blob))

    @classmethod
    def from_bytes(cls, data: bytes) -> RankTable | None:
        """The table :meth:`to_bytes` wrote, or ``None`` when ``data`` is not one written on a
        machine of this byte order and item size, or its parts do not fit together. The arrays
        are views of ``data`` (no copy). The contents are not checked (the cache's SHA-256 of
        the entry is what guards them)."""
        if len(data) < _HEADER.size:
            return None
        magic, order, item, mask, n, blob_len = _HEADER.unpack_from(data)
        if magic != _MAGIC or order != _ORDER or item != _ITEM or (mask + 1) & mask:
            return None
        sizes = (_ITEM * (mask + 2), _ITEM * (n + 1), _ITEM * n)
        if len(data) != _HEADER.size + sum(sizes) + blob_len:
            return None
        view = memoryview(data)
        at = _HEADER.size
        arrays = []
        for size in sizes:
            arrays.append(view[at : at + size].cast("I"))
            at += size
        first, start, rank = arrays
        if first[0] != 0 or first[-1] != n or start[0] != 0 or start[-1] != blob_len:
            return None
        return cls(first, start, rank, bytes(view[at:]), mask)
