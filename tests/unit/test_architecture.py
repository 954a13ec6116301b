"""scripts/check_imports.py: the import-circle finder and the package's own graph."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_imports", ROOT / "scripts" / "check_imports.py")
check_imports = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_imports)


def test_circles_finds_each_strongly_connected_group():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set(), "g": {"g"}}
    assert check_imports.circles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert check_imports.circles({"x": {"y"}, "y": set()}) == []


def test_unveil_has_no_import_circle_and_core_imports_no_adapter():
    got = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_imports.py")], capture_output=True, text=True)
    assert got.returncode == 0, got.stdout + got.stderr
    assert got.stdout.strip().endswith("0 problem(s)")
