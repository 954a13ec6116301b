"""Finding fingerprints: one stable identity per finding that survives moving text around.

The one fingerprint function of unveil. The review lock (:mod:`unveil.core.lock`), baselines
(:mod:`unveil.core.baseline`), SARIF ``partialFingerprints`` (:mod:`unveil.reporters.sarif`) and
``--format github`` all use it, so a finding has the same identity everywhere.

A fingerprint hashes, and only hashes:

1. the rule id (``"HID001"``);
2. the file's path relative to the repository (or scan) root, ``/``-separated;
3. the matched evidence — the finding's span of the analysed text, ``text[start:end]`` — in its
   :func:`evidence_key` form: every invisible code point (general categories Cc, Cf, Co, Cn,
   Cs, Zl, Zp, and every Default_Ignorable_Code_Point or Bidi_Control) written as ``U+XXXX``,
   then every run of whitespace (tab, LF, CR, space and the Zs spaces) collapsed to one space
   and the ends trimmed;
4. an occurrence number when the same rule, path and evidence occur more than once in a file
   (the first is 1), so two identical hidden comments are two findings.

Never a line or column number: inserting lines above a finding leaves its fingerprint unchanged;
changing the hidden payload changes it. Because invisible characters are escaped *before*
whitespace is collapsed, replacing a zero-width space by another invisible character changes
the fingerprint, while re-wrapping a paragraph does not.

Format: ``"v1:"`` + the first 32 hex digits (128 bits) of SHA-256 over the UTF-8 bytes of
``"unveil-fingerprint-v1\\0<rule>\\0<path>\\0<evidence key>\\0<occurrence>"``. The ``v1`` names
this recipe; a future recipe gets a new prefix so old baselines are told apart, never silently
mismatched. Source of the whitespace/invisible definitions: Unicode 17 properties via the
``regex`` module (as in :mod:`unveil.core.checks.unicode`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import regex

VERSION = "v1"
SARIF_KEY = "unveilFingerprint/v1"
"""Key under which SARIF ``result.partialFingerprints`` carries :func:`fingerprint`."""

_INVISIBLE = regex.compile(
    r"[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}--[\t\n\r ]]",
    regex.V1,
)
_SPACE = regex.compile(r"[\t\n\r\p{Zs}]+")


def escape_invisible(text: str) -> str:
    """``text`` with every invisible code point (see the module docstring) written as
    ``U+XXXX`` (4–6 upper-case hex digits). Tab, LF, CR and space are kept as they are."""
    return _INVISIBLE.sub(lambda m: f"U+{ord(m.group()):04X}", text)


def evidence_key(text: str) -> str:
    """The normalised evidence: :func:`escape_invisible`, then whitespace runs collapsed to one
    space and the ends trimmed. ``evidence_key("a\\u200b  b\\n")`` is ``"aU+200B b"``."""
    return _SPACE.sub(" ", escape_invisible(text)).strip(" ")


def fingerprint(rule: str, path: str, evidence: str, occurrence: int = 1) -> str:
    """The fingerprint of one finding (see the module docstring for the recipe). ``path`` is
    relative and ``/``-separated; ``evidence`` is the raw matched text (it is normalised here).
    Returns ``"v1:"`` + 32 lower-case hex digits."""
    path = path.replace("\\", "/")
    payload = "\0".join(("unveil-fingerprint-v1", rule, path, evidence_key(evidence), str(occurrence)))
    digest = hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{VERSION}:{digest[:32]}"


def evidence_of(text: str, finding) -> str:
    """The matched evidence of ``finding`` in ``text``: ``text[start:end]``; for an empty span
    (a finding about the whole file), the finding's ``hidden_text`` or else its message."""
    ev = text[finding.start : finding.end]
    if ev:
        return ev
    return finding.hidden_text if finding.hidden_text is not None else finding.message


def fingerprints(text: str, findings: Sequence, path: str) -> list[str]:
    """The fingerprint of each finding of one file, in the order given. ``text`` is the analysed
    text, ``path`` the file's relative path. Equal (rule, evidence) pairs are numbered in order
    of position (start, end), so the numbering does not depend on the order of ``findings``."""
    order = sorted(range(len(findings)), key=lambda i: (findings[i].start, findings[i].end, findings[i].rule))
    seen: dict[tuple[str, str], int] = {}
    out: list[str] = [""] * len(findings)
    for i in order:
        f = findings[i]
        key = evidence_key(evidence_of(text, f))
        n = seen.get((f.rule, key), 0) + 1
        seen[(f.rule, key)] = n
        out[i] = fingerprint(f.rule, path, key, n)
    return out


def analysis_fingerprints(analysis, path: str) -> list[str]:
    """:func:`fingerprints` of an :class:`unveil.core.analyze.Analysis` (``analysis.text`` and
    ``analysis.findings``)."""
    return fingerprints(analysis.text, analysis.findings, path)


def by_fingerprint(analysis, path: str) -> dict[str, object]:
    """``{fingerprint: finding}`` for an analysis."""
    return dict(zip(analysis_fingerprints(analysis, path), analysis.findings))
