"""Cost of the review lock per edit in the language server (issue 11: "re-hashing on each edit must
not slow typing").

What ``unveil.lsp.features.lock`` does per publish of an open document: one
:func:`unveil.core.lock.text_hash` of the analysed text and a dict lookup of its entry; when the
hash differs from the entry, once per new text, :func:`unveil.core.lock.file_delta` (finding
fingerprints, capabilities, token and grade comparison). Both are measured here on a 300-line agent
file, in microseconds per call (median of 7 runs of N calls each), next to ``analyze()`` of the same
text, which every edit pays anyway.

    python benchmarks/lock_rehash.py            # prints a Markdown table (generated 300-line file)
    python benchmarks/lock_rehash.py --corpus   # the first 300 lines of the largest benign corpus file
"""

from __future__ import annotations

import statistics
import time

from unveil.core import lock as lk
from unveil.core.analyze import analyze


def make_file(lines: int = 300) -> str:
    out = [
        "---",
        "name: reviewer",
        "description: Reviews pull requests for style and safety",
        "tools: Read, Grep",
        "---",
        "# Reviewer",
        "",
    ]
    i = 0
    while len(out) < lines - 1:
        i += 1
        out += [
            f"## Step {i}",
            "",
            f"Check the diff for item {i}; see https://docs.example.com/step/{i} and run:",
            "",
            "```bash",
            f"npm run lint -- --rule {i}",
            "```",
            "",
        ]
    out = out[: lines - 1] + ["Report findings as a list.\u200b"]
    return "\n".join(out) + "\n"


def per_call_us(fn, n: int) -> float:
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def corpus_file(lines: int = 300) -> str | None:
    """The first ``lines`` lines of the largest benign corpus file with at least that many, if the
    shared corpus is next to the repository (../shared/corpus)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "benign"
    if not root.is_dir():
        root = Path("/work/shared/corpus/benign")
    if not root.is_dir():
        return None
    best = None
    for p in root.rglob("*.md"):
        try:
            t = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if t.count("\n") >= lines and (best is None or len(t) > len(best)):
            best = t
    return None if best is None else "\n".join(best.split("\n")[:lines]) + "\n"


def main() -> None:
    import sys

    text = corpus_file() if "--corpus" in sys.argv else None
    text = text or make_file()
    analysis = analyze(text, "/tmp/bench/.claude/agents/reviewer.md")
    entry = lk.file_entry(analysis, ".claude/agents/reviewer.md", {"reviewer": "x"})
    edited = text.replace("Report findings", "Report all findings")
    edited_analysis = analyze(edited, "/tmp/bench/.claude/agents/reviewer.md")
    hash_us = per_call_us(lambda: lk.text_hash(edited), 2000)
    delta_us = per_call_us(lambda: lk.file_delta(entry, edited_analysis, ".claude/agents/reviewer.md"), 50)
    analyse_ms = (
        per_call_us(lambda: analyze(edited, "/tmp/bench/.claude/agents/reviewer.md", count_tokens=False), 3) / 1000
    )
    print(f"300-line file, {len(text.encode()):,} bytes, {len(analysis.findings)} findings")
    print("| step (per edit) | cost |")
    print("| --- | --- |")
    print(f"| re-hash (`text_hash`) | {hash_us:,.1f} µs |")
    print(f"| delta when changed (`file_delta`, once per new text) | {delta_us:,.0f} µs |")
    print(f"| for comparison: `analyze()` of the same text | {analyse_ms:,.1f} ms |")


if __name__ == "__main__":
    main()
