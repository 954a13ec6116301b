"""A scanned file's result as the CLI keeps it: what the reporters and commands read, without the
markdown layer, the import tree or the parsed frontmatter.

:class:`FileReport` has the attributes of :class:`unveil.core.analyze.Analysis` that the CLI
reporters (text, json, sarif, github, gitlab, markdown), ``--fix``/``--diff``, ``--baseline``,
``baseline``, ``badge`` and ``cost`` read: ``doc`` (the :class:`~unveil.core.document.Document`,
so positions, ``text`` and fingerprints are exactly those of the analysis), ``path``, ``kind``,
``grade``, ``findings``, ``tokens``, ``settings`` and ``extra["suppressed"]``. A folder scan
keeps one per file until the report is written, a pool worker sends one back to the parent and
the file cache (:mod:`unveil.core.cache`, namespace ``files/``) stores one. Pickled, a report is
its text and fields (with the line index) and never its settings: the reader attaches the
settings it computed the key from. The file cache leaves the text out too (:func:`cache_state`):
the reader has the file's bytes, which the key was computed from. An unpickled report keeps its
line starts packed (one ``array("I")`` byte string; the line ends follow from the starts and the
text) and, from the file cache, its text as the file's bytes, until ``doc`` is first read: in a warm corpus
run 401 of 3,349 reports are ever asked for a position.

:func:`file_key` and :func:`dependencies_hold` decide when a stored report may be reused: the
unveil version and code (:func:`code_hash`), the rules (bundled, and the bytes of the user's
``rulesPaths`` files), the settings (:func:`canonical`) and the bytes of the price file they
name (it sets the Claude token ratio of the token report), the file's absolute path and bytes,
and the bytes of every file its ``@imports`` read when it was analysed (a file now present
that was missing, or the other way round, is a change too). What depends on the working
directory or on configuration files above the file (the project configuration summary and
``UNV021``, the ``documentation`` policy, baselines) is applied after the cache, every run.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from unveil.core.cost import SectionCost, TokenReport
from unveil.core.document import Document


@dataclass
class FileReport:
    """What the CLI reports for one file (see the module docstring). ``deps``: ``(path, SHA-256
    of its bytes, or "" when it could not be read)`` of every file the analysis read besides the
    file itself, sorted by path."""

    doc: Document
    path: str | None
    kind: str
    grade: str
    findings: list
    tokens: object | None
    settings: object
    extra: dict = field(default_factory=dict)
    deps: tuple = ()

    @property
    def text(self) -> str:
        packed = self.__dict__.get("_packed")
        return self._unpacked_text(packed) if packed is not None else self.doc.text

    def _unpacked_text(self, packed: tuple) -> str:
        """The text of a packed report (``packed[0]``): the file's bytes as
        :func:`from_cache_state` stores them (decoded here, once, with
        :func:`unveil.core.safe_read.decode`), the text compressed as :meth:`__getstate__`
        sends it (:func:`_unzipped`), or the text itself."""
        text = packed[0]
        if type(text) is not str:
            if type(text) is bytes:
                from unveil.core.safe_read import decode

                text = decode(text)
            else:
                text = _unzipped(text)
            if self.__dict__.get("_packed") is packed:
                self.__dict__["_packed"] = (text, *packed[1:])
        return text

    @classmethod
    def of(cls, analysis, deps: tuple = ()) -> "FileReport":
        """The report of an :class:`~unveil.core.analyze.Analysis` (or of another report)."""
        return cls(
            doc=analysis.doc,
            path=analysis.path,
            kind=analysis.kind,
            grade=analysis.grade,
            findings=list(analysis.findings),
            tokens=analysis.tokens,
            settings=analysis.settings,
            extra={"suppressed": list(analysis.extra.get("suppressed") or ())},
            deps=deps,
        )

    def __getstate__(self) -> dict:
        """The pickled report (a pool worker's to the parent, the workspace scan's process to the
        language server): its fields, the line index and the text compressed (:func:`_zipped`):
        the parent keeps every report until the output is written and reads the text of few
        (those with findings)."""
        state = self._state()
        state["text"] = _zipped(state["text"])
        return state

    def _state(self) -> dict:
        """:meth:`__getstate__` with the text as it is."""
        state = {k: getattr(self, k) for k in ("path", "kind", "grade", "findings", "tokens", "extra", "deps")}
        doc = self.doc
        state["text"] = doc.text
        # the line starts as one array of 4-byte offsets (8-byte past 4 Gi code points; the
        # line ends follow from them, :meth:`Document.from_line_starts`): loading them is a
        # copy, rebuilding the index from the text a regular-expression pass
        code = "I" if len(doc.text) < 1 << 32 and array("I").itemsize == 4 else "q"
        state["lines"] = (code, array(code, doc.line_starts).tobytes())
        return state

    if not TYPE_CHECKING:  # (hidden from mypy, which would accept any attribute name otherwise)

        def __getattr__(self, name: str):
            # only for an attribute not set: ``doc`` of a report loaded with its line index still
            # packed (:meth:`__setstate__`), built on first use: most reports of a warm run have
            # no finding, and their reporters never read a position
            # (``doc`` is set before ``_packed`` goes: a second thread reading ``doc`` meanwhile
            # builds it again or finds it, never neither)
            if name == "doc":
                packed = self.__dict__.get("_packed")
                if packed is not None:
                    text, code, starts = self._unpacked_text(packed), packed[1], packed[2]
                    # the array itself (indexing and bisect work on it): converting a large
                    # file's starts to a list of ints costs more than every lookup a report makes
                    doc = Document.from_line_starts(text, array(code, starts))
                    self.__dict__["doc"] = doc
                    self.__dict__.pop("_packed", None)
                    return doc
                doc = self.__dict__.get("doc")
                if doc is not None:
                    return doc
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        text = state.pop("text")
        code, starts = state.pop("lines", (None, None))
        if type(text) is tuple:
            if not (len(text) == 2 and text[0] == _ZIP_TAG and type(text[1]) is bytes):
                raise ValueError("a packed text of another shape")
        elif type(text) is not str and type(text) is not bytes:
            raise ValueError("a text of another type")
        if code is None and starts is None:
            self.doc = Document(self._unpacked_text((text,)))
        elif code in _LINE_CODES and type(starts) is bytes and starts and len(starts) % _LINE_CODES[code] == 0:
            self.__dict__["_packed"] = (text, code, starts)
        else:
            raise ValueError("a line index of another shape")
        self.settings = None
        tokens = state.get("tokens")
        if type(tokens) is tuple and tokens and tokens[0] == _TOKENS_TAG:
            state["tokens"] = _tokens_from_state(tokens)
        for k, v in state.items():
            setattr(self, k, v)


_ZIP_TAG = "zlib/utf-8"


def _zipped(text: str) -> tuple[str, bytes]:
    """``text`` as ``(tag, bytes)``: its UTF-8 (lone surrogates kept, ``surrogatepass``)
    compressed with zlib at level 1 (about a quarter of the text's size for markdown; 43.6 MiB
    of texts in the parent of a cold corpus run, ``benchmarks/profile.md``, issue 10, session
    21). :func:`_unzipped` gives the same string back, whatever its code points."""
    import zlib

    return _ZIP_TAG, zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _unzipped(packed: tuple[str, bytes]) -> str:
    """The text :func:`_zipped` packed. Raises ``ValueError`` for bytes that do not decompress
    (``zlib.error``, raised again as a ``ValueError``) or do not decode (``UnicodeDecodeError``)."""
    import zlib

    try:
        return zlib.decompress(packed[1]).decode("utf-8", "surrogatepass")
    except zlib.error as exc:
        raise ValueError(f"a packed text that does not decompress: {exc}") from exc


_LINE_CODES = {"I": 4, "q": 8} if array("I").itemsize == 4 else {"q": 8}
"""The ``array`` type codes a stored line index may have, with their item sizes."""


def cache_state(report: FileReport, text: str) -> dict:
    """What the file cache stores of ``report``: its pickled state without the text when the text
    is ``text`` (the decoded bytes the key was computed from, which the reader has in hand: a
    warm run then reads, checks and unpickles a third of the bytes), and with its token report as
    plain tuples (:func:`_tokens_state`)."""
    state = report._state()
    if state["text"] == text:
        del state["text"]
    tokens = state.get("tokens")
    if type(tokens) is TokenReport:
        state["tokens"] = _tokens_state(tokens)
    return state


_TOKENS_TAG = "token-report/1"
_SECTION_WIDTH = len(SectionCost._fields)
_TOKEN_FIELDS = frozenset(f.name for f in dataclasses.fields(TokenReport))


def _tokens_state(report: TokenReport) -> tuple:
    """``report`` as ``(tag, its fields but the sections as a dict, the sections as
    (line, level, title, tokens) tuples)``: plain tuples unpickle about three times faster than
    a :class:`~unveil.core.cost.SectionCost` each (43,220 sections in the 3,349 corpus files
    were two thirds of a warm run's unpickling)."""
    fields = dict(report.__dict__)
    sections = fields.pop("sections")
    return (_TOKENS_TAG, fields, tuple(tuple(s) for s in sections))


def _tokens_from_state(state: tuple) -> TokenReport:
    """The :class:`~unveil.core.cost.TokenReport` :func:`_tokens_state` stored. Raises
    ``ValueError`` for a state of another shape (a miss for the caller)."""
    try:
        _tag, fields, rows = state
        if not all(type(row) is tuple and len(row) == _SECTION_WIDTH for row in rows):
            raise ValueError("a section row of another width")
        make = tuple.__new__
        sections = tuple([make(SectionCost, row) for row in rows])
        report = object.__new__(TokenReport)
        report.__dict__.update(fields)
        report.__dict__["sections"] = sections
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a stored token report: {exc}") from exc
    if set(report.__dict__) != _TOKEN_FIELDS:
        raise ValueError("not a stored token report: its fields differ")
    return report


def from_cache_state(state: object, text: str | bytes) -> FileReport | None:
    """The report :func:`cache_state` stored, with ``text`` put back when it was left out;
    ``None`` for anything else (an entry of an older layout is a miss). ``text``: the file's
    text, or its bytes, then decoded (:func:`unveil.core.safe_read.decode`) only when the
    report's ``text`` or ``doc`` is first read: most reports of a warm run never are."""
    if not isinstance(state, dict) or "lines" not in state:
        return None
    state = dict(state)
    state.setdefault("text", text)
    report = FileReport.__new__(FileReport)
    try:
        report.__setstate__(state)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    return report


# --------------------------------------------------------------------------- cache keys


_SOURCE_SUFFIXES = (".py", ".toml", ".json", ".txt", ".tsv", ".md")
_DEPENDENCIES = (
    "regex",
    "markdown-it-py",
    "mdit-py-plugins",
    "ruamel.yaml",
    "tiktoken",
    "tree-sitter",
    "tree-sitter-bash",
)


@lru_cache(maxsize=1)
def code_hash() -> str:
    """SHA-256 over the unveil version (:func:`unveil.core.cache.version_tag`), the versions of
    the parsers it depends on, and the name, size and modification time (``st_mtime_ns``) of
    every source and data file of the package and of every bundled rule file: any edit of the
    code, data or rules (a checkout, an install) is a cache miss, released or not. File
    metadata rather than bytes: ``stat`` of ~150 files takes a few milliseconds, hashing their
    1.8 MB a fifth of a second, paid by every ``unveil check`` of a single file."""
    from unveil.core import cache
    from unveil.core.rules import bundled_rules_dir

    pkg = Path(__file__).resolve().parent.parent
    parts: list[bytes | str] = [cache.version_tag()]
    parts += _dependency_versions()  # a parser or tokenizer upgrade may change results too
    for root in (pkg, bundled_rules_dir()):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(_SOURCE_SUFFIXES):
                    p = Path(dirpath, name)
                    try:
                        st = p.stat()
                        parts += [str(p.relative_to(root)), f"{st.st_size}:{st.st_mtime_ns}"]
                    except OSError:
                        parts += [str(p), ""]
    return cache.digest(parts)


def _dependency_versions() -> list[str]:
    """The ``*.dist-info`` folder names (name and version) of :data:`_DEPENDENCIES` on
    ``sys.path``: a directory listing, not ``importlib.metadata`` (a tenth of a second to import)."""
    wanted = tuple(d.replace("-", "_").replace(".", "_").lower() + "-" for d in _DEPENDENCIES)
    out: list[str] = []
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        out += sorted(n for n in names if n.endswith(".dist-info") and n.replace(".", "_").lower().startswith(wanted))
    return out


def _files_hash(paths) -> list[bytes | str]:
    """Names and bytes of ``paths`` (a folder stands for its ``*.toml`` files, sorted)."""
    from unveil.core import safe_read

    parts: list[bytes | str] = []
    for raw in paths or ():
        p = Path(raw)
        files = sorted(p.glob("*.toml")) if p.is_dir() else [p]
        for f in files:
            try:
                parts += [str(f), safe_read.read_bytes(f)]
            except (OSError, ValueError):
                parts += [str(f), "unreadable"]
    return parts


def canonical(value) -> str:
    """A text that is equal for equal settings in every process: dataclass fields in order,
    mappings by sorted key, sets sorted (their iteration order changes with string hash
    randomisation, so ``repr`` would not do), everything else by ``repr``."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name}={canonical(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, dict):
        items = sorted((canonical(k), canonical(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        return "set(" + ", ".join(sorted(canonical(v) for v in value)) + ")"
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "(" + ", ".join(canonical(v) for v in value) + ")"
    return repr(value)


def settings_key(settings) -> str:
    """The part of a file's key its settings give: :func:`canonical` of every field and the
    bytes of the user rule files and the price file they name (computed once per settings
    object by the CLI)."""
    from unveil.core import cache

    extra = [getattr(settings, "prices_file", None)] if getattr(settings, "prices_file", None) else []
    parts = [canonical(settings), *_files_hash(getattr(settings, "rules_paths", ())), "prices", *_files_hash(extra)]
    return cache.digest(parts)


def file_key(path: str, data: bytes, settings_part: str) -> str:
    """Cache key of one file's report: :func:`code_hash`, ``settings_part``
    (:func:`settings_key`), the absolute path and the file's bytes."""
    from unveil.core import cache

    return cache.digest([code_hash(), settings_part, path, data])


def content_hash(data: bytes | None) -> str:
    """Hex SHA-256 of ``data``; ``""`` for ``None`` (a file that could not be read)."""
    import hashlib

    return "" if data is None else hashlib.sha256(data).hexdigest()


def read_dep(path: str) -> bytes | None:
    """The bytes of a dependency (an imported file), or ``None`` when it cannot be read or is
    not a regular file (:func:`unveil.core.safe_read.read_bytes`: a named pipe is never opened)."""
    from unveil.core import safe_read

    try:
        return safe_read.read_bytes(path)
    except (OSError, ValueError):
        return None


def dependencies_hold(report: FileReport) -> bool:
    """Whether every file ``report.deps`` names still has the bytes it had (or is still unreadable)."""
    return all(content_hash(read_dep(p)) == h for p, h in report.deps)


def load_report(key: str, data: bytes, overrides: Mapping[str, str] | None = None) -> FileReport | None:
    """The report the file cache holds under ``key`` (:func:`file_key`) for a file whose bytes
    are ``data``, when every file its ``@imports`` read still has the bytes it had
    (:func:`dependencies_hold`) and none of them is in ``overrides`` (normalised path → the
    unsaved text of an open editor buffer, which the stored report did not see); else ``None``.
    The report comes without settings (the caller attaches those it made the key from)."""
    from unveil.core import cache
    from unveil.core.imports import norm_path

    if not key:
        return None
    hit = cache.load_pickle("files", key)
    if hit is None:
        return None
    report = from_cache_state(hit, data)  # decoded when its text is first read
    if report is None:
        return None
    if overrides:
        unsaved = {norm_path(p) for p in overrides}
        if any(norm_path(p) in unsaved for p, _ in report.deps):
            return None
    return report if dependencies_hold(report) else None


def analyse_file(
    path: str, data: bytes, settings, key: str = "", overrides: Mapping[str, str] | None = None, **kwargs
) -> FileReport:
    """:func:`unveil.core.analyze.analyze` of the file at ``path`` (absolute) whose bytes are
    ``data``, as a :class:`FileReport` with the SHA-256 of every file its ``@imports`` read
    (``deps``), stored in the file cache under ``key`` (when given) unless an import was read
    from ``overrides`` (normalised path → unsaved text, read before the disk). ``kwargs`` go to
    ``analyze`` (``cancelled``, ``pause``). Raises what ``analyze`` raises (it should not)."""
    from unveil.core import cache, imports, safe_read
    from unveil.core.analyze import analyze

    deps: dict[str, str] = {}
    over = {imports.norm_path(k): v for k, v in (overrides or {}).items()}
    unsaved = False
    disk = imports.disk_reader(overrides=over)  # the unsaved texts first, then the disk

    def reader(p: str):
        nonlocal unsaved
        if imports.norm_path(p) in over:
            unsaved = True
        else:
            deps[p] = content_hash(read_dep(p))
        return disk(p)

    text = safe_read.decode(data)
    analysis = analyze(text, path, settings, reader=reader, **kwargs)
    report = FileReport.of(analysis, tuple(sorted(deps.items())))
    if key and not unsaved:
        cache.store_pickle("files", key, cache_state(report, text))
    return report


def background_init() -> None:
    """Set up a background analysis process (the language server's workspace scan,
    ``unveil.lsp.features.workspace.BackgroundPool``): its standard output goes to standard
    error (it inherited the server's, which carries the protocol: a stray write there would
    corrupt the client's stream), a lower scheduling priority (``nice`` +10 where the system
    has it) so that on a busy machine the editor's own process comes first, and the start-up
    caches of ``unveil check`` (compiled patterns, generated dataclass code). Never raises."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    except (AttributeError, OSError, ValueError):  # no standard streams
        pass
    try:
        os.nice(10)
    except (AttributeError, OSError):  # no nice (Windows), or not allowed
        pass
    try:
        from unveil.core import codecache, rxcache

        rxcache.install()
        codecache.install(codecache.CLI_MODULES)
    except Exception:  # noqa: BLE001 - caches are an optimisation only
        pass
