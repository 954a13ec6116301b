"""Token counting with tiktoken's ``o200k_base``, from the copy of its ranks shipped in the package.

The BPE ranks come from ``unveil/data/o200k_base.tiktoken.gz`` (the gzip of the exact file
tiktoken downloads; provenance in ``unveil/data/README.md``). Nothing is ever downloaded: the
``tiktoken.Encoding`` is built directly from the bundled ranks with tiktoken's ``o200k_base``
pre-tokenization pattern and special tokens (research note agent-formats.md §5.1, §5.3). The
gunzipped bytes must hash to :data:`O200K_SHA256`; a mismatch raises :class:`TokenizerError`.

Most texts are counted without tiktoken's encoding: the rank-table counter
(:class:`unveil.core.bpe.TableCounter`) gives the same counts from a
:class:`~unveil.core.rank_table.RankTable` kept in the user cache (read in a few milliseconds;
3.9 MB, where tiktoken's ``CoreBPE`` holds 54 MiB), for every text whose code points Unicode
14.0 assigns (:func:`unveil.core.bpe.covered`). Any other text is counted by tiktoken: with an
encoding of the ranks that can occur in it (:func:`subset_ranks`) in a process that
:func:`prepare`-d, until :data:`SUBSET_BUDGET` code points of such text are spent, else with
the full encoding, built on first use (about a quarter of a second of CPU). The subset counts
are the same: BPE only ever looks up the ranks of byte strings inside one pre-token, and a
pre-token lies inside one segment of :func:`segments`, so every rank it can look up is one of
that subset.

* :func:`preload` starts making counting available (the counter) in a background thread and
  returns at once (idempotent);
* :func:`ready` says whether counting works without waiting; :func:`wait` waits for it;
* :func:`count` counts tokens (``wait=False`` returns ``None`` while still loading);
* :func:`encoding` returns tiktoken's full encoding (built on first use);
* :func:`prepare` (what :func:`unveil.core.analyze.analyze` calls before counting) makes counts
  available at once, in the calling thread, when no load was started.

The parsed ranks (about 200,000 ``bytes → int`` pairs) are kept in the user cache directory
(:mod:`unveil.core.cache`, entry ``tokenizer/o200k-<SHA-256 prefix>``, ``marshal``) so later
processes skip the base64 parsing, and so is the rank table (entry
``tokenizer/o200k-<prefix>-table16``, with the longer tokens' ranks beside it); an entry is
used only when it has exactly :data:`O200K_RANKS` ranks (:data:`O200K_LONG` long ones) and
gives a few tokens the bundled file's ranks (:data:`_PROBE`), else it is rebuilt from the
bundled file.

All functions are thread-safe. Counting uses ``encode_ordinary``: text that quotes special
tokens such as ``<|endoftext|>`` is counted as ordinary text instead of raising.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import logging
import re
import threading
import time
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Mapping, overload

from unveil.core import bpe
from unveil.core.bpe import O200K_PAT

if TYPE_CHECKING:
    import regex
    import tiktoken

    from unveil.core.rank_table import RankTable

log = logging.getLogger(__name__)

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""SHA-256 of the plain ``o200k_base.tiktoken`` file (tiktoken 0.14.0 ``expected_hash``)."""

DATA_FILE = "o200k_base.tiktoken.gz"
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
"""``unveil/data``: bundled data files (in the wheel and in an editable install alike)."""

O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
O200K_RANKS = 199_998
"""Number of mergeable ranks in ``o200k_base.tiktoken``."""
_PROBE = {b"hello": 24912, b" world": 2375, b"!": 0, b"\xff": 187, b" the": 290, b"ing": 289}
"""Ranks of a few tokens in ``o200k_base.tiktoken`` (checked against the bundled file by a test)."""


class TokenizerError(RuntimeError):
    """The bundled BPE file is missing, corrupt or fails its SHA-256 check."""


