"""Lay out the VS Code test workspace and print the values the editor must show, as JSON.

Usage: python expect.py WORKDIR CORPUS  → copies two corpus files into WORKDIR (a fresh folder):

* ``CLAUDE.md`` — benign/VoltAgent__awesome-claude-code-subagents/CLAUDE.md (no error);
* ``.claude/skills/testing-guidelines/SKILL.md`` — malicious/lirantal__anti-trojan-source
  fixture: 171 Unicode tag characters spelling a hidden instruction (HID001) and
  ``allowed-tools: Bash`` (AGY003).

The expected values (findings with 0-based UTF-16 ranges, inlay hint labels, grades, token
counts) come from :func:`unveil.core.analyze.analyze`, the code the server runs, so the editor
tests check that VS Code shows exactly what the server computes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from unveil.core.analyze import analyze
from unveil.lsp.features.inlay_hints import inlay_hints

FILES = {
    "benign": ("benign/VoltAgent__awesome-claude-code-subagents/CLAUDE.md", "CLAUDE.md"),
    "malicious": ("malicious/lirantal__anti-trojan-source/__tests__/__fixtures__/SKILL.md",
                  ".claude/skills/testing-guidelines/SKILL.md"),
}


def main(work: Path, corpus: Path) -> dict:
    out: dict = {"work": str(work)}
    for key, (src, dst) in FILES.items():
        target = work / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(corpus / src, target)
        text = target.read_text(encoding="utf-8")
        a = analyze(text, str(target), count_tokens=True)
        findings = []
        for f in a.findings:
            s, e = a.doc.client_range(f.start, f.end, "utf-16")
            findings.append({"rule": f.rule, "severity": int(f.severity), "message": f.message,
                             "start": [s.line, s.character], "end": [e.line, e.character],
                             "hidden": f.hidden_text, "fixes": [x.title for x in f.fixes]})
        out[key] = {
            "path": str(target), "name": target.name, "grade": a.grade,
            "session": a.tokens.session, "invoke": a.tokens.invoke,
            "hints": [h.label for h in inlay_hints(a, None, "utf-16")],
            "findings": findings,
        }
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2])), ensure_ascii=False))
