#!/usr/bin/env python3
"""What the libraries alone cost on the benign corpus, next to agnix (issue 10): a script, not a test.

Issue 10 asks for the whole benign corpus, cold, in at most five times agnix's wall time. This
script measures, in one process and one thread, the steps every analysis of every file has to
take whatever unveil's own code does, with the libraries unveil is built on:

* reading: the bytes of every file unveil scans (:func:`unveil.core.discovery.collect` of
  ``benign/``, the same list as ``unveil check benign/``), decoded as UTF-8;
* markdown-it-py: ``MarkdownIt.parse`` with unveil's configuration (CommonMark, tables,
  strikethrough, front matter, footnotes; see ``core/markdown.py``), nothing read from the tokens;
* tiktoken: ``o200k_base`` encoding of every text (Rust; the fastest exact token count there is
  in Python, :func:`unveil.core.tokens.encoding`), for the token report;
* markdown-it-pyrs (only when installed, ``pip install markdown-it-pyrs``; it is not a dependency
  of unveil): the compiled
  CommonMark parser the issue allows, ``MarkdownIt("commonmark").enable_many(["table",
  "strikethrough", "front_matter", "footnote"]).tree(text)``, as the floor a port of the markdown
  layer onto it would start from; files it panics on are counted.

The same steps then run on a padded ``AGENTS.md`` of ``--big`` bytes (``bench.py``'s growth file,
10^7 by default), against the issue's 8 s goal for it: one process analyses one file, so there a
step's floor is its CPU time.

Each step runs ``--reps`` times over the whole corpus (median CPU seconds of the process,
``time.process_time``). agnix runs on the same folder before each repetition (wall seconds,
median). A floor on this 2-core machine is the step's CPU time halved (two worker processes,
perfect sharing, no start-up): the best wall time any pipeline that includes the step could
have. Each floor is given as a ratio to agnix's wall time and as a share of the goal's budget.

Usage (from the repository root; ``--json`` and ``--md`` default to ``benchmarks/floors.*``)::

    python benchmarks/floors.py [--corpus PATH] [--reps 3] [--big BYTES]

Times are seconds; sizes are bytes (MB = 10^6 bytes).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "server"))

import bench  # noqa: E402  (the agnix finder, the process runner, the machine description)

BIG_GOAL_S = 8.0
"""Issue 10's goal for a 10 MB file, seconds."""


def markdown_it_py() -> Callable[[str], object]:
    """``MarkdownIt.parse`` configured as ``core/markdown.py`` configures it (its plugins and
    rules; not its wrappers that record positions, which are unveil's own work)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = MarkdownIt("commonmark", {"inline_definitions": True}).enable(["table", "strikethrough"])
    md.use(front_matter_plugin).use(footnote_plugin)
    return md.parse


def markdown_it_pyrs() -> tuple[Callable[[str], object], str] | None:
    """``(parse, version)`` of markdown-it-pyrs, or ``None`` when it is not installed."""
    try:
        import markdown_it_pyrs  # type: ignore[import-not-found]
    except ImportError:
        return None
    md = markdown_it_pyrs.MarkdownIt("commonmark").enable_many(["table", "strikethrough", "front_matter", "footnote"])
    return md.tree, getattr(markdown_it_pyrs, "__version__", "?")


def timed(step: Callable[[str], object], texts: list[str]) -> tuple[float, int]:
    """``(CPU seconds, texts on which step raised)`` of one pass over ``texts``."""
    failed = 0
    t0 = time.process_time()
    for text in texts:
        try:
            step(text)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - a Rust panic arrives as pyo3's PanicException (a BaseException)
            failed += 1
    return time.process_time() - t0, failed


def steps() -> dict[str, Callable[[str], object]]:
    """The steps measured, by name: markdown-it-py, tiktoken, and markdown-it-pyrs if installed."""
    from unveil.core import tokens

    enc = tokens.encoding()
    out: dict[str, Callable[[str], object]] = {
        "markdown-it-py parse": markdown_it_py(),
        "tiktoken o200k_base encode": lambda t: enc.encode(t, disallowed_special=()),
    }
    pyrs = markdown_it_pyrs()
    if pyrs:
        out[f"markdown-it-pyrs {pyrs[1]} parse (not a dependency)"] = pyrs[0]
    return out


def row(name: str, cpus: list[float], share: int, failed: int, agnix_wall: float | None, goal: float | None) -> dict:
    """One table row: the median CPU seconds of ``cpus``, the floor (that over ``share`` cores)
    and its ratios to agnix's wall time and to the goal."""
    cpu = statistics.median(cpus)
    floor = cpu / share
    return {
        "step": name,
        "cpu_s": round(cpu, 3),
        "floor_wall_s": round(floor, 3),
        "ratio_to_agnix": round(floor / agnix_wall, 2) if agnix_wall else None,
        "share_of_goal": round(floor / goal, 2) if goal else None,
        "failed_files": failed,
    }


