#!/usr/bin/env python3
"""Accuracy of unveil on ``../shared/corpus`` (issue 2 "Tests and figures", issue 3 "Reference and proof").

Runs :func:`unveil.core.analyze.analyze` over the labelled corpus and prints, per category and overall:

(a) ``synthetic/LABELS.tsv``: every labelled case must get a finding of its category starting on the
    labelled 1-based line at warning or above. The corpus's label names are mapped to unveil
    categories by :data:`SYNTHETIC_CATEGORY` (hidden-content cases need ``hidden-content``; risky
    ones need their issue-3 category, never hidden-content, format or cost).
(b) ``malicious/PROVENANCE.tsv``: every ``positive`` row whose technique is hidden-content-like
    (:data:`HIDDEN_TECHNIQUE`) must get a hidden-content finding anywhere in the file; and every line
    label of ``tests/data/malicious-labels.tsv`` (ours: file, category, line, note, min_severity)
    must be found like (a), at its ``min_severity`` (default warning). Rows labelled
    ``none-in-text`` (payload only in scripts outside the corpus) are excluded with their reason.
(c) Hard negatives (LABELS category ``none``) and ``negative-control`` rows: no error-level finding.
(d) Benign corpus (``benign/MANIFEST.tsv``): share of files with any error (target < 1 %), share with
    a hidden-content error, and the top 10 rules firing at error and at warning with counts and examples.

A per-category table sums (a) and (b); each category with labelled cases is a target (recall 100 %).

(e) The adversarial mutation suite (``tests/adversarial/mutate.py``): per mutation class of issue 8,
the share of labelled positives still found at warning or error on the payload's line, against the
floors of ``tests/adversarial/floors.toml``; and the errors that structural mutations of 50 benign
files create (target: none). Skipped with ``--skip-benign`` or ``--skip-mutations``.

Files are read as bytes and decoded as UTF-8 with ``surrogateescape`` (undecodable bytes reach the
checks as lone surrogates); each is analysed under the path it has in its source repository so the
file kind is detected as in real use. Token counting is skipped (it does not affect findings).

Usage (from the repository root)::

    python scripts/accuracy.py                 # print, write docs/accuracy.md + benchmarks/accuracy.json
    python scripts/accuracy.py --no-write      # print only
    python scripts/accuracy.py --corpus /path/to/corpus --jobs 2
    python scripts/accuracy.py --skip-benign --no-write   # labelled sets only, about a second

Exit status: 0 when every target of issues 2 and 3 is met (per-category recall 100 %, no error on
negatives, benign error share < 1 % unless --skip-benign), 1 when one is missed, 2 when the corpus is
missing or unreadable.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"

sys.path.insert(0, str(ROOT / "tests" / "adversarial"))
from corpus_labels import MALICIOUS_LABELS, RISKY_LABEL_CATEGORY, read_tsv  # tests/adversarial/corpus_labels.py

#: LABELS.tsv categories that are hidden content (must be found, category ``hidden-content``).
HIDDEN_LABELS = frozenset(
    {
        "hidden-unicode-tags",
        "zero-width-obfuscation",
        "bidi-override",
        "html-comment-directive",
        "md-reference-comment",
        "homoglyph",
    }
)

#: PROVENANCE.tsv techniques that hide content (ASCII smuggling with tag characters, gremlin
#: characters, Trojan Source bidi, zero-width...), matched case-insensitively.
HIDDEN_TECHNIQUE = re.compile(
    r"smuggl|gremlin|zero.?width|invisible|bidi|trojan|tag char|homoglyph|confusable|hidden|html comment",
    re.I,
)

#: The synthetic cases name the agent file kind they imitate in their note ("[skill] ...").
#: Each is analysed under a path of that kind; {stem} is the file name without ".md".
SYNTHETIC_KIND_PATHS = {
    "skill": ".claude/skills/{stem}/SKILL.md",
    "claude-agent": ".claude/agents/{stem}.md",
    "claude-command": ".claude/commands/{stem}.md",
    "claude-md": "CLAUDE.md",
    "agents-md": "AGENTS.md",
    "cursor-rule": ".cursor/rules/{stem}.mdc",
    "windsurf-rules": ".windsurf/rules/{stem}.md",
    "copilot-instructions": ".github/copilot-instructions.md",
    "instructions": ".github/instructions/{stem}.instructions.md",
    "prompt": ".github/prompts/{stem}.prompt.md",
}

#: LABELS.tsv categories (the corpus's own names) → unveil rule categories (issue 3).
SYNTHETIC_CATEGORY = {**{c: "hidden-content" for c in HIDDEN_LABELS}, **RISKY_LABEL_CATEGORY}

#: :data:`MALICIOUS_LABELS` (tests/adversarial/corpus_labels.py), our own line labels for the
#: ``positive`` rows of ``malicious/PROVENANCE.tsv``: category ``none-in-text`` means no risky text in
#: the file itself (payload in scripts outside the corpus), excluded from recall with the note as the reason.

#: Categories a finding may not have to count for a risky (non-hidden) label.
NOT_RISKY = frozenset({"hidden-content", "format", "cost", "internal", "imports"})

BENIGN_ERROR_SHARE_TARGET = 0.01  # issue 2: "fewer than 1% of benign files get any error"

SEVERITY_RANK = {"error": 1, "warning": 2, "info": 3, "hint": 4}


# --------------------------------------------------------------------------- input


def synthetic_kind_path(file: str, note: str) -> str:
    """The path a synthetic case is analysed under, from the ``[kind]`` tag of its note."""
    m = re.match(r"\s*\[([^\]]+)\]", note or "")
    stem = file[:-3] if file.endswith(".md") else file
    template = SYNTHETIC_KIND_PATHS.get(m.group(1)) if m else None
    return template.format(stem=stem) if template else file


# --------------------------------------------------------------------------- worker


def scan(job: tuple[str, str, str]) -> tuple[str, dict]:
    """Analyse one file (runs in a worker process).

    ``job`` is ``(key, file on disk, path to analyse it under)``. Returns ``(key, result)`` where
    ``result`` has ``kind``, ``bytes``, ``seconds`` (analysis time) and ``findings`` (dicts with
    rule, category, severity label, 1-based line and code-point column, message), or ``crash``
    (a string) when reading or analysing raised.
    """
    key, disk_path, kind_path = job
    try:
        from unveil.core.analyze import analyze
        from unveil.core.findings import Severity

        data = Path(disk_path).read_bytes()
        text = data.decode("utf-8", "surrogateescape")
        t0 = time.perf_counter()
        result = analyze(text, kind_path, count_tokens=False)
        seconds = time.perf_counter() - t0
        findings = []
        for f in result.findings:
            pos = result.doc.position(f.start)
            findings.append(
                {
                    "rule": f.rule,
                    "category": f.category,
                    "severity": Severity(f.severity).label,
                    "line": pos.line + 1,
                    "column": pos.character + 1,
                    "message": f.message if len(f.message) <= 240 else f.message[:237] + "...",
                }
            )
        return key, {"kind": result.kind, "bytes": len(data), "seconds": seconds, "findings": findings}
    except Exception as exc:  # noqa: BLE001 - report, never stop the run
        return key, {"crash": f"{type(exc).__name__}: {exc}", "findings": []}


def run_jobs(jobs: list[tuple[str, str, str]], workers: int) -> dict[str, dict]:
    """Scan every job with a process pool of ``workers`` (largest files first for balance)."""
    jobs = sorted(jobs, key=lambda j: -os.path.getsize(j[1]) if os.path.exists(j[1]) else 0)
    if workers <= 1:
        return dict(scan(j) for j in jobs)
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(scan, jobs, chunksize=8))


# --------------------------------------------------------------------------- figures


def _has_error(res: dict) -> bool:
    return bool(res.get("crash")) or any(f["severity"] == "error" for f in res["findings"])


def _brief(f: dict) -> str:
    return f"{f['rule']} {f['severity']} L{f['line']}:{f['column']}"


def _grouped(findings: list[dict], max_lines: int = 4) -> list[str]:
    """Findings summarised per rule and severity: "HID002 warning ×3 L3:6, L3:18, L9:1"."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f in findings:
        groups.setdefault((f["rule"], f["severity"]), []).append(f"L{f['line']}:{f['column']}")
    out = []
    for (rule, sev), where in groups.items():
        more = f", +{len(where) - max_lines} more" if len(where) > max_lines else ""
        count = f" ×{len(where)}" if len(where) > 1 else ""
        out.append(f"{rule} {sev}{count} {', '.join(where[:max_lines])}{more}")
    return out


