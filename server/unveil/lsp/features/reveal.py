"""Custom requests for editor clients (the VS Code extension uses both).

* ``unveil/modelView`` — params ``{"uri": str}`` (or ``{"textDocument": {"uri": str}}``); result
  ``{"uri", "version", "text"}`` where ``text`` is what the model reads: the document with every
  invisible code point written as ``⟨U+200B ZERO WIDTH SPACE⟩``, runs of tag characters decoded
  as ``⟨TAGS "…"⟩``, followed by a list of the hidden parts the findings reveal (HTML comments,
  hidden markup, decoded payloads). ``None`` when the document is not open.
* ``unveil/fileReport`` — params ``{"uri": str, "workspace": bool}``; result (``None`` when the
  document is not open)::

      {"uri", "version", "kind", "kindLabel", "grade",
       "findings": {"error": n, "warning": n, "information": n, "hint": n},
       "tokens": None | {"session", "invoke", "total", "body", "basis", "notes": [str],
                         "sections": [{"line", "level", "title", "tokens"}]},
       "prices": [{"model", "modelId", "inputPerMTok", "usdPerSession", "usdPerInvoke",
                   "usdPer1000Sessions", "approx": bool, "tokenRatio": float | None,
                   "o200kUsdPerSession", "o200kUsdPerInvoke", "o200kUsdPer1000Sessions",
                   "text": {"perSession", "perInvoke", "per1000Sessions"}}],
       "pricesNote": None | str,
       "workspace": None | {"files", "session", "invoke", "truncated"}}

  Tokens are o200k tokens; USD from the bundled price table merged with the user's ``prices``
  (USD per million input tokens × tokens / 1e6; see :func:`unveil.core.cost.price_rows`).
  For Claude models (``approx`` true) ``usdPer*`` and ``text`` are the estimate (o200k tokens ×
  ``tokenRatio``, text prefixed "≈" unless zero) and ``o200kUsdPer*`` the exact o200k-based
  figures; ``pricesNote`` is the footnote saying so (:func:`unveil.core.cost.estimate_note`).
  ``tokens`` is ``None`` while the tokenizer loads. ``workspace`` (only when asked for) sums the
  agent files under the workspace folders (files whose kind is not plain ``markdown``; open
  documents use their editor text), cached per file by modification time; at most
  :data:`WORKSPACE_FILE_LIMIT` files are read.

Registered by :func:`register` (``server.py``'s :func:`create_server`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

import regex

from unveil.core import tokens as tokens_mod
from unveil.core.analyze import Analysis
from unveil.core.unicode_data import cp_label

log = logging.getLogger(__name__)

MODEL_VIEW = "unveil/modelView"
FILE_REPORT = "unveil/fileReport"
WORKSPACE_FILE_LIMIT = 2000

# Code points that draw nothing (or move text around) in an editor: Default_Ignorable, bidi
# controls, format characters, controls other than tab/LF/CR, and the line/paragraph
# separators (U+2028/U+2029) that most editors do not treat as line breaks.
_INVISIBLE = regex.compile(
    r"[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Cf}\p{Cc}\p{Zl}\p{Zp}--[\t\n\r]]", regex.V1
)
_TAG_RUN = regex.compile(r"[\U000E0020-\U000E007E]+")


def _uri_of(params: Any) -> str | None:
    """``uri`` from ``{"uri"}`` or ``{"textDocument": {"uri"}}`` (dicts or pygls namedtuples)."""

    def get(obj: Any, key: str) -> Any:
        if isinstance(obj, dict):
            return obj.get(key)
        return getattr(obj, key, None)

    uri = get(params, "uri")
    if uri is None:
        uri = get(get(params, "textDocument"), "uri")
    return uri if isinstance(uri, str) else None


def _flag(params: Any, key: str) -> bool:
    value = params.get(key) if isinstance(params, dict) else getattr(params, key, None)
    return value is True


def _tags(run: str) -> str:
    """``⟨TAGS "abc"⟩`` for a run of tag characters U+E0020..U+E007E (they mirror ASCII; the
    other tags, U+E0001 LANGUAGE TAG and U+E007F CANCEL TAG, are written by name)."""
    decoded = "".join(chr(ord(ch) - 0xE0000) for ch in run).replace("\\", "\\\\").replace('"', '\\"')
    return f'⟨TAGS "{decoded}"⟩'


def reveal_text(text: str) -> str:
    """``text`` with each invisible code point replaced by ``⟨U+XXXX NAME⟩`` and each run of tag
    characters by ``⟨TAGS "decoded"⟩``. Tab, LF and CR are kept as they are."""
    parts: list[str] = []
    pos = 0
    for m in _INVISIBLE.finditer(text):
        if m.start() < pos:
            continue
        parts.append(text[pos : m.start()])
        tag = _TAG_RUN.match(text, m.start())
        if tag:
            parts.append(_tags(tag.group()))
            pos = tag.end()
        else:
            parts.append(f"⟨{cp_label(m.group())}⟩")
            pos = m.end()
    parts.append(text[pos:])
    return "".join(parts)


WRAP = 100
"""Columns at which the hidden-parts list of the model view is wrapped (continuation lines are
indented), so a decoded payload is readable without horizontal scrolling."""


def _wrap(text: str, indent: str) -> list[str]:
    import textwrap

    rows: list[str] = []
    for row in text.splitlines() or [""]:
        rows.extend(
            textwrap.wrap(
                row,
                width=WRAP,
                initial_indent=indent,
                subsequent_indent=indent + "  ",
                break_long_words=True,
                break_on_hyphens=False,
                replace_whitespace=False,
                drop_whitespace=True,
            )
            or [indent.rstrip()]
        )
    return rows


def model_view(analysis: Analysis, encoding: str = "utf-16") -> str:
    """What the model reads (see the module docstring). In the hidden-parts list each finding's
    position is 1-based ``line:column`` with the column in ``encoding`` units (the editor's:
    UTF-16 code units in VS Code), so it matches the Problems panel; the list is wrapped at
    :data:`WRAP` columns."""
    body = reveal_text(analysis.text)
    hidden = [f for f in analysis.findings if f.hidden_text]
    if not hidden:
        return body
    lines = [body.rstrip("\n"), "", "", "──── Hidden parts revealed by unveil " + "─" * 30, ""]
    doc = analysis.doc
    for f in hidden:
        pos = doc.to_client(f.start, encoding)
        lines.extend(_wrap(f"{f.rule} at {pos.line + 1}:{pos.character + 1} · {f.severity.label} · {f.message}", ""))
        lines.extend(_wrap(reveal_text(f.hidden_text or ""), "    "))
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- file report


def _severity_counts(analysis: Analysis) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "information": 0, "hint": 0}
    names = {1: "error", 2: "warning", 3: "information", 4: "hint"}
    for f in analysis.findings:
        key = names.get(int(f.severity))
        if key:
            counts[key] += 1
    return counts


def _price_rows(analysis: Analysis) -> tuple[list[dict], str | None]:
    """The ``prices`` entries of the file report and the ``pricesNote`` footnote."""
    try:
        from unveil.core import cost, prices

        rows = cost.price_rows(analysis.tokens, prices.shown_models(analysis.settings))
        fmt = cost.format_usd
        note = cost.estimate_note(rows)
    except Exception:  # noqa: BLE001 - a broken price file must not break the report
        log.exception("price table failed")
        return [], None
    out = []
    for r in rows:
        approx = r.approx_usd_per_session is not None
        per_session = r.approx_usd_per_session if approx else r.usd_per_session
        per_invoke = r.approx_usd_per_invoke if approx else r.usd_per_invoke

        def text(x: float) -> str:
            return ("≈" if approx and x else "") + fmt(x)  # noqa: B023 - used in this iteration only

        out.append(
            {
                "model": str(r.model),
                "modelId": r.model_id,
                "inputPerMTok": r.input_per_mtok,
                "usdPerSession": per_session,
                "usdPerInvoke": per_invoke,
                "usdPer1000Sessions": per_session * 1000,
                "approx": approx,
                "tokenRatio": r.token_ratio if approx else None,
                "o200kUsdPerSession": r.usd_per_session,
                "o200kUsdPerInvoke": r.usd_per_invoke,
                "o200kUsdPer1000Sessions": r.usd_per_1000_sessions,
                "text": {
                    "perSession": text(per_session),
                    "perInvoke": text(per_invoke),
                    "per1000Sessions": text(per_session * 1000),
                },
            }
        )
    return out, note


def file_report(analysis: Analysis, uri: str, version: int | None, workspace: dict | None = None) -> dict:
    """The ``unveil/fileReport`` result for one analysed document (see the module docstring)."""
    rep = analysis.tokens
    tokens = None
    if rep is not None:
        tokens = {
            "session": rep.session,
            "invoke": rep.invoke,
            "total": rep.total,
            "body": rep.body,
            "basis": rep.basis,
            "notes": list(rep.notes),
            "sections": [
                {"line": s.line, "level": s.level, "title": s.title, "tokens": s.tokens} for s in rep.sections
            ],
        }
    prices, note = _price_rows(analysis) if rep is not None else ([], None)
    return {
        "uri": uri,
        "version": version,
        "kind": analysis.kind,
        "kindLabel": getattr(rep, "kind_label", None) or analysis.kind,
        "grade": analysis.grade,
        "findings": _severity_counts(analysis),
        "tokens": tokens,
        "prices": prices,
        "pricesNote": note,
        "workspace": workspace,
    }


class WorkspaceTotals:
    """Session/invoke token totals of the agent files under the workspace folders, cached per
    file by ``(mtime_ns, size, settings generation)``."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple, int, int]] = {}

    def compute(self, roots: list[str], settings, generation: int, open_texts: dict[str, str]) -> dict | None:
        """``{"files", "session", "invoke", "truncated"}`` or ``None`` with no folder or no
        tokenizer. Blocking (file I/O and tokenising): run it in a worker thread."""
        from unveil.core.analyze import analyze
        from unveil.core.discovery import collect, read_text
        from unveil.core.kinds import detect_kind

        if not roots or not tokens_mod.ready():
            return None
        files = 0
        session = invoke = 0
        truncated = False
        seen: set[str] = set()
        for shown, path in collect(roots, cwd=Path(roots[0])).files:
            key = str(path)
            if key in seen:
                continue
            seen.add(key)
            try:
                if detect_kind(key) == "markdown":
                    continue
            except Exception:  # noqa: BLE001
                continue
            if files >= WORKSPACE_FILE_LIMIT:
                truncated = True
                break
            files += 1
            text = open_texts.get(key)
            try:
                if text is None:
                    st = os.stat(key)
                    stamp = (st.st_mtime_ns, st.st_size, generation)
                    hit = self._cache.get(key)
                    if hit is not None and hit[0] == stamp:
                        session += hit[1]
                        invoke += hit[2]
                        continue
                    text = read_text(path)
                else:
                    stamp = None
                a = analyze(text, key, settings, count_tokens=True)
            except Exception as exc:  # noqa: BLE001 - one unreadable file must not stop the total
                log.info("workspace total: %s skipped: %s", shown, exc)
                files -= 1
                continue
            s, i = (a.tokens.session, a.tokens.invoke) if a.tokens is not None else (0, 0)
            if stamp is not None:
                self._cache[key] = (stamp, s, i)
            session += s
            invoke += i
        return {"files": files, "session": session, "invoke": invoke, "truncated": truncated}


