"""Conversions between the core's code-point offsets and LSP positions and ranges.

All conversions go through :class:`unveil.core.document.Document` (``to_client``,
``from_client``) with the negotiated position encoding (``"utf-8"``, ``"utf-16"`` or
``"utf-32"``), never through pygls's codec, so outgoing and incoming positions agree.
"""

from __future__ import annotations

from lsprotocol import types

from unveil.core.document import ENCODINGS, Document


def encoding_name(value) -> str:
    """The position encoding as a plain string (``PositionEncodingKind`` or ``str``); anything
    unknown or missing means the LSP default, ``"utf-16"``."""
    name = getattr(value, "value", value)
    return name if name in ENCODINGS else "utf-16"


def position(doc: Document, offset: int, encoding: str) -> types.Position:
    """LSP position of code-point ``offset``, column in ``encoding`` units."""
    p = doc.to_client(offset, encoding)
    return types.Position(line=p.line, character=p.character)


def lsp_range(doc: Document, start: int, end: int, encoding: str) -> types.Range:
    """LSP range of code points ``[start, end)``."""
    return types.Range(start=position(doc, start, encoding), end=position(doc, end, encoding))


def offset(doc: Document, pos: types.Position, encoding: str) -> int:
    """Code-point offset of an LSP position (clamped to the document)."""
    return doc.from_client(pos.line, pos.character, encoding)


def line_end(doc: Document, line: int, encoding: str) -> types.Position:
    """LSP position of the end of ``line``'s content (before its line break)."""
    _, end = doc.line_span(line)
    return position(doc, end, encoding)
