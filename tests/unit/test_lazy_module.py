"""``core.lazy.lazy_module``: found at once, executed on first attribute read, one object for
every way of importing it."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from unveil.core.lazy import lazy_module


@pytest.fixture
def package(tmp_path, monkeypatch):
    pkg = tmp_path / "lazypkg_t"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "heavy.py").write_text("import lazypkg_t\nlazypkg_t.RUNS = getattr(lazypkg_t, 'RUNS', 0) + 1\nVALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazypkg_t"
    for name in [m for m in sys.modules if m == "lazypkg_t" or m.startswith("lazypkg_t.")]:
        del sys.modules[name]


def test_the_module_runs_on_first_attribute_read(package):
    mod = lazy_module(f"{package}.heavy")
    parent = importlib.import_module(package)
    assert getattr(parent, "RUNS", 0) == 0
    assert mod.VALUE == 42
    assert parent.RUNS == 1
    assert mod.VALUE == 42 and parent.RUNS == 1


def test_every_import_form_gets_the_same_object(package):
    mod = lazy_module(f"{package}.heavy")
    from lazypkg_t import heavy  # type: ignore[import-not-found]

    assert heavy is mod
    assert importlib.import_module(f"{package}.heavy") is mod
    assert sys.modules[package].heavy is mod
    assert lazy_module(f"{package}.heavy") is mod


def test_a_missing_module_is_an_error_now(package):
    with pytest.raises(ModuleNotFoundError):
        lazy_module(f"{package}.absent")


def test_the_cli_defines_its_commands_without_the_lock_module_git_or_the_tokenizer():
    code = (
        "import sys\n"
        "from unveil import cli\n"
        "cli.build_parser()\n"
        "loaded = [m for m in ('unveil.core.lock', 'unveil.core.fingerprint', 'tiktoken', 'unveil.core.git', 'subprocess')"
        " if type(sys.modules.get(m)).__name__ == 'module']\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
