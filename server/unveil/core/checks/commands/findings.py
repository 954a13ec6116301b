"""Hits become findings: :func:`finalize` (one finding per rule per range, the origin in the
message and ``data``) and :func:`command_findings`, the entry point that parses a string and
judges it (used by :mod:`.locate`, :mod:`.frontmatter` and the decoder layer)."""

from __future__ import annotations

import logging

from unveil.core import shell
from unveil.core.checks.commands.hits import Hit
from unveil.core.checks.commands.judge import judge_script
from unveil.core.checks.commands.snippets import judge_snippet
from unveil.core.checks.commands.vocabulary import CATEGORY, COMBO, RULE_TRUNCATED
from unveil.core.findings import Finding, Severity
from unveil.core.incremental import relocatable
from unveil.core.shell import OffsetMap, Snippet

log = logging.getLogger(__name__)


def finalize(hits: list[Hit], origin: str, hidden: bool = False) -> list[Finding]:
    """Hits → findings: one per rule per range (the outermost of nested same-rule hits, at the
    highest severity among them)."""
    hits = sorted(hits, key=lambda h: (h.start, -(h.end - h.start), h.severity))
    kept: list[Hit] = []
    for h in hits:
        if h.end <= h.start:
            h.end = h.start + 1
        if hidden and h.severity > Severity.ERROR and h.rule != RULE_TRUNCATED:
            h.severity = Severity(h.severity - 1)
        dup = next((k for k in kept if k.rule == h.rule and k.start <= h.start and h.end <= k.end), None)
        if dup is not None:
            if h.severity < dup.severity:
                dup.severity = h.severity
                dup.message = h.message
            continue
        kept.append(h)
    out = []
    label = {
        "hook": "hook command",
        "bang": "!-command (runs when invoked)",
        "config": "frontmatter command",
        "permission": "allowed-tools pattern",
        "code": "",
        "decoded": "decoded payload",
        "hidden": "hidden text",
    }.get(origin, origin)
    for h in kept:
        cat = CATEGORY[h.rule]
        msg = h.message + (f" [{label}]" if label else "")
        data = {"region": origin, "origin": origin, "parsed": True, **h.facts}
        if cat in COMBO:
            data["combo"] = COMBO[cat]
        out.append(Finding(h.rule, h.severity, h.start, h.end, msg, category=cat, data=data))
    return out


def command_findings(
    text: str, base_offset: int | OffsetMap = 0, origin: str = "decoded", language: str = "shell"
) -> list[Finding]:
    """Parse ``text`` as shell (or, with ``language="python"``/``"javascript"``, as a snippet)
    and judge it. ``base_offset``: code-point offset of ``text`` in the document (or an
    :class:`~unveil.core.shell.OffsetMap` for text assembled from several places); ``origin``:
    where it was found (``code``, ``hook``, ``bang``, ``config``, ``permission``, ``decoded``,
    ``hidden``; ``hidden`` and ``decoded`` raise each finding one step). Never raises."""
    try:
        omap = base_offset if isinstance(base_offset, OffsetMap) else OffsetMap.at(base_offset)
        base, shape = omap.relative()
        return relocatable(
            "commands", (text, shape, origin, language), base, lambda: _judged(text, omap, origin, language), _moved
        )
    except ImportError:
        raise  # tree-sitter missing: analyze() reports UNV001 (this check did not run) instead of silence
    except Exception as exc:  # noqa: BLE001 - one bad string never stops the analysis
        log.warning("command judgement failed: %s", exc, exc_info=True)
        return []


def _judged(text: str, omap: OffsetMap, origin: str, language: str) -> list[Finding]:
    if language == "shell":
        hits = judge_script(shell.parse(text, omap), origin)
    else:
        hits = judge_snippet(Snippet(language, text, omap, "fence"), origin, judge_script)
    return finalize(hits, origin, hidden=origin in ("hidden", "decoded"))


def _moved(f: Finding, d: int) -> Finding:
    """``f`` moved by ``d`` code points (command findings carry no fixes or related places)."""
    return f.with_(start=f.start + d, end=f.end + d, data=dict(f.data))
