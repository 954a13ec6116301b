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
  of unveil): the compiled CommonMark parser the issue allows "if it gives the same hidden/visible
  structure as markdown-it-py on the whole corpus", ``MarkdownIt("commonmark").enable_many(["table",
  "strikethrough", "front_matter", "footnote"]).tree(text)``, as the floor a port of the markdown
  layer onto it would start from; files it panics on are counted, and its structure is compared
  with markdown-it-py's file by file (:func:`compare_parsers`).

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
from collections import Counter
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "server"))

import bench  # noqa: E402  (the agnix finder, the process runner, the machine description)

BIG_GOAL_S = 8.0
"""Issue 10's goal for a 10 MB file, seconds."""


def markdown_it_py() -> Callable[[str], object]:
    """``MarkdownIt.parse`` configured as unveil configures it
    (:func:`unveil.core.markdown.configured_parser`: its plugins and rules, not its wrappers that
    record positions, which are unveil's own work)."""
    from unveil.core.markdown import configured_parser

    return configured_parser().parse


def markdown_it_pyrs() -> tuple[Callable[[str], object], str] | None:
    """``(parse, version)`` of markdown-it-pyrs, or ``None`` when it is not installed."""
    try:
        import markdown_it_pyrs  # type: ignore[import-not-found]
    except ImportError:
        return None
    md = markdown_it_pyrs.MarkdownIt("commonmark").enable_many(["table", "strikethrough", "front_matter", "footnote"])
    return md.tree, getattr(markdown_it_pyrs, "__version__", "?")


_PY_BLOCKS = {
    "paragraph_open": "paragraph",
    "heading_open": "heading",
    "html_block": "html_block",
    "code_block": "code_block",
    "fence": "fence",
    "front_matter": "front_matter",
    "table_open": "table",
    "definition": "definition",
}
"""markdown-it-py block token types compared, by the name they are counted under."""
_RS_BLOCKS = {name: name for name in _PY_BLOCKS.values()} | {"lheading": "heading"}
"""markdown-it-pyrs node names compared (its setext headings are ``lheading``)."""
_RS_INLINE_PARENTS = frozenset({"paragraph", "heading", "lheading", "table"})


def py_structure(parse: Callable[[str], list], text: str) -> tuple[Counter, Counter]:
    """``(blocks, inlines)`` of ``text`` as markdown-it-py's ``parse`` reads it: blocks are
    ``(kind, first line)`` (0-based, lines ended by ``\\n``; the paragraphs of tight lists, which
    render without a ``<p>`` and which markdown-it-pyrs does not make, left out), inlines ``("code_inline" | "html_inline", content)``, ``("link", href, title)``
    and ``("image", src, title)``; each counted."""
    blocks: Counter = Counter()
    inlines: Counter = Counter()
    for t in parse(text):
        kind = _PY_BLOCKS.get(t.type)
        if kind and t.map and not (kind == "paragraph" and t.hidden):
            blocks[(kind, t.map[0])] += 1
        if t.type != "inline":
            continue
        for c in t.children or ():
            if c.type in ("code_inline", "html_inline"):
                inlines[(c.type, c.content)] += 1
            elif c.type == "link_open":
                inlines[("link", c.attrs.get("href"), c.attrs.get("title"))] += 1
            elif c.type == "image":
                inlines[("image", c.attrs.get("src"), c.attrs.get("title"))] += 1
    return blocks, inlines


def rs_structure(tree: Callable[[str], object], text: str) -> tuple[Counter, Counter]:
    """:func:`py_structure`'s counts read from markdown-it-pyrs's node tree (``tree(text)``;
    its source maps are UTF-8 byte offsets)."""
    data = text.encode("utf-8", "surrogatepass")
    blocks: Counter = Counter()
    inlines: Counter = Counter()

    def walk(node, inline: bool) -> None:
        kind = _RS_BLOCKS.get(node.name)
        if kind and node.srcmap and not inline:
            blocks[(kind, data.count(b"\n", 0, node.srcmap[0]))] += 1
        if node.name == "code_inline":
            inlines[("code_inline", "".join(c.meta.get("content", "") for c in node.children))] += 1
        elif node.name == "html_inline":
            inlines[("html_inline", node.meta.get("content"))] += 1
        elif node.name in ("link", "image", "autolink"):  # markdown-it-py's autolinks are links
            kind = "image" if node.name == "image" else "link"
            inlines[(kind, node.meta.get("url"), node.meta.get("title"))] += 1
        for c in node.children:
            walk(c, inline or node.name in _RS_INLINE_PARENTS)

    walk(tree(text), False)
    return blocks, inlines


