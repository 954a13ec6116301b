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
* Paths that could not be read are ``toolExecutionNotifications`` of the invocation, whose
  ``executionSuccessful`` is then false.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Iterable
from urllib.parse import quote

from unveil import __version__
from unveil.core.findings import Severity
from unveil.core.rules import Rule, bundled_rules
from unveil.reporters.common import FileResult, no_lone_surrogates, printable, span

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/unveil-lsp/unveil"
SRCROOT = "%SRCROOT%"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note", Severity.HINT: "note"}


def level(severity: Severity) -> str:
    """SARIF ``level`` for a severity (info and hint become ``note``)."""
    return _LEVEL[Severity.parse(severity)]


def rule_descriptor(rule: Rule) -> dict:
    """A ``reportingDescriptor`` for one bundled rule."""
    full = rule.description.strip() or rule.summary
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full, "markdown": full},
        "helpUri": rule.doc_url,
        "help": {"text": f"{rule.summary} See {rule.doc_url}", "markdown": full},
        "defaultConfiguration": {"level": level(rule.severity)},
        "properties": {"category": rule.category, "tags": ["security", rule.category]},
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
        for f in r.analysis.findings:
            if f.rule not in index:
                index[f.rule] = len(descriptors)
                descriptors.append(
                    {
                        "id": f.rule,
                        "shortDescription": {"text": f"{f.category} finding"},
                        "defaultConfiguration": {"level": level(f.severity)},
                        "properties": {"category": f.category, "tags": [f.category]},
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
                "properties": {"category": f.category, "severity": f.severity.label},
            }
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
                {"level": "warning", "message": {"text": f"project configuration {a['path']} turns off or lowers: "
                                                         + "; ".join(a["effects"])}})
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
    return json.dumps(log, ensure_ascii=False, indent=2) + "\n"