def _matching(findings: list[dict], category: str, line: int, min_severity: str = "warning") -> list[dict]:
    """Findings that count for a labelled case: the label's unveil category (a risky label never
    matches a hidden-content, format, cost or internal finding), starting on the 1-based ``line``,
    at ``min_severity`` or above."""
    if category != "hidden-content" and category in NOT_RISKY:
        return []
    rank = SEVERITY_RANK[min_severity]
    return [
        f for f in findings if f["category"] == category and f["line"] == line and SEVERITY_RANK[f["severity"]] <= rank
    ]


def synthetic_figures(corpus: Path, results: dict[str, dict]) -> dict:
    """Figure (a) and the hard-negative half of (c)."""
    rows = read_tsv(corpus / "synthetic" / "LABELS.tsv")
    hidden, risky, negatives = [], [], []
    for row in rows:
        file, cat, line_s = row["file"], row["expected_category"], row["expected_line"]
        res = results.get(f"synthetic/{file}")
        if res is None:
            res = {"crash": "file missing", "findings": []}
        if cat == "none":
            errors = [f for f in res["findings"] if f["severity"] == "error"]
            negatives.append(
                {
                    "file": f"synthetic/{file}",
                    "source": "LABELS none",
                    "errors": [_brief(f) + " " + f["message"] for f in errors],
                    "crash": res.get("crash"),
                    "findings": _grouped(res["findings"]),
                    "ok": not _has_error(res),
                }
            )
            continue
        line = int(line_s)
        unveil_cat = SYNTHETIC_CATEGORY.get(cat, cat)
        match = _matching(res["findings"], unveil_cat, line, "warning")
        bucket = hidden if cat in HIDDEN_LABELS else risky
        bucket.append(
            {
                "file": file,
                "category": cat,
                "unveil_category": unveil_cat,
                "line": line,
                "found": bool(match),
                "matched": _grouped(match),
                "elsewhere": _grouped([f for f in res["findings"] if f not in match]),
                "crash": res.get("crash"),
            }
        )
    return {"hidden": hidden, "risky": risky, "negatives": negatives}


