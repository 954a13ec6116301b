#!/usr/bin/env python3
"""Dump every finding and token figure unveil reports for the benign corpus, one JSON line per
file, so two versions of the code can be diffed (``diff before.jsonl after.jsonl``).

Each line: ``{"path", "kind", "grade", "findings": [[rule, severity, start, end, message,
category, hidden_text, tokens, fixes]], "tokens": {session, invoke, total, body, sections}}``
(offsets in code points, tokens in o200k tokens). The tokenizer is loaded before the first file
so every file is analysed with token budgets.

Usage (from the repository root)::

    python benchmarks/dump_findings.py OUT.jsonl [--corpus ../shared/corpus] [--every N]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rows(corpus: Path) -> list[Path]:
    with (corpus / "benign" / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        return [
            corpus / "benign" / (r["owner/repo"].replace("/", "__") + "/" + r["path"])
            for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        ]


def dump(analysis, path: str) -> dict:
    rep = analysis.tokens
    return {
        "path": path,
        "kind": analysis.kind,
        "grade": analysis.grade,
        "findings": [
            [
                f.rule,
                int(f.severity),
                f.start,
                f.end,
                f.message,
                f.category,
                f.hidden_text,
                f.tokens,
                [[x.title, x.kind, [[e.start, e.end, e.new_text] for e in x.edits]] for x in f.fixes],
            ]
            for f in analysis.findings
        ],
        "tokens": None
        if rep is None
        else {
            "session": rep.session,
            "invoke": rep.invoke,
            "total": rep.total,
            "body": rep.body,
            "notes": list(rep.notes),
            "basis": rep.basis,
            "sections": [[s.line, s.level, s.title, s.tokens] for s in rep.sections],
        },
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--every", type=int, default=1, help="only every N-th file (a quick sample)")
    args = ap.parse_args(argv)
    from unveil.core import tokens
    from unveil.core.analyze import analyze

    tokens.encoding()  # loaded before the first file
    files = rows(args.corpus.resolve())[:: args.every]
    t0 = time.perf_counter()
    with args.out.open("w", encoding="utf-8") as out:
        for p in files:
            text = p.read_bytes().decode("utf-8", "surrogateescape")
            a = analyze(text, str(p), count_tokens=True)
            rel = str(p.relative_to(args.corpus.resolve()))
            out.write(
                json.dumps(dump(a, rel), ensure_ascii=False, default=str)
                .encode("utf-8", "surrogateescape")
                .decode("utf-8", "replace")
                + "\n"
            )
    print(f"{len(files)} files in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