def differences(a: Counter, b: Counter) -> Counter:
    """How many items of each kind one count has more of than the other (both ways)."""
    out: Counter = Counter()
    for key, n in ((a - b) + (b - a)).items():
        out[key[0]] += n
    return out


def compare_parsers(texts: list[tuple[str, str]], py_parse, rs_tree) -> dict:
    """markdown-it-pyrs against markdown-it-py over ``(name, text)`` pairs: files compared,
    panics, files whose blocks or inlines differ, the differing items by kind, and the first
    five names of each kind of difference."""
    out = {"files": len(texts), "panics": 0, "block_files": 0, "inline_files": 0, "kinds": Counter()}
    examples: dict[str, list[str]] = {"blocks": [], "inlines": []}
    for name, text in texts:
        try:
            rs = rs_structure(rs_tree, text)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - pyo3's PanicException
            out["panics"] += 1
            continue
        py = py_structure(py_parse, text)
        for i, part in enumerate(("blocks", "inlines")):
            diff = differences(py[i], rs[i])
            if diff:
                out["block_files" if i == 0 else "inline_files"] += 1
                out["kinds"].update(diff)
                if len(examples[part]) < 5:
                    examples[part].append(name)
    out["kinds"] = dict(out["kinds"].most_common())
    out["examples"] = examples
    return out


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


def steps(
    py_parse: Callable[[str], object], pyrs: tuple[Callable[[str], object], str] | None
) -> dict[str, Callable[[str], object]]:
    """The steps measured, by name: markdown-it-py's ``py_parse``, tiktoken, and markdown-it-pyrs
    (:func:`markdown_it_pyrs`) when it is installed."""
    from unveil.core import tokens

    enc = tokens.encoding()
    out: dict[str, Callable[[str], object]] = {
        "markdown-it-py parse": py_parse,
        "tiktoken o200k_base encode": lambda t: enc.encode(t, disallowed_special=()),
    }
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

    found = collect([str(folder)]).files
    paths = [p for _, p in found]
    texts = [p.read_bytes().decode("utf-8", "replace") for p in paths]
    py_parse, pyrs = markdown_it_py(), markdown_it_pyrs()
    todo = steps(py_parse, pyrs)
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
    parsers = None
    if pyrs:
        names = [str(p.relative_to(folder)) for p in paths]
        parsers = compare_parsers(list(zip(names, texts)), py_parse, pyrs[0])
        parsers["version"] = pyrs[1]
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
        "parsers": parsers,
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
    c = r.get("parsers")
    if c:
        kinds = ", ".join(f"{k} {n}" for k, n in c["kinds"].items()) or "none"
        lines += [
            "",
            f"## markdown-it-pyrs {c['version']} against markdown-it-py on the corpus",
            "",
            "What the hidden-text checks read of the structure: each block's kind and first line "
            "(paragraphs, headings, HTML blocks, indented and fenced code, front matter, tables, "
            "reference definitions; tight lists' paragraphs left out, as pyrs has none there), and "
            "each inline code span, inline HTML, link and image with its content, address and title.",
            "",
            "| files compared | it panicked on | blocks differ in | inlines differ in | differing items by kind |",
            "|---|---|---|---|---|",
            f"| {c['files']} | {c['panics']} | {c['block_files']} | {c['inline_files']} | {kinds} |",
        ]
        for part in ("blocks", "inlines"):
            if c["examples"][part]:
                lines.append(
                    f"\nFirst files whose {part} differ: " + ", ".join(f"`{n}`" for n in c["examples"][part]) + "."
                )
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
