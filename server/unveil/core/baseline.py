"""Baselines: adopt unveil in a repository that already has findings.

``unveil baseline write FILE`` records the fingerprint (:mod:`unveil.core.fingerprint`) of every
current finding; ``unveil check --baseline FILE`` then reports findings whose fingerprint is in
the baseline as known (SARIF ``baselineState: "unchanged"``; they never fail the run), new ones as
new (they fail as usual), and baseline entries no finding matches any more as stale (for files scanned in
this run or no longer on disk; reported on stderr, they do not fail). Matching is by fingerprint, never by
line, so inserting lines above a finding keeps it known.

File format (JSON, sorted keys, indent 2, LF)::

    {"version": 1,
     "findings": {"v1:<32 hex>": {"path": "CLAUDE.md", "rule": "HID002", "severity": "warning",
                                  "message": "…"}}}

Errors: :class:`BaselineError` for a file that cannot be read or parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from unveil.core import fingerprint as fp_mod

FORMAT_VERSION = 1
KNOWN = "unchanged"
NEW = "new"
KNOWN_SUFFIX = " [known: in baseline]"
"""Appended to the message of a known finding, so every output format shows it."""


class BaselineError(Exception):
    """The baseline file is missing, unreadable or not a baseline."""


def build(results: Iterable) -> dict:
    """The baseline document for ``results`` (objects with ``path`` — the relative path findings
    are fingerprinted with — and ``analysis``)."""
    findings = {}
    for r in results:
        for fp, f in zip(fp_mod.analysis_fingerprints(r.analysis, r.path), r.analysis.findings):
            findings[fp] = {
                "path": r.path,
                "rule": f.rule,
                "severity": f.severity.label,
                "message": f.message.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
            }
    return {"version": FORMAT_VERSION, "findings": findings}


def dumps(doc: dict) -> str:
    """Baseline JSON text (sorted keys, indent 2, final LF)."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def load(path: str | Path) -> dict:
    """Read a baseline file. Raises :class:`BaselineError` naming the file and the problem."""
    p = Path(path)
    try:
        data = json.loads(p.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (write one with `unveil baseline write {path}`)") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{path}: not a valid baseline file ({exc})") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != FORMAT_VERSION
        or not isinstance(data.get("findings"), dict)
    ):
        raise BaselineError(f"{path}: not a valid baseline file (expected version {FORMAT_VERSION} and `findings`)")
    return data


@dataclass
class Applied:
    """The outcome of :func:`apply`: counts and the stale entries (fingerprint → entry)."""

    known: int = 0
    new: int = 0
    stale: dict = field(default_factory=dict)


def apply(results: list, doc: dict) -> Applied:
    """Mark every finding of ``results`` (mutated in place: ``r.analysis.findings`` is replaced)
    with ``data["baselineState"]`` = ``"unchanged"`` (in the baseline) or ``"new"``, and its
    fingerprint in ``data["fingerprint"]``. Returns the counts and stale entries."""
    entries = doc.get("findings") or {}
    seen: set[str] = set()
    out = Applied()
    for r in results:
        fps = fp_mod.analysis_fingerprints(r.analysis, r.path)
        marked = []
        for fp, f in zip(fps, r.analysis.findings):
            state = KNOWN if fp in entries else NEW
            if state == KNOWN:
                seen.add(fp)
                out.known += 1
            else:
                out.new += 1
            changes = {"data": {**f.data, "baselineState": state, "fingerprint": fp}}
            if state == KNOWN:
                changes["message"] = f.message + KNOWN_SUFFIX
            marked.append(f.with_(**changes))
        r.analysis.findings = marked
    scanned = {r.path for r in results}
    out.stale = {
        k: v
        for k, v in sorted(entries.items())
        if k not in seen and (v.get("path") in scanned or not Path(str(v.get("path", ""))).exists())
    }
    return out


def is_known(finding) -> bool:
    """Whether :func:`apply` marked ``finding`` as present in the baseline."""
    return isinstance(finding.data, dict) and finding.data.get("baselineState") == KNOWN
