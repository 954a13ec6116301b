"""The labelled corpus cases, run through scripts/accuracy.py (fast mode, no benign scan).

Fails when a labelled case (synthetic, or a line of tests/data/malicious-labels.tsv) is no longer
found at its line by a finding of its category, a malicious hidden-content positive is missed, or a
hard negative / negative control gets an error — the accuracy targets of issues 2 and 3. The benign false-positive rate is measured by the full script run
(figures in docs/accuracy.md), not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("UNVEIL_CORPUS", ROOT.parent / "shared" / "corpus"))


def test_labelled_corpus_targets_met():
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"corpus not found at {CORPUS}")
        pytest.skip(f"corpus not found at {CORPUS}")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "accuracy.py"), "--corpus", str(CORPUS), "--skip-benign", "--no-write"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "| synthetic hidden-content cases found at their line | 13/13 | yes |" in proc.stdout
    assert "| hard negatives and negative controls with no error | 8/8 | yes |" in proc.stdout
    # issue 3: per-category recall on the synthetic labels and our malicious line labels
    # (tests/data/malicious-labels.tsv), counting only findings of the label's category
    assert "| hidden-content | 13/13 | 4/4 | 17/17 |" in proc.stdout
    assert "| prompt-injection | 3/3 | 6/6 | 9/9 |" in proc.stdout
    assert "| system-prompt-leakage | 0/0 | 2/2 | 2/2 |" in proc.stdout
    assert "Excluded from recall (11, category `none-in-text`):" in proc.stdout
    assert "MISSED" not in proc.stdout