def _roots(ls) -> list[str]:
    from pygls.uris import to_fs_path

    roots: list[str] = []
    try:
        for folder in (ls.workspace.folders or {}).values():
            p = to_fs_path(folder.uri)
            if p and os.path.isdir(p):
                roots.append(p)
        if not roots and ls.workspace.root_path and os.path.isdir(ls.workspace.root_path):
            roots.append(ls.workspace.root_path)
    except Exception:  # noqa: BLE001
        log.exception("workspace folders unavailable")
    return roots


def register(server) -> None:
    """Add the ``unveil/modelView`` and ``unveil/fileReport`` request handlers to ``server``."""
    from unveil.lsp.registry import safe

    totals = WorkspaceTotals()

    @server.feature(MODEL_VIEW)
    @safe()
    async def on_model_view(ls, params: Any) -> dict | None:
        uri = _uri_of(params)
        got = await ls.get_analysis(uri) if uri else None
        if got is None:
            return None
        analysis, version = got
        return {"uri": uri, "version": version, "text": model_view(analysis, ls.encoding)}

    @server.feature(FILE_REPORT)
    @safe()
    async def on_file_report(ls, params: Any) -> dict | None:
        uri = _uri_of(params)
        got = await ls.get_analysis(uri, with_tokens=True) if uri else None
        if got is None:
            return None
        analysis, version = got
        workspace = None
        if _flag(params, "workspace"):
            open_texts = {}
            for doc in list(ls.workspace.text_documents.values()):
                if doc.path:
                    open_texts[doc.path] = doc.source
            loop = asyncio.get_running_loop()
            workspace = await loop.run_in_executor(
                None, totals.compute, _roots(ls), ls.settings, ls.settings_generation, open_texts
            )
        return file_report(analysis, uri, version, workspace)