def measure(corpus: Path, reps: int, big_size: int) -> dict:
    os.environ["RUST_BACKTRACE"] = "0"  # a markdown-it-pyrs panic: its one-line message only
    folder = corpus / "benign"
    from unveil.core.discovery import collect

    paths = [p for _, p in collect([str(folder)]).files]
    texts = [p.read_bytes().decode("utf-8", "replace") for p in paths]
    todo = steps()
    agnix, agnix_how = bench.find_agnix(install=False)
    runs: dict[str, list[float]] = {"read and decode": []}
    failed: dict[str, int] = {}
    agnix_walls: list[float] = []
    for _ in range(reps):
        if agnix:
            agnix_walls.append(bench.run_proc([agnix, "--format", "json", str(folder)])["wall_s"])
        t0 = time.process_time()
        for p in paths:
            p.read_bytes().decode("utf-8", "replace")
        runs["read and decode"].append(time.process_time() - t0)
        for name, step in todo.items():
            cpu, bad = timed(step, texts)
            runs.setdefault(name, []).append(cpu)
            failed[name] = bad
    agnix_wall = statistics.median(agnix_walls) if agnix_walls else None
    goal = 5 * agnix_wall if agnix_wall else None
    corpus_rows = [row(n, c, 2, failed.get(n, 0), agnix_wall, goal) for n, c in runs.items()]

    filler_src = folder / "github__awesome-copilot" / "AGENTS.md"
    filler = filler_src.read_text(encoding="utf-8", errors="replace") if filler_src.exists() else "Use uv.\n" * 200
    big, _line = bench.padded_agents_md(big_size, filler)
    big_runs: dict[str, list[float]] = {}
    big_failed: dict[str, int] = {}
    for _ in range(reps):
        for name, step in todo.items():
            cpu, bad = timed(step, [big])
            big_runs.setdefault(name, []).append(cpu)
            big_failed[name] = bad
    big_rows = [row(n, c, 1, big_failed.get(n, 0), None, BIG_GOAL_S) for n, c in big_runs.items()]
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": bench.commit(),
        "machine": bench.machine(),
        "files": len(texts),
        "bytes": sum(p.stat().st_size for p in paths),
        "reps": reps,
        "agnix": agnix_how,
        "agnix_wall_s": round(agnix_wall, 3) if agnix_wall else None,
        "corpus_goal_s": round(goal, 3) if goal else None,
        "rows": corpus_rows,
        "big_bytes": len(big.encode("utf-8")),
        "big_goal_s": BIG_GOAL_S,
        "big_rows": big_rows,
        "unveil": unveil_figures(big_bytes=len(big.encode("utf-8"))),
    }


