"""``unveil check --format sarif``: a SARIF 2.1.0 log (OASIS, errata 01 schema).

* One run; ``tool.driver`` is ``unveil`` with its version, information URI and every bundled
  rule (id, name, short and full description, help URI, default level, category tag). A finding
  whose rule is not bundled (``UNV001``, a check that crashed) gets a rule entry of its own.
* ``run.columnKind`` is ``"unicodeCodePoints"``: ``startColumn``/``endColumn`` count code
  points, 1-based, end exclusive — the same numbers as the text and JSON formats. (SARIF's
  default is ``utf16CodeUnits``; setting ``columnKind`` keeps one convention across formats.)
* Locations are relative URIs against ``%SRCROOT%`` (the working directory, given in
  ``originalUriBaseIds``); a file outside it gets an absolute ``file:`` URI.
* Levels: error → ``error``, warning → ``warning``, info and hint → ``note``.
* ``partialFingerprints`` carries :func:`unveil.core.fingerprint.fingerprint` under
  ``unveilFingerprint/v1`` (rule, relative path and normalised evidence; no line numbers, so the
  value survives moving text); ``baselineState`` is set when ``check --baseline`` ran.
* Each rule embeds its help (``help.text`` / ``help.markdown``: summary, description, one
  example of each kind in a fenced block) and ``properties.tags`` (``security`` and the
  category) and ``properties.security-severity`` (:func:`security_severity`), which GitHub code
  scanning uses to rank security results; results carry the same, from their own severity.
* Paths that could not be read are ``toolExecutionNotifications`` of the invocation, whose
  ``executionSuccessful`` is then false.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Iterable
from urllib.parse import quote

from unveil import __version__
from unveil.core.findings import Severity
from unveil.core.fingerprint import SARIF_KEY, analysis_fingerprints
from unveil.core.rules import Rule, bundled_rules
from unveil.reporters.common import FileResult, json_text, no_lone_surrogates, printable, span

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/unveil-lsp/unveil"
SRCROOT = "%SRCROOT%"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def level(severity: Severity) -> str:
    """SARIF ``level`` for a severity (info and hint become ``note``)."""
    return _LEVEL[Severity.parse(severity)]


SECURITY_SEVERITY = {Severity.ERROR: 7.0, Severity.WARNING: 5.0, Severity.INFO: 3.0, Severity.HINT: 1.0}
"""``properties.security-severity`` by default severity (GitHub code scanning: ≥ 9.0 critical,
7.0–8.9 high, 4.0–6.9 medium, 0.1–3.9 low)."""

HIGH_IMPACT = frozenset(
    {
        "hidden-content",
        "data-exfiltration",
        "secrets",
        "privilege-escalation",
        "prompt-injection",
        "supply-chain",
        "persistence",
        "concealment",
    }
)
"""Categories whose findings get +1.5 security-severity: the agent acts on hidden text, or
secrets, code or permissions are at stake."""

NOT_SECURITY = frozenset({"format", "cost", "imports", "internal"})
"""Categories that are not security results: no ``security`` tag, no security-severity."""


def security_severity(severity: Severity, category: str) -> str | None:
    """``properties.security-severity`` (a decimal string, GitHub's format) or ``None`` for a
    non-security category."""
    if category in NOT_SECURITY:
        return None
    score = SECURITY_SEVERITY[Severity.parse(severity)] + (1.5 if category in HIGH_IMPACT else 0.0)
    return f"{min(score, 9.5):.1f}"


def tags(category: str) -> list[str]:
    """``properties.tags``: ``security`` (unless :data:`NOT_SECURITY`) and the category."""
    return [category] if category in NOT_SECURITY else ["security", category]


def _help(rule: Rule) -> dict:
    """``help.text`` / ``help.markdown``: the summary, the description and the first example
    of each kind (there is no public docs URL to link). Examples are fenced code blocks
    (:func:`unveil.core.inert.code_block`), so attack strings in them never render."""
    from unveil.core.inert import code_block

    text = [rule.summary]
    md = [rule.summary]
    if rule.description.strip():
        text.append(rule.description.strip())
        md.append(rule.description.strip())
    for title, examples in (("Fires on", rule.bad), ("Stays quiet on", rule.good)):
        if examples:
            text.append(f"{title}:\n" + "\n".join("    " + line for line in examples[0].text.rstrip("\n").split("\n")))
            md.append(f"{title}:\n\n" + code_block(examples[0].text))
    text.append(f"Category: {rule.category}. Default severity: {rule.severity.label}.")
    md.append(f"Category: `{rule.category}`. Default severity: {rule.severity.label}.")
    return {"text": no_lone_surrogates("\n\n".join(text)), "markdown": no_lone_surrogates("\n\n".join(md))}


def rule_descriptor(rule: Rule) -> dict:
    """A ``reportingDescriptor`` for one bundled rule: help embedded, tags and security-severity."""
    full = rule.description.strip() or rule.summary
    props: dict = {"category": rule.category, "tags": tags(rule.category)}
    sec = security_severity(rule.severity, rule.category)
    if sec is not None:
        props["security-severity"] = sec
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full, "markdown": full},
        "helpUri": rule.doc_url,
        "help": _help(rule),
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": props,
    }


def _uri(path: str) -> tuple[str, str | None]:
    """``(uri, uriBaseId)`` for a displayed path."""
    p = Path(path)
    if p.is_absolute():
        return p.as_uri(), None
    # undecodable file-name bytes (surrogateescape) are percent-encoded as the original bytes
    return quote(PurePosixPath(*p.parts).as_posix(), safe="/", errors="surrogateescape"), SRCROOT


def _related_location(index: int, rel: tuple) -> dict:
    """A SARIF ``location`` for one ``Finding.related`` entry (1-based, code-point columns)."""
    path, sl, sc, el, ec, message = rel
    uri, base = _uri(display_related(path))
    artifact = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    return {
        "id": index,
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": {"startLine": sl + 1, "startColumn": sc + 1, "endLine": el + 1, "endColumn": ec + 1},
        },
        "message": {"text": no_lone_surrogates(message)},
    }


def display_related(path: str) -> str:
    """A related file's path relative to the working directory when inside it, else absolute."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path


def render(
    results: Iterable[FileResult],
    notifications: Iterable[str] = (),
    root: str | os.PathLike | None = None,
) -> str:
    """The SARIF log as JSON text. ``root`` is the folder relative paths are relative to
    (default: the working directory); ``notifications`` are messages about unreadable paths."""
    results = list(results)
    notes = [printable(no_lone_surrogates(n)) for n in notifications]
    descriptors = [rule_descriptor(r) for r in bundled_rules()]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    out_results = []
    for r in results:
        uri, base = _uri(r.path)
        artifact = {"uri": uri}
        if base:
            artifact["uriBaseId"] = base
        fps = iter(analysis_fingerprints(r.analysis, r.path))
        for f in r.analysis.findings:
            if f.rule not in index:
                index[f.rule] = len(descriptors)
                descriptors.append(
                    {
                        "id": f.rule,
                        "shortDescription": {"text": f"{f.category} finding"},
                        "defaultConfiguration": {"level": level(f.severity)},
                        "properties": {"category": f.category, "tags": tags(f.category)},
                    }
                )
            s = span(r.analysis, f)
            result = {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": level(f.severity),
                # messages of user rules and names from user price/rule files are escaped
                # (printable): a terminal or log viewer never runs an escape sequence from them
                "message": {"text": printable(no_lone_surrogates(f.message)) or f.rule},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": dict(artifact),
                            "region": {
                                "startLine": s.line,
                                "startColumn": s.column,
                                "endLine": s.end_line,
                                "endColumn": s.end_column,
                            },
                        }
                    }
                ],
                "properties": {"category": f.category, "severity": f.severity.label, "tags": tags(f.category)},
            }
            result["partialFingerprints"] = {SARIF_KEY: next(fps)}  # stable across line moves
            if isinstance(f.data, dict) and f.data.get("baselineState"):
                result["baselineState"] = f.data["baselineState"]
            sec = security_severity(f.severity, f.category)
            if sec is not None:
                result["properties"]["security-severity"] = sec
            if f.hidden_text is not None:
                result["properties"]["hiddenText"] = no_lone_surrogates(f.hidden_text)
            if f.related:
                result["relatedLocations"] = [_related_location(i, rel) for i, rel in enumerate(f.related)]
            out_results.append(result)
    base_dir = Path(root) if root is not None else Path.cwd()
    base_uri = base_dir.resolve().as_uri()
    if not base_uri.endswith("/"):
        base_uri += "/"
    invocation: dict = {"executionSuccessful": not notes}
    if notes:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": n}} for n in notes]
    from unveil.reporters.common import config_summary

    config = config_summary(results)
    if config["isolated"] or config["applied"]:
        invocation["properties"] = {"config": config}
    for a in config["applied"]:  # a scanned repository's own configuration never blinds silently
        if a["effects"]:
            invocation.setdefault("toolExecutionNotifications", []).append(
                {
                    "level": "warning",
                    "message": {
                        "text": f"project configuration {a['path']} turns off or lowers: " + "; ".join(a["effects"])
                    },
                }
            )
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "unveil",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "invocations": [invocation],
                "originalUriBaseIds": {SRCROOT: {"uri": base_uri}},
                "columnKind": "unicodeCodePoints",
                "results": out_results,
            }
        ],
    }
    return json_text(log) + "\n"
