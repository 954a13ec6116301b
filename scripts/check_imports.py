"""Architecture check: no import circle inside the ``unveil`` package, and ``unveil.core`` imports no
adapter (``unveil.lsp``, ``unveil.cli``, ``unveil.reporters``, ``unveil.commands_lock``).

Usage: ``python scripts/check_imports.py`` (from the repository root; ``.ci/run`` runs it). The
import graph comes from grimp (every ``import`` statement, module level or inside a function, so
a lazy import that closes a circle counts too). Exit status 0 when both hold; 1 with one line per
circle (its modules) and per forbidden import (importer → imported, line numbers).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("unveil.lsp", "unveil.cli", "unveil.reporters", "unveil.commands_lock")


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def main() -> int:
    sys.path.insert(0, str(ROOT / "server"))
    import grimp

    graph = grimp.build_graph("unveil", include_external_packages=False)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    problems = [f"import circle: {' ↔ '.join(c)}" for c in circles(edges)]
    for m in sorted(graph.modules):
        if not (m == "unveil.core" or m.startswith("unveil.core.")):
            continue
        for imported in sorted(edges[m]):
            if any(imported == a or imported.startswith(a + ".") for a in ADAPTERS):
                lines = [d["line_number"] for d in graph.get_import_details(importer=m, imported=imported)]
                problems.append(f"core imports an adapter: {m} → {imported} (line {', '.join(map(str, lines))})")
    for p in problems:
        print(p)
    print(f"check_imports: {len(graph.modules)} modules, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
