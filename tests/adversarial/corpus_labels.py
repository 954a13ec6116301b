"""The corpus labels as scripts/accuracy.py and tests/adversarial/mutate.py read them: the TSV
files (``synthetic/LABELS.tsv``, ``malicious/PROVENANCE.tsv``, ``benign/MANIFEST.tsv`` of
``../shared/corpus``, and our own :data:`MALICIOUS_LABELS`) and the map from the corpus's
risky-directive label names to unveil rule categories.

Importable as ``corpus_labels`` with this folder on ``sys.path`` (tests/conftest.py,
scripts/accuracy.py).
"""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MALICIOUS_LABELS = ROOT / "tests" / "data" / "malicious-labels.tsv"
"""Our own line labels for the ``positive`` rows of ``malicious/PROVENANCE.tsv`` (file, category,
line, note, optional min_severity)."""

KIND_LABELS = {
    "agent-md": "copilot-agent",
    "chatmode": "copilot-agent",
    "instructions-md": "copilot-instructions-file",
    "prompt-md": "copilot-prompt",
    "cursor-mdc": "cursor-rule",
    "skill": "claude-skill",
    "skill-resource": "claude-skill-resource",
    "windsurf-rules": "windsurf-rule",
    "other-agent": "claude-agent",
    "other-command": "claude-command",
}
"""The benign corpus's file labels (``benign/MANIFEST.tsv``, column 1) mapped to the unveil kind id
they correspond to (:mod:`unveil.core.kinds`); a label not listed is the kind id itself."""

RISKY_LABEL_CATEGORY = {
    "sensitive-file-access": "agent-snooping",
    "instruction-override": "prompt-injection",
    "data-exfiltration": "data-exfiltration",
    "encoded-instruction": "obfuscation",
    "remote-code-exec": "supply-chain",
    "safety-override": "anti-refusal",
    "permission-bypass": "privilege-escalation",
    "overbroad-tools": "excessive-agency",
    "cloud-metadata": "ssrf",
}
"""``LABELS.tsv`` risky-directive categories (the corpus's own names) → unveil rule categories
(issue 3); the hidden-content labels are scripts/accuracy.py's ``HIDDEN_LABELS``."""


def read_tsv(path: Path) -> list[dict[str, str]]:
    """Rows of a tab-separated file with a header line (no quoting), as dicts by column name.
    Raises ``OSError`` when the file cannot be read."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
