"""Session-wide test settings: unveil's on-disk cache (:mod:`unveil.core.cache`) goes to a fresh
temporary directory, never the user's, for this process and every process it starts; the helper
modules of ``tests/adversarial`` (``mutate``, ``corpus_labels``) are importable from every test."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "adversarial"))

os.environ["UNVEIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="unveil-test-cache-")
os.environ.pop("UNVEIL_NO_CACHE", None)
