"""The labelled corpus cases, run through scripts/accuracy.py (fast mode, no benign scan).

Fails when a synthetic hidden-content case is no longer found at its line, a malicious
hidden-content positive is missed, or a hard negative / negative control gets an error — the
issue's accuracy targets. The benign false-positive rate is measured by the full script run
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
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "| synthetic hidden-content cases found at their line | 13/13 | yes |" in proc.stdout
    assert "| hard negatives and negative controls with no error | 8/8 | yes |" in proc.stdout