def malicious_figures(corpus: Path, results: dict[str, dict]) -> dict:
    """Figure (b), the negative-control half of (c), and the edge rows (informational)."""
    rows = read_tsv(corpus / "malicious" / "PROVENANCE.tsv")
    hidden, other, negatives, edge = [], [], [], []
    for row in rows:
        label = row["label"].strip()
        if label.startswith("metadata"):
            continue
        key = f"malicious/{row['local_file']}"
        res = results.get(key, {"crash": "file missing", "findings": []})
        findings = res["findings"]
        entry = {"file": key, "technique": row["technique"], "crash": res.get("crash")}
        if label == "positive" and HIDDEN_TECHNIQUE.search(row["technique"]):
            match = [f for f in findings if f["category"] == "hidden-content"]
            entry.update(found=bool(match), matched=_grouped(match))
            hidden.append(entry)
        elif label == "positive":
            match = [f for f in findings if SEVERITY_RANK[f["severity"]] <= 2]
            entry.update(found=bool(match), matched=_grouped(match))
            other.append(entry)
        elif label == "negative-control":
            errors = [f for f in findings if f["severity"] == "error"]
            entry.update(
                source="negative-control",
                errors=[_brief(f) + " " + f["message"] for f in errors],
                findings=_grouped(findings),
                ok=not _has_error(res),
            )
            negatives.append(entry)
        else:
            entry.update(label=label, findings=_grouped(findings))
            edge.append(entry)
    return {"hidden": hidden, "other": other, "negatives": negatives, "edge": edge}


def malicious_label_figures(results: dict[str, dict], labels_path: Path = MALICIOUS_LABELS) -> dict:
    """Our line labels for the malicious positives (:data:`MALICIOUS_LABELS`): per label, whether a
    finding of its category starts on its line at its ``min_severity`` (default warning) or above;
    ``none-in-text`` rows are returned as ``excluded`` with their reason."""
    cases, excluded = [], []
    if not labels_path.is_file():
        return {"cases": cases, "excluded": excluded, "missing": str(labels_path)}
    for row in read_tsv(labels_path):
        key = f"malicious/{row['file']}"
        if row["category"] == "none-in-text":
            excluded.append({"file": key, "reason": row["note"]})
            continue
        res = results.get(key, {"crash": "file missing", "findings": []})
        line = int(row["line"])
        min_sev = (row.get("min_severity") or "").strip() or "warning"
        match = _matching(res["findings"], row["category"], line, min_sev)
        on_line = [f for f in res["findings"] if f["line"] == line]
        cases.append(
            {
                "file": key,
                "category": row["category"],
                "line": line,
                "min_severity": min_sev,
                "note": row["note"],
                "found": bool(match),
                "matched": _grouped(match),
                "on_line": _grouped(on_line),
                "crash": res.get("crash"),
            }
        )
    return {"cases": cases, "excluded": excluded}


