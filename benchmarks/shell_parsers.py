#!/usr/bin/env python3
"""Shell parsers on the shell fences of the benign corpus: blocks without a usable tree, and time.

Collects every fenced block whose info string is sh/bash/zsh/shell/console/shell-session from
``../shared/corpus/benign`` (``$ `` prompts stripped), then parses each with tree-sitter-bash
(counting blocks whose tree has an ERROR/MISSING node; tree-sitter still returns a tree for them)
and, when installed, bashlex (counting blocks on which it raises: no tree at all). Prints one line
per parser. Usage: ``python benchmarks/shell_parsers.py [--corpus PATH]`` (``pip install bashlex``
for the comparison; it is not a dependency of unveil).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from markdown_it import MarkdownIt

SH = {"sh", "bash", "zsh", "shell", "console", "shell-session", "shellsession"}


def blocks(root: Path) -> list[str]:
    md = MarkdownIt("commonmark")
    out = []
    for f in sorted(root.rglob("*")):
        if not f.is_file() or f.suffix.lower() not in (".md", ".mdc", ".markdown", ".txt", ""):
            continue
        try:
            text = f.read_text("utf-8", "replace")
        except OSError:
            continue
        for tok in md.parse(text):
            lang = (tok.info.strip().split() or [""])[0].lower() if tok.type == "fence" else ""
            if lang in SH:
                body = tok.content
                if lang == "console" or re.search(r"^\s*\$ ", body, re.M):
                    body = "\n".join(
                        ln.split("$ ", 1)[1] if ln.lstrip().startswith("$ ") else "" for ln in body.split("\n")
                    )
                out.append(body)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "corpus")
    args = ap.parse_args()
    bs = blocks(args.corpus / "benign")
    print(f"{len(bs)} shell blocks, {sum(map(len, bs))} characters")
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    p = Parser(Language(tree_sitter_bash.language()))
    t0 = time.perf_counter()
    err = sum(1 for b in bs if p.parse(b.encode()).root_node.has_error)
    print(
        f"tree-sitter-bash: {err} blocks with ERROR/MISSING nodes (a tree for every block), "
        f"{time.perf_counter() - t0:.3f} s"
    )
    try:
        import bashlex
    except ImportError:
        print("bashlex: not installed")
        return
    t0 = time.perf_counter()
    fail = 0
    for b in bs:
        try:
            bashlex.parse(b)
        except Exception:  # noqa: BLE001 - counting failures is the point
            fail += 1
    print(f"bashlex: {fail} blocks raised (no tree), {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
