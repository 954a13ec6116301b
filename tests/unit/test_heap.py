"""core/heap.py: malloc_trim through ctypes, and unveil check's pool trims before it forks."""

from __future__ import annotations

import pytest

from unveil.core import heap


class _Libc:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def malloc_trim(self, pad):
        self.calls.append(pad)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_trim_asks_glibc_to_release_everything_free_and_says_whether_it_did():
    for answer, want in ((1, True), (0, False), (OSError("no"), False), (AttributeError("x"), False)):
        libc = _Libc(answer)
        assert heap.trim(libc) is want and libc.calls == [0]


def test_without_glibc_trim_does_nothing(monkeypatch):
    monkeypatch.setattr(heap, "glibc", lambda: None)
    assert heap.trim() is False


def test_on_glibc_the_real_call_is_made():
    if heap.glibc() is None:
        pytest.skip("not glibc")
    assert heap.trim() in (True, False)  # released something, or had nothing to release


def test_the_check_pool_trims_once_before_its_workers_fork(monkeypatch, tmp_path):
    from unveil import cli
    from unveil.core.config import DEFAULT_SETTINGS

    monkeypatch.setenv("UNVEIL_NO_CACHE", "1")
    calls: list[int] = []
    monkeypatch.setattr(heap, "trim", lambda libc=None: calls.append(1) or True)
    for i in range(cli.POOL_MIN_FILES):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "AGENTS.md").write_text(f"# Agents {i}\n\nRun the tests.\n", encoding="utf-8")
    results, errors = cli.analyze_paths([str(tmp_path)], DEFAULT_SETTINGS, jobs=2)
    assert errors == [] and len(results) == cli.POOL_MIN_FILES and calls == [1]
    calls.clear()
    cli.analyze_paths([str(tmp_path / "d0")], DEFAULT_SETTINGS, jobs=2)
    assert calls == []  # one file: no pool


class _Mallopt:
    def __init__(self, answer):
        self.answer, self.calls = answer, []

    def mallopt(self, param, value):
        self.calls.append((param, value))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_large_blocks_are_mapped_once_per_process(monkeypatch):
    monkeypatch.setattr(heap, "_mapped_large", False)
    libc = _Mallopt(1)
    assert heap.map_large_blocks(libc) is True
    assert libc.calls == [(-3, 128 * 1024)]  # M_MMAP_THRESHOLD, glibc's own starting value
    assert heap.map_large_blocks(libc) is True and len(libc.calls) == 1  # set already
    for answer, want in ((0, False), (OSError("no"), False), (AttributeError("x"), False)):
        monkeypatch.setattr(heap, "_mapped_large", False)
        assert heap.map_large_blocks(_Mallopt(answer)) is want
    monkeypatch.setattr(heap, "_mapped_large", False)
    monkeypatch.setattr(heap, "glibc", lambda: None)
    assert heap.map_large_blocks() is False


def test_an_analysis_of_a_big_text_maps_large_blocks(monkeypatch):
    from unveil.core import analyze as an

    calls: list[int] = []
    monkeypatch.setattr(heap, "map_large_blocks", lambda libc=None: calls.append(1) or True)
    monkeypatch.setattr(an, "BIG_TEXT", 50)
    an.analyze("# Short\n", "AGENTS.md", count_tokens=False)
    assert calls == []
    an.analyze("# Long\n\n" + "Run the tests before you commit.\n" * 3, "AGENTS.md", count_tokens=False)
    assert calls == [1]