_lock = threading.Lock()
_done = threading.Event()
_thread: threading.Thread | None = None
_encoding: tiktoken.Encoding | None = None
_error: BaseException | None = None
load_seconds: float | None = None
"""Wall-clock seconds the last load took (``None`` until loaded)."""


def _read_ranks(raw: bytes) -> dict[bytes, int]:
    digest = hashlib.sha256(raw).hexdigest()
    if digest != O200K_SHA256:
        raise TokenizerError(
            f"bundled {DATA_FILE} is corrupt: SHA-256 of its content is {digest}, expected {O200K_SHA256}; "
            "reinstall unveil"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def build_encoding(gz_bytes: bytes) -> tiktoken.Encoding:
    """Build the ``o200k_base`` encoding from the gzip-compressed ``.tiktoken`` bytes.

    Raises :class:`TokenizerError` if the data does not decompress or its SHA-256 differs.
    """
    return _encoding_of(_ranks_of(gz_bytes))


def _ranks_of(gz_bytes: bytes) -> dict[bytes, int]:
    try:
        raw = gzip.decompress(gz_bytes)
    except (OSError, EOFError, ValueError) as exc:
        raise TokenizerError(f"bundled {DATA_FILE} cannot be decompressed: {exc}; reinstall unveil") from exc
    return _read_ranks(raw)


def _encoding_of(ranks: dict[bytes, int]) -> tiktoken.Encoding:
    import tiktoken  # here: a run whose reports all come from the cache never counts a token

    return tiktoken.Encoding(name="o200k_base", pat_str=O200K_PAT, mergeable_ranks=ranks, special_tokens=O200K_SPECIAL)


SUBSET_MAX_BYTES = 16
"""Byte strings up to this long are looked up per text for a subset encoding; the 3,987 ranks
of longer tokens are always in it (:data:`O200K_LONG`)."""
O200K_LONG = 3_987
"""Number of ``o200k_base`` tokens longer than :data:`SUBSET_MAX_BYTES` bytes."""
SUBSET_BUDGET = 64_000
"""Code points of distinct text :func:`count` may enumerate for subset encodings before it
builds the full encoding instead (enumerating costs about 1.5 µs per code point, the full
encoding about 0.2 s)."""


@lru_cache(maxsize=1)
def _segment_pattern() -> regex.Pattern[str]:
    """The cut :func:`segments` makes, compiled on first use (importing ``regex`` and
    ``tiktoken`` is about 30 ms that a run answered from the result cache does not spend)."""
    import regex

    return regex.compile(r"(?<=[\p{L}\p{M}\p{N}\p{P}\p{S}])(?=[ \t])")


def segments(text: str) -> list[str]:
    """``text`` cut before every space or tab that follows a letter, mark, number, punctuation
    or symbol character.

    No ``o200k_base`` pre-token spans such a cut: after a character that is not whitespace, the
    pattern's alternatives continue only with letters and marks (words and their ``'s``
    suffixes), punctuation and symbols, or ``[\\r\\n/]``; a space or tab only ever starts a
    pre-token or continues a run of whitespace. (The cut needs no Unicode ``White_Space`` table:
    no character of those general categories is whitespace in any Unicode version.)"""
    return _segment_pattern().split(text)


def subset_ranks(text: str, ranks: Mapping[bytes, int] | RankTable, long: dict[bytes, int]) -> dict[bytes, int]:
    """The ranks an ``o200k_base`` encoding of ``text`` can look up: every token of at most
    :data:`SUBSET_MAX_BYTES` UTF-8 bytes found inside one of :func:`segments` (``text`` must
    encode as UTF-8: :func:`_clean` it first), plus ``long`` (the longer tokens)."""
    found: set[bytes] = set()
    k_max = SUBSET_MAX_BYTES
    for seg in set(segments(text)):
        b = seg.encode("utf-8")
        n = len(b)
        for k in range(1, min(k_max, n) + 1):
            found.update(b[i : i + k] for i in range(n - k + 1))
    out = dict(long)
    get = ranks.get
    for piece in found:
        r = get(piece)
        if r is not None:
            out[piece] = r
    return out


def _cached_ranks() -> dict[bytes, int] | None:
    """The ranks from the user cache (:func:`unveil.core.cache.load_marshal`), or ``None``."""
    from unveil.core import cache

    got = cache.load_marshal("tokenizer", f"o200k-{O200K_SHA256[:16]}")
    if isinstance(got, dict) and len(got) == O200K_RANKS:
        return got
    return None


_ranks: dict[bytes, int] | None = None
_long: dict[bytes, int] | None = None
_ranks_lock = threading.Lock()


def _probe_ok(ranks: Mapping[bytes, int] | RankTable) -> bool:
    """Whether ``ranks`` give the ranks the bundled file gives to a few tokens (:data:`_PROBE`):
    a check that an entry is the ``o200k_base`` table, not a guard against damage (the cache's
    SHA-256 of every entry is)."""
    return all(ranks.get(t) == r for t, r in _PROBE.items())


def _get_ranks() -> tuple[dict[bytes, int], dict[bytes, int]]:
    """``(ranks, long)``: every rank, and the ranks of the tokens longer than
    :data:`SUBSET_MAX_BYTES`; read once per process, from the user cache when it holds a sound
    entry, else from the bundled file (and stored). Raises :class:`TokenizerError`."""
    global _ranks, _long
    with _ranks_lock:
        if _ranks is not None and _long is not None:
            return _ranks, _long
        from unveil.core import cache

        ranks = _cached_ranks()
        if ranks is not None and not _probe_ok(ranks):
            ranks = None  # a damaged entry: rebuild from the bundled file
        if ranks is None:
            try:
                data = (DATA_DIR / DATA_FILE).read_bytes()
            except OSError as exc:
                raise TokenizerError(f"bundled {DATA_FILE} not found: {exc}; reinstall unveil") from exc
            ranks = _ranks_of(data)
            cache.store_marshal("tokenizer", f"o200k-{O200K_SHA256[:16]}", ranks)
        long_key = f"o200k-{O200K_SHA256[:16]}-long{SUBSET_MAX_BYTES}"
        keys = cache.load_marshal("tokenizer", long_key)
        if not (
            isinstance(keys, list)
            and len(keys) == O200K_LONG
            and all(isinstance(k, bytes) and len(k) > SUBSET_MAX_BYTES and k in ranks for k in keys)
        ):
            keys = [k for k in ranks if len(k) > SUBSET_MAX_BYTES]
            cache.store_marshal("tokenizer", long_key, keys)
        _ranks, _long = ranks, {k: ranks[k] for k in keys}
        return _ranks, _long


_TABLE_KEY = f"o200k-{O200K_SHA256[:16]}-table{SUBSET_MAX_BYTES}"
_LONG_KEY = f"o200k-{O200K_SHA256[:16]}-long{SUBSET_MAX_BYTES}-ranks"


def _cached_table() -> tuple[RankTable, dict[bytes, int]] | None:
    """``(table, long)`` from the user cache: the ranks of the tokens of at most
    :data:`SUBSET_MAX_BYTES` bytes as a :class:`~unveil.core.rank_table.RankTable` (reading it
    costs a few milliseconds against about 45 ms for the ``dict`` of every rank,
    :func:`_cached_ranks`), and the ranks of the longer tokens; ``None`` when an entry is
    missing, holds other counts than :data:`O200K_RANKS` and :data:`O200K_LONG`, or fails
    :func:`_probe_ok`."""
    from unveil.core import cache
    from unveil.core.rank_table import RankTable

    data = cache.load_bytes("tokenizer", _TABLE_KEY)
    long = cache.load_marshal("tokenizer", _LONG_KEY)
    if data is None or not isinstance(long, dict) or len(long) != O200K_LONG:
        return None
    table = RankTable.from_bytes(data)
    if table is None or len(table) != O200K_RANKS - O200K_LONG:
        return None
    if not all(isinstance(k, bytes) and len(k) > SUBSET_MAX_BYTES and isinstance(v, int) for k, v in long.items()):
        return None
    if not _probe_ok(table):
        return None
    return table, long


def _store_table(ranks: dict[bytes, int], long: dict[bytes, int]) -> RankTable:
    """Store :func:`_cached_table`'s entries, built from the full ranks (about 0.2 s, once);
    returns the table."""
    from unveil.core import cache
    from unveil.core.rank_table import RankTable

    table = RankTable.build((t, r) for t, r in ranks.items() if len(t) <= SUBSET_MAX_BYTES)
    if cache.store_bytes("tokenizer", _TABLE_KEY, table.to_bytes()):
        cache.store_marshal("tokenizer", _LONG_KEY, long)
    return table


def _subset_source() -> tuple[Mapping[bytes, int] | RankTable, dict[bytes, int]]:
    """What the counter and subset encodings look ranks up in, and the long tokens' ranks: the
    ranks already read in this process, else the rank table from the user cache, else the table
    built from the full ranks (:func:`_get_ranks`) and stored for later processes (the ranks'
    ``dict`` is then let go), else (no cache) the full ranks. Raises :class:`TokenizerError`."""
    with _ranks_lock:
        if _ranks is not None and _long is not None:
            return _ranks, _long
    from unveil.core import cache

    if cache.enabled():
        try:
            got = _cached_table()
        except Exception:  # noqa: BLE001 - an unusable table is a miss, never a tokenizer failure
            got = None
        if got is not None:
            return got
    ranks, long = _get_ranks()
    if cache.enabled():
        try:
            table = _store_table(ranks, long)
        except Exception:  # noqa: BLE001 - storing is an optimisation for later processes
            table = None
        if table is not None:  # the table from now on: the dict of every rank goes (23 MiB)
            _drop_ranks(ranks)
            return table, long
    return ranks, long


def _drop_ranks(ranks: dict[bytes, int]) -> None:
    """Forget the ranks read in this process if they are ``ranks`` (:func:`_get_ranks` reads
    them again when the full encoding needs them)."""
    global _ranks, _long
    with _ranks_lock:
        if _ranks is ranks:
            _ranks = _long = None


_counter: bpe.TableCounter | None = None
"""The rank-table counter (:mod:`unveil.core.bpe`) once :func:`_load` made it."""
_counter_source: tuple[Mapping[bytes, int] | RankTable, dict[bytes, int]] | None = None
"""What :data:`_counter` looks ranks up in (subset encodings use it too)."""
_full_lock = threading.Lock()


def _load() -> None:
    """Make counting available (:func:`preload`, :func:`prepare`): the rank-table counter, or,
    where it cannot be made (``regex`` missing, say), tiktoken's full encoding; :data:`_error`
    when neither can (the bundled data unreadable or corrupt)."""
    global _counter, _counter_source, _encoding, _error, load_seconds
    started = time.perf_counter()
    try:
        if _counter is None and _encoding is None:
            source = _subset_source()
            try:
                _counter, _counter_source = bpe.TableCounter(*source, long_piece=_long_piece), source
            except Exception:  # noqa: BLE001 - the full encoding counts instead
                log.exception("rank-table counter unavailable; loading tiktoken's encoding")
                _encoding = _encoding_of(_get_ranks()[0])
        load_seconds = time.perf_counter() - started
    except BaseException as exc:  # noqa: BLE001 - reported to every caller of count()
        _error = exc
    finally:
        _done.set()
    if _encoding is not None:
        _release_ranks(_encoding)  # after _done: ready() stays true throughout


def _release_ranks(enc: tiktoken.Encoding) -> None:
    """Drop the Python copy of the ranks once the full encoding exists: about 200,000 ``bytes``
    keys, 23 MiB of the language server's resident memory (measured), which nothing reads any
    more — tiktoken's ``CoreBPE`` holds its own copy, subset encodings are only built before the
    full one, and a rank-table counter that was reading that ``dict`` (no rank table in the user
    cache) is dropped too (the full encoding counts every text from then on; a counter reading
    the rank table stays). ``tiktoken.Encoding`` keeps a reference to the dict it was built from
    (``_mergeable_ranks``, read only when the encoding is pickled, which unveil never does): it
    is replaced with an empty dict. A later :func:`_get_ranks` reads them again."""
    global _ranks, _long, _subsets, _counter, _counter_source
    with _ranks_lock:
        _ranks = _long = None
    _subsets = None
    if _counter_source is not None and isinstance(_counter_source[0], dict):
        _counter = _counter_source = None
    if isinstance(getattr(enc, "_mergeable_ranks", None), dict):
        enc._mergeable_ranks = {}


def _load_now() -> None:
    """Make counting available in this thread unless a load was started (then wait for it)."""
    global _thread
    with _lock:
        mine = _thread is None
        if mine:
            _thread = threading.current_thread()
    if mine:
        _load()
    else:
        _done.wait()


def preload() -> None:
    """Start making counting available (:func:`_load`) in a daemon thread; returns at once. Safe
    to call repeatedly."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_load, name="unveil-tokenizer", daemon=True)
            _thread.start()


def ready() -> bool:
    """``True`` once counting works without waiting: the counter or the encoding is loaded
    (``False`` while loading or if loading failed)."""
    return _done.is_set() and (_counter is not None or _encoding is not None)


class _Subsets:
    """Subset encodings (see the module docstring): the texts covered so far (cleaned) and one
    encoding of the ranks any of them can look up, rebuilt when a new text adds ranks."""

    def __init__(self, ranks: Mapping[bytes, int] | RankTable, long: dict[bytes, int]) -> None:
        self.ranks, self.long = ranks, long
        self.chosen: dict[bytes, int] = dict(long)
        self.covered: list[str] = []
        self.enumerated = 0
        self.enc: tiktoken.Encoding | None = None
        self.lock = threading.Lock()

    def encoder_for(self, clean: str) -> tiktoken.Encoding | None:
        """An encoding that counts ``clean`` exactly, or ``None`` once :data:`SUBSET_BUDGET` is spent."""
        with self.lock:
            if self.enc is not None and any(clean in c for c in self.covered):
                return self.enc
            if self.enumerated + len(clean) > SUBSET_BUDGET:
                return None
            self.enumerated += len(clean)
            got = subset_ranks(clean, self.ranks, {})
            if self.enc is None or len(got.keys() - self.chosen.keys()):
                self.chosen.update(got)
                self.enc = _encoding_of(self.chosen)
            self.covered.append(clean)
            return self.enc


_subsets: _Subsets | None = None


def prepare(cover: str | None = None) -> bool:
    """Make :func:`count` answer without waiting, for this process: when a load was started
    (:func:`preload`) or has finished, wait for it; else make the counter here (a few
    milliseconds: the rank table from the user cache). Returns whether counting works
    (``False``: loading failed, :func:`error` says why; :func:`count` then raises). Never raises.

    ``cover``: a text whose substrings will be counted (the analysed document). A text the
    counter does not cover (:func:`unveil.core.bpe.covered`) is counted by tiktoken: with subset
    encodings while :data:`SUBSET_BUDGET` lasts, then with the full encoding; when ``cover`` is
    such a text, one subset encoding covering all of it is built now, instead of one more each
    time a piece brings new ranks (15 encodings, about 0.1 s, for a 20 KB skill). Nothing is
    done when it would spend more than half of :data:`SUBSET_BUDGET`."""
    ok = _prepare()
    if ok and cover and _encoding is None and len(cover) <= SUBSET_BUDGET // 2:
        clean = _clean(cover)
        if _counter is None or not bpe.covered(clean):
            subsets = _subsets_now()
            if subsets is not None:
                subsets.encoder_for(clean)
    return ok


def _prepare() -> bool:
    if _thread is None and not _done.is_set():
        _load_now()
    return wait()


def _subsets_now() -> _Subsets | None:
    """The process's subset encodings (made on first use from the counter's rank source), or
    ``None`` when there is no such source (the counter was not made)."""
    global _subsets
    with _lock:
        if _subsets is None and _counter_source is not None and _encoding is None:
            _subsets = _Subsets(*_counter_source)
        return _subsets


def wait() -> bool:
    """Start loading if needed and wait until loading has finished; ``True`` when counting works,
    ``False`` when loading failed (:func:`error` says why). Never raises."""
    preload()
    _done.wait()
    return _counter is not None or _encoding is not None


def error() -> BaseException | None:
    """The exception loading raised, if it failed (after :func:`preload` finished)."""
    return _error if _done.is_set() else None


def encoding() -> tiktoken.Encoding:
    """tiktoken's full ``o200k_base`` encoding, built on first use (about 0.25 s of CPU and
    54 MiB of resident memory; texts the rank-table counter covers never need it).

    Raises :class:`TokenizerError` (or the original error) if the bundled data is unusable.
    """
    global _encoding
    if _encoding is None:
        with _full_lock:
            if _encoding is None:
                wait()
                if _error is not None and _counter is None and _encoding is None:
                    if isinstance(_error, TokenizerError):
                        raise _error
                    raise TokenizerError(f"tokenizer failed to load: {_error!r}") from _error
                if _encoding is None:
                    ranks, _ = _get_ranks()
                    enc = _encoding_of(ranks)
                    _encoding = enc
                    _release_ranks(enc)
    return _encoding


def _clean(text: str) -> str:
    # Lone surrogates (e.g. from surrogateescape-decoded invalid UTF-8) cannot be encoded as
    # UTF-8; count each as U+FFFD, the character an editor shows in their place.
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@overload
def count(text: str, wait: Literal[True] = True) -> int: ...
@overload
def count(text: str, wait: bool) -> int | None: ...


def count(text: str, wait: bool = True) -> int | None:
    """Number of ``o200k_base`` tokens in ``text`` (ordinary text: special tokens not recognised).

    Counted by the rank-table counter (:mod:`unveil.core.bpe`) when it covers the text, else by
    tiktoken (a subset encoding in a process that :func:`prepare`-d, else the full encoding):
    the same number either way. ``wait=False`` returns ``None`` instead of blocking while
    counting is not available, and does not start loading; whoever needs counts starts it
    (:func:`preload`, :func:`prepare`, :func:`wait`). Raises :class:`TokenizerError` if the
    bundled data is corrupt. Never raises on any text.
    """
    if not text:
        return 0
    if not ready():
        if not wait:
            return None
        _wait_for_load()
    got = _recent.get(text) if len(text) > PIECE_MIN else _memo.get(text)
    if got is not None:
        return got
    clean = _clean(text)
    if len(clean) > PIECE_MIN:
        n = 0
        one = None  # chosen for the whole text when a paragraph is not in the memo
        for piece in pieces(clean):
            got = _memo.get(piece)
            if got is None:
                one = one or _counting(clean)
                got = sum(one(part) for part in chunks(piece))
                _remember(piece, got)
            n += got
        _remember_recent(text, n)
    else:
        n = _counting(clean)(clean)
        _remember(text, n)
    return n


def _counting(clean: str):
    """``text → tokens`` for ``clean`` and its substrings: the rank-table counter when it covers
    ``clean`` (:func:`unveil.core.bpe.covered`), else a tiktoken encoding (a subset encoding
    while they last, else the full one). Raises :class:`TokenizerError`."""
    counter = _counter
    if counter is not None and bpe.covered(clean):
        return counter.count
    enc = None
    subsets = _subsets_now() if _encoding is None else None
    if subsets is not None:
        enc = subsets.encoder_for(clean)
    if enc is None:
        enc = encoding()
    return _encoder_count(enc)


def _long_piece(b: bytes) -> int | None:
    """Tokens of one long pre-token (UTF-8 bytes) by tiktoken's byte-pair merge, without its
    pre-tokenizer (``Encoding._encode_single_piece``: the merges of
    :func:`unveil.core.bpe._merge_heap`, compiled); ``None`` when this tiktoken has no such
    method (the counter then merges it itself). Raises :class:`TokenizerError`."""
    single = getattr(encoding(), "_encode_single_piece", None)
    return None if single is None else len(single(b))


def _wait_for_load() -> None:
    """:func:`wait` (which :func:`count`'s ``wait`` argument hides there)."""
    wait()


def _encoder_count(enc: tiktoken.Encoding):
    """``text → len(enc.encode_ordinary(text))``."""
    encode = enc.encode_ordinary
    return lambda part: len(encode(part))


PIECE_MIN = 2_000
"""Texts longer than this are counted paragraph by paragraph (:func:`pieces`), each paragraph's
count memoised (a paragraph over :data:`CHUNK_CHARS` encoded in :func:`chunks`): after an edit
only the edited paragraph is encoded again, however long the document. Shorter texts are
encoded at once."""

_PIECE_CUT = re.compile(r"\n\n(?=[^\s/])")


def pieces(text: str) -> list[str]:
    r"""``text`` cut after each blank line that a character other than whitespace or ``/``
    follows; the concatenation is ``text`` and the pieces' counts add up to the text's exactly.

    Why exact: in ``o200k_base``'s pre-tokenizer (:data:`O200K_PAT`) a line feed can only be part
    of ``\s*[\r\n]+``, ``\s+``, or a punctuation run's tail ``[\r\n/]*``; none of them goes on past
    a line feed into a character that is neither whitespace nor ``/``, and no alternative looks
    behind, so a pre-token boundary falls at each cut and each side is split into the same
    pre-tokens as in the whole text (BPE merges never cross pre-tokens). ``re``'s ``\s`` is
    ``str.isspace``: the Unicode White_Space that the pattern's ``\s`` means plus U+001C..U+001F,
    so no cut falls before any whitespace (checked over every code point when this was written;
    a test compares the summed counts with whole-text counts on corpus files and edge cases)."""
    out: list[str] = []
    i = 0
    for m in _PIECE_CUT.finditer(text):
        out.append(text[i : m.end()])
        i = m.end()
    out.append(text[i:])
    return out


CHUNK_CHARS = 50_000
"""Most code points passed to tiktoken at once. tiktoken 0.14 panics (``pyo3_runtime.PanicException``,
a ``BaseException``) on about 1,000,000 spaces without a line break: its pre-tokenizer regex
overflows. :func:`count` therefore encodes bounded chunks and adds the counts."""

_CUT = re.compile(r"(?s).*[A-Za-z0-9](?=[ \t\n\r])")


def chunks(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    r"""``text`` cut into pieces of at most ``limit`` code points whose concatenation is ``text``.

    Each cut is made just before an ASCII space, tab or line break that follows an ASCII letter or
    digit: no alternative of :data:`O200K_PAT` matches a letter or digit and then whitespace
    (letter runs end at a letter, mark or contraction, digit runs at a digit, and the
    punctuation alternative cannot take a letter), so a pre-token boundary falls there and the
    summed count equals the whole text's count. Only ASCII is trusted: which other code points
    are letters depends on the Unicode version of tiktoken's pre-tokenizer, and a code point it
    takes for punctuation joins the line feeds after it (a review found 268 such code points,
    assigned since Python 3.11's Unicode 14.0). (Until 2026-12 the cut followed any
    non-whitespace character, which split a punctuation run from the line feeds that
    ``[\r\n/]*`` joins to it: one token too many per such cut.) A piece with no such place (a
    run of ``limit`` code points without an ASCII word character before ASCII whitespace) is cut
    at ``limit``, which can change the total by a few tokens at that join (a split run of spaces
    or a split word costs at most one or two extra    tokens per cut)."""
    if len(text) <= limit:
        return [text]
    out: list[str] = []
    i, n = 0, len(text)
    while n - i > limit:
        m = _CUT.match(text, i, i + limit + 1)
        j = m.end() if m is not None and m.end() > i else i + limit
        out.append(text[i:j])
        i = j
    out.append(text[i:])
    return out


class _CountMemo:
    """Token counts of recently counted texts, keyed by the text: one analysis counts the same
    sections twice (the TOK budget check and the token report), and an editor re-analyses
    mostly unchanged paragraphs (:func:`pieces`) on each edit. At most ``limit`` code points of
    text are kept; past that the least recently used texts go first, so the paragraphs every
    edit looks up again stay and the whole texts of earlier versions leave. (It was emptied
    whole when full: every eighth edit of the 294 KB corpus file then counted all its
    paragraphs again, 16 ms more, ``benchmarks/profile.md``, issue 10, session 18.)

    Thread-safe without a lock: each ``OrderedDict`` operation is atomic, and ``chars`` (the
    code points held) is only an estimate when threads race, which at worst drops entries a
    little early."""

    __slots__ = ("_d", "chars", "limit")

    def __init__(self, limit: int) -> None:
        self._d: OrderedDict[str, int] = OrderedDict()
        self.chars = 0
        self.limit = limit

    def get(self, text: str) -> int | None:
        n = self._d.get(text)
        if n is not None:
            try:
                self._d.move_to_end(text)
            except KeyError:  # dropped by another thread meanwhile
                pass
        return n

    def put(self, text: str, n: int) -> None:
        if len(text) > self.limit or text in self._d:
            return
        self._d[text] = n
        self.chars += len(text)
        while self.chars > self.limit:
            try:
                old, _ = self._d.popitem(last=False)
            except KeyError:  # emptied by another thread
                self.chars = 0
                break
            self.chars -= len(old)

    def clear(self) -> None:
        self._d.clear()
        self.chars = 0

    def __len__(self) -> int:
        return len(self._d)

    def __contains__(self, text: object) -> bool:
        return text in self._d


_MEMO_CHARS = 1_000_000
"""Most code points of text the count memo keeps: texts of at most :data:`PIECE_MIN` code
points and the paragraphs (:func:`pieces`) of longer ones. (It was 4,000,000 and held the
longer texts whole as well: every earlier version of an edited document, never looked up
again, 3.3 MiB for six versions of the 294 KB corpus file; in a process of ``unveil check``,
every file's text. ``benchmarks/profile.md``, issue 10, session 21.)"""
_memo = _CountMemo(_MEMO_CHARS)

RECENT_TEXTS = 4
"""Texts of more than :data:`PIECE_MIN` code points whose counts are kept whole: the last this
many counted, at most :data:`RECENT_CHARS` code points together (a text counted again is
answered without reading it). Their paragraphs are in the count memo in any case."""
RECENT_CHARS = 1_000_000
"""Most code points of the texts kept whole (:data:`RECENT_TEXTS`); a longer text is never kept
whole. The texts are the memo's keys, alive as long as they are kept: a padded 10 MB
``AGENTS.md`` kept the 20 MB of its part past Codex's 32 KiB cut (``TOK010`` counts it) for
the rest of the process (``benchmarks/profile.md``, issue 10, session 23)."""
_recent: OrderedDict[str, int] = OrderedDict()
_recent_lock = threading.Lock()


def _remember(text: str, n: int) -> None:
    _memo.put(text, n)


def _remember_recent(text: str, n: int) -> None:
    """Keep the count of a text over :data:`PIECE_MIN` code points among the last
    :data:`RECENT_TEXTS`, at most :data:`RECENT_CHARS` code points together (the oldest go
    first; a text longer than that is not kept). Thread-safe."""
    if len(text) > RECENT_CHARS:
        return
    with _recent_lock:
        _recent[text] = n
        _recent.move_to_end(text)
        total = sum(map(len, _recent))
        while len(_recent) > RECENT_TEXTS or total > RECENT_CHARS:
            total -= len(_recent.popitem(last=False)[0])
