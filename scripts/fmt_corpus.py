"""Run the FMT (frontmatter format) rules over the benign corpus and print counts.

Usage: python scripts/fmt_corpus.py [CORPUS_DIR] [--list RULE_OR_SEVERITY ...]

Prints FMT finding counts by rule and severity, and lists every file with an FMT error (and
the findings of the rules or severities named with --list). Not a test: a proof run.
"""

from __future__ import annotations

import collections
import os
import sys

from unveil.core import frontmatter, kinds
from unveil.core.checks import frontmatter_schema as fs


def main(argv: list[str]) -> int:
    root = "../shared/corpus/benign"
    show: set[str] = set()
    args = list(argv)
    if args and not args[0].startswith("--"):
        root = args.pop(0)
    if args and args[0] == "--list":
        show = set(args[1:])
    counts: collections.Counter = collections.Counter()
    files_checked = 0
    errors = []
    listed = []
    for dp, _dn, fn in sorted(os.walk(root)):
        for f in sorted(fn):
            p = os.path.join(dp, f)
            if not kinds.is_agent_file(p):
                continue
            try:
                text = open(p, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            kind = kinds.detect_kind(p, frontmatter.parse(text).mapping)
            schema = fs.schema_for(kind)
            if schema is None:
                continue
            files_checked += 1
            for finding in fs.check_text(text, schema, p):
                counts[(finding.rule, finding.severity.label)] += 1
                line = text[: finding.start].count("\n") + 1
                item = (os.path.relpath(p, root), line, finding.rule, finding.severity.label, finding.message[:160])
                if finding.severity.label == "error":
                    errors.append(item)
                if finding.rule in show or finding.severity.label in show:
                    listed.append(item)
    print(f"files with a frontmatter schema: {files_checked}")
    for (rule, sev), n in sorted(counts.items()):
        print(f"{rule}\t{sev}\t{n}")
    print(f"\nerrors ({len(errors)}):")
    for e in errors:
        print("  ", *e, sep="  ")
    if listed:
        print(f"\nlisted ({len(listed)}):")
        for e in listed:
            print("  ", *e, sep="  ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
