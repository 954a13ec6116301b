"""Session-wide test settings: unveil's on-disk cache (:mod:`unveil.core.cache`) goes to a fresh
temporary directory, never the user's, for this process and every process it starts; the helper
modules of ``tests/adversarial`` (``mutate``, ``corpus_labels``) are importable from every test."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "adversarial"))

os.environ["UNVEIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="unveil-test-cache-")
os.environ.pop("UNVEIL_NO_CACHE", None)


@pytest.fixture
def generous_pattern_timeouts(monkeypatch):
    """Pattern searches get 60 s instead of :data:`~unveil.core.checks.directives.PATTERN_TIMEOUT`:
    for tests that compare two analyses of one text (an open document's against a fresh one). On a
    loaded virtual machine a search can be charged CPU time it did not use (time stolen by the
    host counts as the thread's), and a time-out in one analysis and not the other (UNV002) is not
    the difference such a test looks for. The time-out tests themselves do not use this."""
    from unveil.core.checks import directives

    monkeypatch.setattr(directives, "pattern_timeout", lambda n_chars: 60.0)
