"""Completion in frontmatter: the keys of the file's kind and the allowed values of a key.

* At a key position (a top-level line of the frontmatter, cursor before any ``:``): every key of
  the kind's schema (``unveil/data/schemas.toml``) not already present, inserted as ``key: ``,
  with the schema's documentation (type, allowed values, default, source).
* After ``key: `` (or on a ``- `` list item under the key): the key's allowed values (``model``,
  ``permissionMode``, ``trigger`` …), ``true``/``false`` for booleans, and Claude Code tool names
  for ``tools`` / ``allowed-tools`` (after a comma too).

The frontmatter may still be unclosed while the user types (``---`` at the top, no closing
fence yet): then it runs to the end of the document. Works on the open document's text (no
analysis needed), so it answers at once. Positions use the negotiated encoding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

from unveil.core import frontmatter as fm_mod
from unveil.core import kinds
from unveil.core.checks import frontmatter_schema as fs
from unveil.core.document import Document
from unveil.lsp.convert import lsp_range
from unveil.lsp.convert import offset as to_offset

_OPEN = re.compile(r"\ufeff?---[ \t]*(?:\r\n|\r|\n)")
_KEY_PREFIX = re.compile(r"[A-Za-z_][\w-]*|")
_VALUE_LINE = re.compile(r"([A-Za-z_][\w.-]*)[ \t]*:([ \t]*)(.*)")
_ITEM_LINE = re.compile(r"([ \t]*-[ \t]*)(.*)")
_WORD = re.compile(r"[\w.\-\[\]()*:/]*")


@dataclass(frozen=True)
class Item:
    """One completion: ``label`` inserted as ``new_text`` over code points ``[start, end)``."""

    label: str
    new_text: str
    start: int
    end: int
    kind: str  # "key" | "value" | "tool"
    detail: str = ""
    documentation: str = ""
    sort: str = ""


def _region(text: str) -> tuple[int, int] | None:
    """``[yaml_start, yaml_end)`` of the frontmatter, or of an unclosed one (to the end)."""
    span = fm_mod.find_span(text)
    if span is not None:
        return span.yaml_start, span.yaml_end
    m = _OPEN.match(text)
    if m:
        return m.end(), len(text)
    return None


def _key_doc(spec: fs.KeySpec, schema: fs.Schema) -> str:
    parts = [spec.doc] if spec.doc else []
    parts.append(f"Type: {fs._EXPECTED.get(spec.type, spec.type)}.")
    if spec.values:
        parts.append(
            "Values: "
            + ", ".join(f"`{v}`" for v in spec.values)
            + ("" if not spec.pattern else ", or a full model id")
            + "."
        )
    if spec.default is not None:
        parts.append(f"Default: `{spec.default}`.")
    if spec.required:
        parts.append("Required.")
    if schema.sources:
        parts.append(f"Source: {schema.sources[0]}")
    return "\n\n".join(parts)


def complete(text: str, path: str | None, offset: int) -> list[Item]:
    """Completions at code-point ``offset`` of ``text`` (the file at ``path``). Empty outside
    the frontmatter or for kinds without a schema. Never raises for any text."""
    region = _region(text)
    if region is None or not region[0] <= offset <= region[1]:
        return []
    fm = fm_mod.parse(text)
    kind = kinds.detect_kind(path, fm.mapping)
    schema = fs.schema_for(kind)
    if schema is None:
        return []
    doc = Document(text)
    line = doc.line_of(offset)
    line_start, line_end = doc.line_span(line)
    before = text[line_start:offset]
    after_word = _WORD.match(text, offset, line_end)
    word_end = after_word.end() if after_word else offset
    present = set((fm.mapping or {}).keys()) if fm.mapping else set()

    # Key position: column 0, only key characters before the cursor.
    if _KEY_PREFIX.fullmatch(before):
        key_end = offset
        m = re.compile(r"[\w-]*").match(text, offset, line_end)
        key_end = m.end() if m else offset
        rest = text[key_end:line_end]
        has_colon = rest.lstrip().startswith(":")
        current = text[line_start:key_end]
        out = []
        for i, (name, spec) in enumerate(schema.keys.items()):
            if name in present and name != current:
                continue
            out.append(
                Item(
                    label=name,
                    new_text=name if has_colon else f"{name}: ",
                    start=line_start,
                    end=key_end,
                    kind="key",
                    detail=f"{schema.label}: {fs._EXPECTED.get(spec.type, spec.type)}"
                    + (" (required)" if spec.required else ""),
                    documentation=_key_doc(spec, schema),
                    sort=f"{0 if spec.required else 1}{i:03d}",
                )
            )
        return out

    # Value position: `key: partial` or `  - partial` under a key.
    m = _VALUE_LINE.fullmatch(before)
    if m:
        key, space, partial = m.group(1), m.group(2), m.group(3)
    else:
        im = _ITEM_LINE.fullmatch(before)
        if not im:
            return []
        key = _owner_key(doc, text, line, region[0])
        if key is None:
            return []
        space, partial = " ", im.group(2)
    spec = schema.spec(key)
    if spec is None:
        return []
    lead = "" if space or not m else " "
    if spec.tools:
        # Tool lists: complete the last item after a comma or whitespace.
        cut = max(partial.rfind(","), partial.rfind(" "), partial.rfind("\t"))
        item_start = offset - len(partial) + cut + 1
        if cut >= 0:
            lead = " " if partial[cut] == "," else ""
        known = sorted(fs.load_schemas().tools.get(spec.tools, ()))
        already = {t.strip() for t in re.split(r"[,\s]+", partial)}
        return [
            Item(t, lead + t, item_start, word_end, "tool", detail="Claude Code tool", sort=f"{i:03d}")
            for i, t in enumerate(known)
            if t not in already
        ]
    values: tuple[str, ...] = spec.values
    if spec.type == "boolean":
        values = ("true", "false")
    if not values:
        return []
    start = offset - len(partial)
    return [
        Item(
            v,
            lead + v,
            start,
            word_end,
            "value",
            detail=f"{key}" + (" (default)" if spec.default == v else ""),
            documentation=spec.doc,
            sort=f"{i:03d}",
        )
        for i, v in enumerate(values)
    ]


def _owner_key(doc: Document, text: str, line: int, yaml_start: int) -> str | None:
    """The column-0 key a ``- item`` line belongs to (scanning up), or ``None``."""
    first = doc.line_of(yaml_start)
    for ln in range(line - 1, first - 1, -1):
        content = doc.line_text(ln)
        if not content.strip() or content.lstrip().startswith(("-", "#")):
            continue
        if content[0] in " \t":
            return None
        m = _VALUE_LINE.fullmatch(content)
        return m.group(1) if m and not m.group(3).strip() else None
    return None


_KINDS = {
    "key": types.CompletionItemKind.Property,
    "value": types.CompletionItemKind.EnumMember,
    "tool": types.CompletionItemKind.Function,
}


def to_lsp(doc: Document, items: list[Item], encoding: str) -> types.CompletionList:
    """LSP ``CompletionList`` (complete) with a ``TextEdit`` per item."""
    out = []
    for it in items:
        out.append(
            types.CompletionItem(
                label=it.label,
                kind=_KINDS.get(it.kind),
                detail=it.detail or None,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=it.documentation)
                if it.documentation
                else None,
                sort_text=it.sort or None,
                filter_text=it.label,
                text_edit=types.TextEdit(range=lsp_range(doc, it.start, it.end, encoding), new_text=it.new_text),
            )
        )
    return types.CompletionList(is_incomplete=False, items=out)


def register(server) -> None:
    from unveil.lsp.registry import safe

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[":", ","]))
    @safe()
    def on_completion(ls, params: types.CompletionParams) -> types.CompletionList | None:
        tdoc = ls.open_document(params.text_document.uri)
        if tdoc is None:
            return None
        text = tdoc.source
        doc = Document(text)
        off = to_offset(doc, params.position, ls.encoding)
        items = complete(text, tdoc.path or params.text_document.uri, off)
        if not items:
            return None
        return to_lsp(doc, items, ls.encoding)