def per_category(syn: dict, mlab: dict) -> dict[str, dict]:
    """Category → {"synthetic": [found, total], "malicious": [found, total]} over the labelled cases."""
    table: dict[str, dict] = {}
    for c in syn["hidden"] + syn["risky"]:
        t = table.setdefault(c["unveil_category"], {"synthetic": [0, 0], "malicious": [0, 0]})
        t["synthetic"][0] += c["found"]
        t["synthetic"][1] += 1
    for c in mlab["cases"]:
        t = table.setdefault(c["category"], {"synthetic": [0, 0], "malicious": [0, 0]})
        t["malicious"][0] += c["found"]
        t["malicious"][1] += 1
    return dict(sorted(table.items()))


def benign_figures(corpus: Path, results: dict[str, dict], examples: int = 3) -> dict:
    """Figure (d): error shares and the rules that fire on benign files."""
    rows = read_tsv(corpus / "benign" / "MANIFEST.tsv")
    scanned = missing = with_error = with_hidden_error = crashes = 0
    nbytes = 0
    seconds = 0.0
    by_level: dict[str, dict[str, dict]] = {"error": {}, "warning": {}}
    error_files = []
    per_kind = collections.Counter()
    per_kind_err = collections.Counter()
    for row in rows:
        key = "benign/" + row["owner/repo"].replace("/", "__") + "/" + row["path"]
        res = results.get(key)
        if res is None:
            missing += not (corpus / key).is_file()
            continue
        scanned += 1
        per_kind[row["kind"]] += 1
        if res.get("crash"):
            crashes += 1
        nbytes += res.get("bytes", 0)
        seconds += res.get("seconds", 0.0)
        if _has_error(res):
            with_error += 1
            per_kind_err[row["kind"]] += 1
            error_files.append(
                {
                    "file": key,
                    "errors": _grouped([f for f in res["findings"] if f["severity"] == "error"]) or [res.get("crash")],
                }
            )
        if any(f["severity"] == "error" and f["category"] == "hidden-content" for f in res["findings"]):
            with_hidden_error += 1
        seen: set[tuple[str, str]] = set()
        for f in res["findings"]:
            if f["severity"] not in by_level:
                continue
            stat = by_level[f["severity"]].setdefault(f["rule"], {"files": 0, "findings": 0, "examples": []})
            stat["findings"] += 1
            if (f["severity"], f["rule"]) not in seen:
                seen.add((f["severity"], f["rule"]))
                stat["files"] += 1
                if len(stat["examples"]) < examples:
                    stat["examples"].append(f"{key[len('benign/') :]}:{f['line']} — {f['message'][:120]}")
    top = {
        level: sorted(
            ({"rule": r, **s} for r, s in stats.items()), key=lambda s: (-s["files"], -s["findings"], s["rule"])
        )
        for level, stats in by_level.items()
    }
    return {
        "files": scanned,
        "missing": missing,
        "bytes": nbytes,
        "analysis_seconds": seconds,
        "crashes": crashes,
        "files_with_error": with_error,
        "error_share": with_error / scanned if scanned else 0.0,
        "files_with_hidden_error": with_hidden_error,
        "hidden_error_share": with_hidden_error / scanned if scanned else 0.0,
        "top_rules": top,
        "error_files": error_files,
        "per_kind": {k: {"files": per_kind[k], "with_error": per_kind_err[k]} for k in sorted(per_kind)},
    }


