"""Session-wide test settings: unveil's on-disk cache (:mod:`unveil.core.cache`) goes to a fresh
temporary directory, never the user's, for this process and every process it starts."""

from __future__ import annotations

import os
import tempfile

os.environ["UNVEIL_CACHE_DIR"] = tempfile.mkdtemp(prefix="unveil-test-cache-")
os.environ.pop("UNVEIL_NO_CACHE", None)