def unveil_figures(path: Path = ROOT / "benchmarks" / "results.json", big_bytes: int = 10_000_000) -> dict | None:
    """unveil's cold corpus figures from ``bench.py``'s last results, with its time on the growth
    file within 5 % of ``big_bytes`` (``big_wall_s``, ``None`` when it measured none that size);
    ``None`` when the results are missing or unreadable."""
    try:
        r = json.loads(path.read_text(encoding="utf-8"))
        cold = r["corpus"]["unveil_cold"]
        agnix = r["corpus"]["agnix"]["wall_s"]
        big = [g for g in r.get("growth", []) if abs(g.get("bytes", 0) - big_bytes) <= big_bytes / 20]
        return {
            "commit": r.get("commit"),
            "date": r.get("date"),
            "wall_s": cold["wall_s"],
            "cpu_s": cold["cpu_s"],
            "ratio": round(cold["wall_s"] / agnix, 1),
            "big_wall_s": big[-1]["unveil"]["wall_s"] if big else None,
        }
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


def _ratio(x: float | None) -> str:
    return f"{x}×" if x is not None else "—"


def render(r: dict) -> str:
    agnix = r["agnix_wall_s"]
    goal = f"{r['corpus_goal_s']:.2f} s" if r["corpus_goal_s"] else "unknown (no agnix)"
    lines = [
        "# Floors: what the libraries alone cost, next to issue 10's time goals",
        "",
        f"Generated by `python benchmarks/floors.py` on {r['date']} (commit `{r['commit']}`); "
        f"medians of {r['reps']} passes; CPU seconds of one thread (`time.process_time`). Machine: "
        f"{r['machine'].get('nproc')} CPUs ({r['machine'].get('cpu')}), Python {r['machine'].get('python')}. "
        "Do not edit by hand: rerun the script.",
        "",
        f"## The benign corpus, cold ({r['files']} files, {r['bytes'] / 1e6:.1f} MB)",
        "",
        f"agnix: {r['agnix']}, {agnix} s wall over the same folder (median of the runs interleaved with "
        f"the passes). Issue 10's goal, 5× agnix: **{goal}** of wall time. A step's floor is its CPU "
        "time over every file halved: two processes on this machine's two cores sharing the files "
        "perfectly, with no start-up and no other work. No pipeline that includes the step can "
        "finish the corpus sooner.",
        "",
        "| step (every file) | CPU | floor (wall, 2 cores) | floor ÷ agnix | floor ÷ goal | files it failed on |",
        "|---|---|---|---|---|---|",
    ]
    for x in r["rows"]:
        lines.append(
            f"| {x['step']} | {x['cpu_s']:.2f} s | {x['floor_wall_s']:.2f} s | {_ratio(x['ratio_to_agnix'])} "
            f"| {_ratio(x['share_of_goal'])} | {x['failed_files']} |"
        )
    u = r.get("unveil")
    if u:
        lines += [
            "",
            f"For comparison, unveil's whole cold run (`results.md`, commit `{u['commit']}`, {u['date']}): "
            f"{u['wall_s']} s wall, {u['cpu_s']} s CPU, {u['ratio']}× agnix in that run.",
        ]
    lines += [
        "",
        f"## A padded AGENTS.md of {r['big_bytes'] / 1e6:.1f} MB (`bench.py`'s growth file)",
        "",
        f"Issue 10's goal for a 10 MB file: **{r['big_goal_s']:.0f} s**. One file is analysed by one process, so a "
        "step's floor is its CPU time.",
        "",
        "| step (the one file) | CPU (floor) | floor ÷ goal | failed |",
        "|---|---|---|---|",
    ]
    for x in r["big_rows"]:
        lines.append(f"| {x['step']} | {x['cpu_s']:.2f} s | {_ratio(x['share_of_goal'])} | {x['failed_files']} |")
    if u and u.get("big_wall_s"):
        lines += ["", f"unveil's whole run on the same file (`results.md`): {u['big_wall_s']} s."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=bench.DEFAULT_CORPUS)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--big", type=int, default=10_000_000, help="size in bytes of the padded file (default 10^7)")
    ap.add_argument("--json", type=Path, default=ROOT / "benchmarks" / "floors.json")
    ap.add_argument("--md", type=Path, default=ROOT / "benchmarks" / "floors.md")
    args = ap.parse_args(argv)
    r = measure(args.corpus.resolve(), max(1, args.reps), args.big)
    args.json.write_text(json.dumps(r, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = render(r)
    args.md.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