def targets(syn: dict, mal: dict, ben: dict | None, mlab: dict | None = None, cats: dict | None = None) -> list[dict]:
    """The targets of issues 2 and 3 with their measured value and whether each is met (``ben``
    None: the benign corpus was skipped and its target is left out)."""
    negatives = syn["negatives"] + mal["negatives"]
    out = []
    for cat, t in (cats or {}).items():
        found, total = t["synthetic"][0] + t["malicious"][0], t["synthetic"][1] + t["malicious"][1]
        out.append(
            {
                "target": f"labelled {cat} cases found at their line",
                "value": f"{found}/{total}",
                "met": found == total,
            }
        )
    if mlab is not None and mlab.get("missing"):
        out.append({"target": "malicious line labels present", "value": mlab["missing"], "met": False})
    out += [
        {
            "target": "synthetic hidden-content cases found at their line",
            "value": f"{sum(c['found'] for c in syn['hidden'])}/{len(syn['hidden'])}",
            "met": all(c["found"] for c in syn["hidden"]) and bool(syn["hidden"]),
        },
        {
            "target": "malicious hidden-content positives found",
            "value": f"{sum(c['found'] for c in mal['hidden'])}/{len(mal['hidden'])}",
            "met": all(c["found"] for c in mal["hidden"]) and bool(mal["hidden"]),
        },
        {
            "target": "hard negatives and negative controls with no error",
            "value": f"{sum(n['ok'] for n in negatives)}/{len(negatives)}",
            "met": all(n["ok"] for n in negatives),
        },
    ]
    if ben is not None:
        out.append(
            {
                "target": "benign files with any error < 1%",
                "value": f"{ben['files_with_error']}/{ben['files']} = {100 * ben['error_share']:.2f}%",
                "met": ben["files"] > 0 and ben["error_share"] < BENIGN_ERROR_SHARE_TARGET,
            }
        )
    return out


def mutation_figures(corpus: Path, benign_files: int = 50) -> dict:
    """Figure (e): per-class recall of the mutation suite and the benign mutation check."""
    import mutate  # tests/adversarial/mutate.py (its folder is on sys.path: see the top)

    rep = mutate.run(corpus)
    floors = mutate.load_floors()
    ben = mutate.benign_mutations(corpus, benign_files)
    classes = {
        c: {"found": st["found"], "total": st["total"], "recall": mutate.recall(st), "floor": floors.get(c)}
        for c, st in rep["classes"].items()
    }
    targets = [
        {
            "target": "mutation classes at or above their floor (tests/adversarial/floors.toml)",
            "value": f"{sum(v['recall'] >= (v['floor'] or 0) for v in classes.values())}/{len(classes)}",
            "met": all(v["recall"] >= (v["floor"] or 0) for v in classes.values()),
        },
        {
            "target": "errors created by structural mutations of benign files",
            "value": f"{len(ben['new_errors'])} in {ben['cases']} cases ({ben['files']} files)",
            "met": not ben["new_errors"],
        },
    ]
    return {
        "payloads": rep["payloads"],
        "excluded": [p.source for p in rep["excluded"]],
        "classes": classes,
        "benign": ben,
        "targets": targets,
    }


# --------------------------------------------------------------------------- output


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True, timeout=10
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _yn(b: bool) -> str:
    return "found" if b else "MISSED"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


_NOTES_START = "Corpus: `../shared/corpus`"
_NOTES_END = "## Summary"


def with_notes(text: str, earlier: str) -> str:
    """``text`` (a fresh :func:`render`) with the hand-written sections of ``earlier`` (the file
    it replaces) put back where they were: everything after the corpus note's paragraph and
    before "## Summary". ``text`` unchanged when ``earlier`` has none."""

    def cut(doc: str) -> tuple[int, int] | None:
        i = doc.find(_NOTES_START)
        j = doc.find("\n\n", i) if i >= 0 else -1
        k = doc.find("\n" + _NOTES_END, j) if j >= 0 else -1
        return None if k < 0 else (j + 2, k + 1)

    old, new = cut(earlier), cut(text)
    if old is None or new is None:
        return text
    return text[: new[0]] + earlier[old[0] : old[1]] + text[new[1] :]


