"""LSP-correct text documents for pygls 2.1.

pygls's ``TextDocument.lines`` is ``source.splitlines(True)``, which also breaks lines at ``\\v``,
``\\f``, ``\\x1c``–``\\x1e``, U+0085, U+2028 and U+2029. LSP 3.17 ("Text Documents") counts only
``\\n``, ``\\r\\n`` and ``\\r`` as line breaks, so on a document containing one of those characters
stock pygls applies incremental edits at the wrong place and the server's copy silently drifts
from the editor's (lsp-engineering.md §4.1). :class:`LspTextDocument` fixes the line split and
:class:`LspWorkspace` creates such documents; :func:`install_workspace` swaps the workspace pygls
built during ``initialize`` for ours (private pygls attributes: pygls is pinned to ``>=2.1.1,<2.2``).
"""

from __future__ import annotations

import re
from typing import Sequence

from pygls.workspace import TextDocument, Workspace

_NON_LSP_BREAK = re.compile("[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_SPLIT = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def lsp_lines(text: str) -> tuple[str, ...]:
    """Split ``text`` into lines with their line endings, breaking only at ``\\n``, ``\\r\\n`` and
    ``\\r``. The concatenation of the result is ``text``; a trailing line break does not add an
    empty last element (same shape as ``str.splitlines(True)``, which pygls's code expects)."""
    if not _NON_LSP_BREAK.search(text):
        return tuple(text.splitlines(True))  # fast path: identical on such text
    if "\r" not in text:
        parts = text.split("\n")
        out = [p + "\n" for p in parts[:-1]]
        if parts[-1]:
            out.append(parts[-1])
        return tuple(out)
    parts = _SPLIT.split(text)
    if parts and parts[-1] == "":
        parts.pop()
    return tuple(parts)


class LspTextDocument(TextDocument):
    """A pygls ``TextDocument`` whose :attr:`lines` follow the LSP line-break rules and whose
    incremental changes clamp out-of-range positions as LSP 3.17 says.

    Lines are cached per source string (the source is replaced, never mutated, on each change).
    ``change_count`` counts every change applied (results are keyed by it, not by the client's
    version alone: a client that repeats a version number still gets its change analysed).
    """

    _lines_source: str | None = None
    _lines_cache: tuple[str, ...] = ()
    _document = None  # Document of the source, see document
    change_count: int = 0

    def apply_change(self, change) -> None:
        super().apply_change(change)
        self.change_count += 1

    def _apply_incremental_change(self, change) -> None:
        """Replace ``change.range`` by ``change.text`` with the spec's clamping (LSP 3.17,
        "Position"): a character past the line's content means the end of the content (never
        inside the ``\r\n`` pair, never on the next line); a line past the last means the end
        of the document; a character inside a surrogate pair (UTF-16) or a UTF-8 sequence
        rounds down to the start of that code point; a reversed range is ordered.

        Stock pygls 2.1 clamps to the character *before* the line break of the line, or past it
        (``ab\ncd`` + insert at (0, 3) gives ``ab\nXcd``), drops text inserted past the last
        line, and rounds inside surrogate pairs differently in ``position_from_client_units``
        and ``_apply_incremental_change``. Upstream should convert each position to an
        absolute offset once, with the clamping above, and splice the source string."""
        from unveil.lsp.convert import encoding_name

        doc = self.document
        source = doc.text
        enc = encoding_name(getattr(self._position_codec, "encoding", "utf-16"))
        r = change.range
        a = doc.from_client(r.start.line, r.start.character, enc)
        b = doc.from_client(r.end.line, r.end.character, enc)
        if b < a:
            a, b = b, a
        self._source = source[:a] + change.text + source[b:]
        self._document = doc.spliced(a, b, change.text, self._source)

    @property
    def document(self):
        """The :class:`unveil.core.document.Document` of the current source: moved along with
        each incremental change (:meth:`~unveil.core.document.Document.spliced`, no scan of the
        text), else indexed on first use. The analysis of this version takes it instead of
        indexing the text again."""
        from unveil.core.document import Document

        got = self.known_document()
        if got is None:
            got = self._document = Document(self.source)
        return got

    def known_document(self):
        """:attr:`document` if it is at hand (no indexing now), else ``None``."""
        got = self._document
        return got if got is not None and got.text is self.source else None

    def keep_document(self, document) -> None:
        """Take ``document`` (an analysis' :class:`~unveil.core.document.Document`) as this
        source's index when it is this source's and none is kept: the next incremental change
        moves it instead of indexing the text."""
        if document is not None and document.text is self.source and self.known_document() is None:
            self._document = document

    @property
    def lines(self) -> Sequence[str]:
        source = self.source
        if source is not self._lines_source:
            self._lines_cache = lsp_lines(source)
            self._lines_source = source
        return self._lines_cache


class LspWorkspace(Workspace):
    """A pygls ``Workspace`` that creates :class:`LspTextDocument` instances."""

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )


def install_workspace(ls) -> LspWorkspace:
    """Replace the workspace pygls created in ``initialize`` (before any document is open) by an
    :class:`LspWorkspace` with the same root, sync kind, folders and position encoding."""
    ws = ls.protocol._workspace
    if isinstance(ws, LspWorkspace):
        return ws
    new = LspWorkspace(ws.root_uri, ws._sync_kind, list(ws.folders.values()), ws.position_encoding)
    for uri, doc in ws.text_documents.items():  # normally none yet
        new.put_text_document(
            _item(uri, doc),
        )
    ls.protocol._workspace = new
    return new


def _item(uri, doc):
    from lsprotocol import types

    return types.TextDocumentItem(
        uri=uri, language_id=doc.language_id or "markdown", version=doc.version or 0, text=doc.source
    )
