"""The code-object table of attrs/cattrs generated methods (unveil.lsp.codecache, issue 10)."""

from __future__ import annotations

import subprocess
import sys

import attr
import pytest

from unveil.core import cache
from unveil.lsp import codecache


@pytest.fixture
def fronted(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_OFF, raising=False)
    codecache.uninstall()
    for k in codecache.stats:
        codecache.stats[k] = 0
    yield tmp_path / "cache"
    codecache.uninstall()


def _define(n: int):
    @attr.define
    class Point:
        x: int
        y: int = n

    return Point


def test_generated_methods_are_stored_then_loaded_and_behave_the_same(fronted):
    assert codecache.install() == list(codecache.MODULES)
    assert codecache.install() == list(codecache.MODULES)  # idempotent
    first = _define(7)
    assert codecache.stats["compiled"] >= 1 and codecache.stats["stored"] == codecache.stats["compiled"]
    first_compiled = codecache.stats["compiled"]
    assert codecache.save() is True
    assert codecache.save() is False  # nothing new
    assert (fronted / "code" / codecache.table_key()).is_file()

    codecache.uninstall()
    codecache.stats.update(loaded=0, compiled=0, stored=0)
    codecache.install()
    second = _define(7)
    assert codecache.stats["loaded"] == first_compiled and codecache.stats["compiled"] == 0
    assert repr(second(1)) == repr(first(1)) == "Point(x=1, y=7)"
    assert second(1) == second(1, 7) and second(1) != second(2)
    with pytest.raises(TypeError):
        second()


def test_other_compile_calls_go_to_the_builtin(fronted):
    codecache.install()
    before = dict(codecache.stats)
    assert codecache._front("1 + 2", "<x>", "eval").co_filename == "<x>"
    assert eval(codecache._front("1 + 2", "<x>", "eval")) == 3
    assert codecache._front(b"y = 1", "<x>", "exec").co_filename == "<x>"
    assert codecache._front("y = 1", "<x>", "exec", dont_inherit=True).co_filename == "<x>"
    assert codecache.stats == before
    with pytest.raises(SyntaxError):
        codecache._front("def (", "<bad>", "exec")
    assert ("def (", "<bad>") not in codecache._table


@pytest.mark.parametrize(
    "table",
    [
        b"not marshal",
        {("src", "<a>"): "not code"},
        {("x = 1", "<other>"): compile("x = 1", "<a>", "exec")},  # filename differs: dropped
        {"key": compile("x = 1", "<a>", "exec")},
        [1, 2],
    ],
)
def test_a_damaged_or_foreign_table_is_ignored(fronted, table):
    key = codecache.table_key()
    if isinstance(table, bytes):
        (fronted / "code").mkdir(parents=True)
        (fronted / "code" / key).write_bytes(table)
    else:
        cache.store_marshal("code", key, table)
    assert codecache._read_table(key) == {}
    codecache.install()
    _define(3)(1)  # compiled afresh
    assert codecache.stats["loaded"] == 0 and codecache.stats["compiled"] >= 1


def test_no_cache_leaves_the_libraries_alone(fronted, monkeypatch):
    monkeypatch.setenv(cache.ENV_OFF, "1")
    assert codecache.install() == []
    import attr._make

    assert "compile" not in attr._make.__dict__


def test_the_server_writes_the_table_and_the_next_one_loads_it(tmp_path):
    """Two ``unveil serve`` processes that exit at once (end of input): the first stores the
    lsprotocol methods, the second loads them all."""
    env = {"UNVEIL_CACHE_DIR": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"}
    probe = (
        "import sys; from unveil.lsp import codecache; from unveil.cli import main; "
        "rc = main(['serve']); print(codecache.stats['loaded'], codecache.stats['compiled'], file=sys.stderr)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", probe], input=b"", capture_output=True, env=env, timeout=120)
        for _ in range(2)
    ]
    first, second = ([int(x) for x in r.stderr.decode().split()[-2:]] for r in runs)
    assert first[0] == 0 and first[1] > 400
    assert second == [first[1], 0]