def render(report: dict) -> str:
    """The report as Markdown (also printed to the terminal)."""
    syn, mal, ben = report["synthetic"], report["malicious"], report["benign"]
    out: list[str] = []
    w = out.append
    w("# Accuracy on the shared corpus")
    w("")
    w(
        f"Generated by `python scripts/accuracy.py` on {report['date']} (commit `{report['commit']}`, "
        f"unveil {report['version']}, Python {report['python']}, {report['files_scanned']} files, "
        f"{report['wall_seconds']:.1f} s wall with {report['workers']} worker processes). "
        "Do not edit by hand: rerun the script. The hand-written sections between the corpus note "
        'and "Summary" are kept from earlier runs.'
    )
    w("")
    w(
        "Corpus: `../shared/corpus` (see its README). Lines are 1-based. A finding *matches* a labelled "
        "case when it has the case's category (hidden-content cases: `hidden-content`; risky cases: the "
        "mapped issue-3 category, never hidden-content, format or cost) and starts on the labelled line."
    )
    w("")
    w("## Summary")
    w("")
    labelled = [c for c in syn["hidden"] + syn["risky"]] + report["malicious_labels"]["cases"]
    negs = syn["negatives"] + mal["negatives"]
    w("| figure | value |")
    w("| --- | --- |")
    if not report.get("benign_skipped"):
        w(
            f"| benign files with any error | {ben['files_with_error']}/{ben['files']} = {100 * ben['error_share']:.2f}% |"
        )
    w(
        f"| labelled cases found at their line (synthetic + malicious line labels) | "
        f"{sum(c['found'] for c in labelled)}/{len(labelled)} |"
    )
    w(f"| hard negatives and negative controls with an error | {sum(not n['ok'] for n in negs)}/{len(negs)} |")
    mut = report.get("mutations")
    if mut:
        for cls, v in mut["classes"].items():
            w(f"| mutation recall: {cls} | {v['found']}/{v['total']} = {100 * v['recall']:.1f}% |")
        b = mut["benign"]
        w(f"| benign mutations that create an error | {len(b['new_errors'])}/{b['cases']} ({b['files']} files) |")
    w("")
    w("## Targets (issues 2, 3 and 8)")
    w("")
    w("| target | value | met |")
    w("| --- | --- | --- |")
    for t in report["targets"]:
        w(f"| {t['target']} | {t['value']} | {'yes' if t['met'] else '**NO**'} |")
    w("")
    w("## Per category (labelled cases found at their line)")
    w("")
    w(
        "A case counts only through a finding of its own category (synthetic labels mapped to unveil "
        "categories) starting on the labelled line at warning or above (malicious labels: their `min_severity`)."
    )
    w("")
    w("| category | synthetic | malicious | total |")
    w("| --- | --- | --- | --- |")
    for cat, t in report["per_category"].items():
        sf, st = t["synthetic"]
        mf, mt = t["malicious"]
        w(f"| {cat} | {sf}/{st} | {mf}/{mt} | {sf + mf}/{st + mt} |")
    w("")
    w("## (a) Synthetic hidden-content cases (`synthetic/LABELS.tsv`)")
    w("")
    w("| file | category | line | result | matching findings |")
    w("| --- | --- | --- | --- | --- |")
    for c in syn["hidden"]:
        matched = ", ".join(c["matched"]) or (
            "crash: " + c["crash"] if c["crash"] else "elsewhere: " + (", ".join(c["elsewhere"]) or "none")
        )
        w(f"| {c['file']} | {c['category']} | {c['line']} | {_yn(c['found'])} | {_md_escape(matched)} |")
    w("")
    w("Risky-directive labels (issue 3): a finding of the mapped unveil category on the line, at warning or above.")
    w("")
    found = sum(c["found"] for c in syn["risky"])
    w(f"Recall: {found}/{len(syn['risky'])}.")
    w("")
    w("| file | label | unveil category | line | result | matching findings |")
    w("| --- | --- | --- | --- | --- | --- |")
    for c in syn["risky"]:
        w(
            f"| {c['file']} | {c['category']} | {c['unveil_category']} | {c['line']} | {_yn(c['found'])} | "
            f"{_md_escape(', '.join(c['matched']) or 'elsewhere: ' + ', '.join(c['elsewhere']))} |"
        )
    w("")
    w("## (b) Malicious corpus (`malicious/PROVENANCE.tsv`)")
    w("")
    w("Hidden-content positives (target: a `hidden-content` finding; the lines are where it was found):")
    w("")
    w("| file | technique | result | hidden-content findings |")
    w("| --- | --- | --- | --- |")
    for c in mal["hidden"]:
        w(
            f"| {c['file']} | {_md_escape(c['technique'])} | {_yn(c['found'])} | {_md_escape(', '.join(c['matched']) or (c['crash'] or ''))} |"
        )
    w("")
    mlab = report["malicious_labels"]
    w(
        "Line labels for the positives (`tests/data/malicious-labels.tsv`, ours): found = a finding of the "
        "label's category starting on the line at `min_severity` (default warning) or above."
    )
    w("")
    found = sum(c["found"] for c in mlab["cases"])
    w(f"Recall: {found}/{len(mlab['cases'])}.")
    w("")
    w("| file | category | line | min | result | matching findings | note |")
    w("| --- | --- | --- | --- | --- | --- | --- |")
    for c in mlab["cases"]:
        matched = ", ".join(c["matched"]) or "on the line: " + (", ".join(c["on_line"]) or "none")
        w(
            f"| {c['file'][len('malicious/') :]} | {c['category']} | {c['line']} | {c['min_severity']} | "
            f"{_yn(c['found'])} | {_md_escape(matched)} | {_md_escape(c['note'])} |"
        )
    w("")
    w(f"Excluded from recall ({len(mlab['excluded'])}, category `none-in-text`):")
    w("")
    for e in mlab["excluded"]:
        w(f"- {e['file'][len('malicious/') :]}: {e['reason']}")
    w("")
    if mal["edge"]:
        w("")
        w("Edge rows (informational):")
        w("")
        for c in mal["edge"]:
            w(f"- {c['file']} ({c['label']}): {', '.join(c['findings']) or 'no findings'}")
    w("")
    w("## (c) Hard negatives and negative controls (target: no error)")
    w("")
    w("| file | source | result | findings |")
    w("| --- | --- | --- | --- |")
    for n in syn["negatives"] + mal["negatives"]:
        result = "no error" if n["ok"] else "**ERROR**: " + "; ".join(n["errors"] or [n.get("crash") or ""])
        w(f"| {n['file']} | {n['source']} | {_md_escape(result)} | {_md_escape(', '.join(n['findings']) or 'none')} |")
    w("")
    mut = report.get("mutations")
    if mut:
        w("## (e) Adversarial mutations (`tests/adversarial/mutate.py`)")
        w("")
        w(
            f"{mut['payloads']} payloads: the risky-directive labels of `synthetic/LABELS.tsv` and "
            "`tests/data/malicious-labels.tsv` and the `bad` examples of every security pattern rule, each put in "
            "a skill carrier and transformed by every class of issue 8. Found = a finding of the payload's category "
            "at warning or error on the payload's line. "
            f"{len(mut['excluded'])} payloads not found in the plain carrier (they need surroundings it does not "
            "give: a frontmatter-only key, a settings file…) are left out of every class. Target after the "
            "normalisation, decoder, region and shell work: 95 % per class."
        )
        w("")
        w("| mutation class | found / cases | recall | floor |")
        w("| --- | --- | --- | --- |")
        for cls, v in mut["classes"].items():
            fl = "" if v["floor"] is None else f"{100 * v['floor']:.0f}%"
            w(f"| {cls} | {v['found']}/{v['total']} | {100 * v['recall']:.1f}% | {fl} |")
        w("")
        b = mut["benign"]
        w(
            f"Benign check: {b['files']} benign files (evenly spread over the manifest), each structural class "
            f"applied to the first prose line without a payload: {b['cases']} mutated files, "
            f"{len(b['new_errors'])} new errors (target 0). The classes that hide or encode the line are expected "
            "to draw a hidden-content or obfuscation error (an instruction the reader cannot see is what those "
            f"rules report): {len(b['carrier_errors'])} such errors, by class and rule: "
            + (
                ", ".join(
                    f"{c} {r} ×{n}"
                    for (c, r), n in sorted(collections.Counter((e[1], e[2]) for e in b["carrier_errors"]).items())
                )
                or "none"
            )
            + "."
        )
        for f, cls, rule, cat in b["new_errors"][:20]:
            w(f"- {f}: {cls} → {rule} ({cat})")
        w("")
    w("## (d) Benign corpus (`benign/MANIFEST.tsv`)")
    w("")
    if report.get("benign_skipped"):
        w("Skipped (--skip-benign).")
        w("")
        return "\n".join(out)
    w(
        f"- Files scanned: {ben['files']} ({ben['bytes'] / 1e6:.1f} MB; {ben['missing']} listed but missing; "
        f"{ben['crashes']} crashed the analysis)"
    )
    w(f"- Files with any error: {ben['files_with_error']} = {100 * ben['error_share']:.2f}% (target < 1%)")
    w(f"- Files with a hidden-content error: {ben['files_with_hidden_error']} = {100 * ben['hidden_error_share']:.2f}%")
    w(
        f"- Analysis time (sum of per-file wall times in the workers; the machine is shared): {ben['analysis_seconds']:.1f} s"
    )
    for level in ("error", "warning"):
        w("")
        w(f"Top 10 rules firing at {level} on benign files (by files):")
        w("")
        rules = ben["top_rules"][level]
        if not rules:
            w("none")
            continue
        w("| rule | files | findings | examples (file:line — message) |")
        w("| --- | --- | --- | --- |")
        for r in rules[:10]:
            w(f"| {r['rule']} | {r['files']} | {r['findings']} | {_md_escape('<br>'.join(r['examples']))} |")
    if ben["error_files"]:
        w("")
        w("Benign files with an error:")
        w("")
        for e in ben["error_files"][:40]:
            w(f"- {e['file']}: {', '.join(x for x in e['errors'] if x)}")
        if len(ben["error_files"]) > 40:
            w(f"- ... and {len(ben['error_files']) - 40} more (see benchmarks/accuracy.json)")
    w("")
    w("Per kind (files / with an error):")
    w("")
    w(", ".join(f"{k} {v['files']}/{v['with_error']}" for k, v in ben["per_kind"].items()))
    w("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus folder (default: ../shared/corpus)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--no-write", action="store_true", help="print only; do not write docs/ and benchmarks/")
    ap.add_argument("--md", type=Path, default=ROOT / "docs" / "accuracy.md")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "accuracy.json")
    ap.add_argument("--skip-mutations", action="store_true", help="leave out the adversarial mutation suite (e)")
    ap.add_argument(
        "--skip-benign",
        action="store_true",
        help="labelled sets only (about a second; the benign target is left out; implies --no-write)",
    )
    args = ap.parse_args(argv)

    if args.skip_benign:
        args.no_write = True  # never replace the committed full figures with partial ones
    corpus = args.corpus.resolve()
    needed = [
        corpus / "synthetic" / "LABELS.tsv",
        corpus / "malicious" / "PROVENANCE.tsv",
        corpus / "benign" / "MANIFEST.tsv",
    ]
    for p in needed:
        if not p.is_file():
            print(f"accuracy: {p} not found (pass --corpus)", file=sys.stderr)
            return 2

    jobs: list[tuple[str, str, str]] = []
    labels = read_tsv(corpus / "synthetic" / "LABELS.tsv")
    notes = {r["file"]: r["note"] for r in labels}
    for p in sorted((corpus / "synthetic").glob("*.md")):
        jobs.append((f"synthetic/{p.name}", str(p), synthetic_kind_path(p.name, notes.get(p.name, ""))))
    for row in read_tsv(corpus / "malicious" / "PROVENANCE.tsv"):
        if row["label"].startswith("metadata"):
            continue
        p = corpus / "malicious" / row["local_file"]
        if p.is_file():
            jobs.append((f"malicious/{row['local_file']}", str(p), row["path"]))
    if not args.skip_benign:
        for row in read_tsv(corpus / "benign" / "MANIFEST.tsv"):
            rel = row["owner/repo"].replace("/", "__") + "/" + row["path"]
            p = corpus / "benign" / rel
            if p.is_file():
                jobs.append((f"benign/{rel}", str(p), row["path"]))

    t0 = time.perf_counter()
    results = run_jobs(jobs, args.jobs)
    wall = time.perf_counter() - t0

    try:
        from unveil import __version__ as version
    except Exception:  # noqa: BLE001
        version = "unknown"
    syn = synthetic_figures(corpus, results)
    mal = malicious_figures(corpus, results)
    ben = benign_figures(corpus, results)
    mlab = malicious_label_figures(results)
    cats = per_category(syn, mlab)
    mutations = None
    if not args.skip_benign and not args.skip_mutations:
        mutations = mutation_figures(corpus)
    report = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "version": version,
        "python": platform.python_version(),
        "workers": args.jobs,
        "files_scanned": len(results),
        "wall_seconds": wall,
        "crashes": sorted(k for k, r in results.items() if r.get("crash")),
        "benign_skipped": args.skip_benign,
        "targets": targets(syn, mal, None if args.skip_benign else ben, mlab, cats),
        "per_category": cats,
        "malicious_labels": mlab,
        "synthetic": syn,
        "malicious": mal,
        "benign": ben,
        "mutations": mutations,
    }
    if mutations is not None:
        report["targets"] += mutations["targets"]
    text = render(report)
    print(text)
    if not args.no_write:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        earlier = args.md.read_text(encoding="utf-8") if args.md.exists() else ""
        args.md.write_text(with_notes(text, earlier), encoding="utf-8")
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.md} and {args.json}", file=sys.stderr)
    missed = [t["target"] for t in report["targets"] if not t["met"]]
    if report["crashes"]:
        missed.append(f"{len(report['crashes'])} files crashed the analysis")
    for m in missed:
        print(f"accuracy: target missed: {m}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
