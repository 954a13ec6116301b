"""Token inlay hints: "N tok/session · M tok on invoke" on the summary line, "N tok" per heading,
"+N tok" after each ``@import`` of a CLAUDE.md / GEMINI.md.

The summary line is the first line, or the closing ``---`` fence of the frontmatter when there
is one. Hints sit at the end of the line's content with absolute line numbers (the upstream
pygls example emits range-relative lines, lsp-engineering.md §4.5) and only those inside the
requested range are returned. No hints while the token report is ``None`` (tokenizer loading)
or when ``settings.inlay_hints`` is off.
"""

from __future__ import annotations

from lsprotocol import types

from unveil.core.analyze import Analysis
from unveil.lsp.convert import line_end


def format_tokens(n: int) -> str:
    """A token count with thousands separators: ``12345`` → ``"12,345"``."""
    return f"{int(n):,}"


def short_tokens(n: int) -> str:
    """A token count for an inlay hint, written without any character after which VS Code's word
    wrap may break a line (``editor.wordWrapBreakAfterCharacters``: ``.``, ``,``, ``/`` … — a
    hint like ``1.2k`` or ``1,234`` would be split in a narrow editor): below 10,000 the digits
    (``950``, ``5231``), below 10 million whole thousands (``12k``, ``9999k``), above whole
    millions (``12M``); rounded half up. The exact count is in the tooltip and the hover."""
    n = int(n)
    if n < 10_000:
        return str(n)
    if n < 9_999_500:
        return f"{(n + 500) // 1000}k"
    return f"{(n + 500_000) // 1_000_000}M"


NBSP = "\u00a0"


def unbreakable(label: str) -> str:
    """``label`` with its spaces as U+00A0 NO-BREAK SPACE, so an editor that wraps long lines
    (VS Code with ``editor.wordWrap``) moves the hint whole instead of splitting it between a
    number and its unit."""
    return label.replace(" ", NBSP)


def summary_text(report) -> str:
    """``"N tok/session · M tok on invoke"`` for a ``TokenReport`` (exact counts, for hovers)."""
    return f"{format_tokens(report.session)} tok/session · {format_tokens(report.invoke)} tok on invoke"


def summary_label(report) -> str:
    """The summary inlay hint, ``"N tok per session · M tok on invoke"`` with :func:`short_tokens`
    counts: at most 41 characters (VS Code cuts labels over ``editor.inlayHints.maximumLength``,
    43 by default) and no character a word wrap breaks after ("tok/session" would split at the
    ``/``), so with :func:`unbreakable` spaces the hint always stays whole."""
    return f"{short_tokens(report.session)} tok per session · {short_tokens(report.invoke)} tok on invoke"


def summary_line(analysis: Analysis) -> int:
    """0-based line that carries the file summary: the frontmatter's closing fence, else 0."""
    fm = getattr(analysis.markdown, "frontmatter", None)
    if fm is None or fm.end <= fm.start:
        return 0
    return analysis.doc.line_of(max(fm.start, fm.end - 1))


def _before(a: types.Position, b: types.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def inlay_hints(analysis: Analysis, rng: types.Range | None, encoding: str) -> list[types.InlayHint]:
    """Hints for ``analysis`` inside ``rng`` (inclusive; ``None`` means the whole document),
    positions in ``encoding`` units."""
    report = analysis.tokens
    if report is None or not analysis.settings.inlay_hints:
        return []
    doc = analysis.doc
    wanted: list[tuple[int, str, str | None]] = []
    top = summary_line(analysis)
    tooltip = (summary_text(report) + "\n" + (getattr(report, "basis", None) or "")).strip()
    floor = getattr(analysis.settings, "inlay_hint_min_tokens", 0)
    if getattr(report, "claude_session", None) is not None and getattr(report, "claude_ratio", None):
        tooltip += (
            f"\n≈ Claude (estimate, ×{report.claude_ratio:g}): {format_tokens(report.claude_session)} "
            f"tok/session · {format_tokens(report.claude_invoke)} tok on invoke"
        )
    for section in getattr(report, "sections", ()) or ():
        if section.line == top:
            # One hint per line, and short: VS Code cuts labels longer than
            # editor.inlayHints.maximumLength (43 characters by default), so a heading on the
            # summary line gets its section count in the summary's tooltip, not in the label.
            tooltip += f'\nSection "{section.title}": {format_tokens(section.tokens)} tok'
        elif 0 <= section.line < doc.line_count and section.tokens >= floor:
            wanted.append(
                (
                    section.line,
                    f"{short_tokens(section.tokens)} tok",
                    f'Section "{section.title}": {format_tokens(section.tokens)} tok',
                )
            )
    wanted.append((top, summary_label(report), tooltip.strip() or None))
    hints = []
    seen: set[tuple[int, str]] = set()
    for line, label, tooltip in sorted(wanted, key=lambda w: w[0]):
        if (line, label) in seen or not 0 <= line < doc.line_count:
            continue
        seen.add((line, label))
        pos = line_end(doc, line, encoding)
        if rng is not None and (_before(pos, rng.start) or _before(rng.end, pos)):
            continue
        hints.append(types.InlayHint(position=pos, label=unbreakable(label), padding_left=True, tooltip=tooltip))
    hints.extend(import_hints(analysis, rng, encoding))
    hints.sort(key=lambda h: (h.position.line, h.position.character))
    return hints


def import_hints(analysis: Analysis, rng: types.Range | None, encoding: str) -> list[types.InlayHint]:
    """``"+N tok"`` after each loaded ``@import`` of a CLAUDE.md / GEMINI.md: the o200k tokens the
    imported file (and what it imports) adds to every session."""
    from unveil.lsp.convert import position

    out = []
    for imp in getattr(analysis.tokens, "imports", ()) or ():
        if imp.status != "ok" or not 0 <= imp.end <= len(analysis.doc.text):
            continue
        pos = position(analysis.doc, imp.end, encoding)
        if rng is not None and (_before(pos, rng.start) or _before(rng.end, pos)):
            continue
        out.append(
            types.InlayHint(
                position=pos,
                label=unbreakable(f"+{short_tokens(imp.tokens)} tok"),
                padding_left=True,
                tooltip=f"{imp.path}: {format_tokens(imp.tokens)} tokens every session (with the files it imports)",
            )
        )
    return out


def register(server) -> None:
    from unveil.lsp.registry import safe

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    @safe(default=[])
    async def on_inlay_hint(ls, params: types.InlayHintParams) -> list[types.InlayHint]:
        uri = params.text_document.uri
        got = await ls.get_analysis(uri, with_tokens=True)
        if got is None:
            return []
        analysis, _ = got
        ls.note_served_tokens(uri, analysis.tokens)
        return inlay_hints(analysis, params.range, ls.encoding)
