"""benchmarks/floors.py: its arithmetic, its reading of bench.py's results and its table (the
measuring itself is a benchmark, run by hand)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def floors():
    saved = list(sys.path)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import floors as mod
    finally:
        sys.path[:] = saved  # floors.py puts benchmarks/ and server/ first on import: undone
    return mod


def test_row_halves_the_median_for_two_cores(floors):
    r = floors.row("parse", [9.0, 10.0, 30.0], 2, 1, agnix_wall=0.5, goal=2.5)
    assert r == {
        "step": "parse",
        "cpu_s": 10.0,
        "floor_wall_s": 5.0,
        "ratio_to_agnix": 10.0,
        "share_of_goal": 2.0,
        "failed_files": 1,
    }


def test_row_without_agnix_or_goal(floors):
    r = floors.row("encode", [0.4], 1, 0, agnix_wall=None, goal=None)
    assert (r["floor_wall_s"], r["ratio_to_agnix"], r["share_of_goal"]) == (0.4, None, None)


class _Panic(BaseException):
    """Stands for pyo3's ``PanicException``, which derives from ``BaseException``."""


def test_timed_counts_the_texts_a_step_fails_on(floors):
    def step(text: str) -> None:
        if text == "panic":
            raise _Panic
        if text == "error":
            raise ValueError(text)

    cpu, failed = floors.timed(step, ["ok", "panic", "error", "ok"])
    assert failed == 2 and cpu >= 0


def test_timed_lets_an_interrupt_through(floors):
    def step(text: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        floors.timed(step, ["x"])


def _results(tmp_path: Path) -> Path:
    p = tmp_path / "results.json"
    p.write_text(
        json.dumps(
            {
                "commit": "abc1234",
                "date": "2026-12-07 11:36 UTC",
                "corpus": {"unveil_cold": {"wall_s": 45.0, "cpu_s": 88.0}, "agnix": {"wall_s": 0.5}},
                "growth": [
                    {"bytes": 10_000, "unveil": {"wall_s": 0.2}},
                    {"bytes": 9_998_343, "unveil": {"wall_s": 20.9}},
                ],
            }
        ),
        encoding="utf-8",
    )
    return p


def test_unveil_figures_from_bench_results(floors, tmp_path):
    assert floors.unveil_figures(_results(tmp_path)) == {
        "commit": "abc1234",
        "date": "2026-12-07 11:36 UTC",
        "wall_s": 45.0,
        "cpu_s": 88.0,
        "ratio": 90.0,
        "big_wall_s": 20.9,
    }


def test_unveil_figures_only_for_the_same_size(floors, tmp_path):
    assert floors.unveil_figures(_results(tmp_path), big_bytes=10_300_000)["big_wall_s"] == 20.9
    assert floors.unveil_figures(_results(tmp_path), big_bytes=10_600_000)["big_wall_s"] is None
    assert floors.unveil_figures(_results(tmp_path), big_bytes=10_000)["big_wall_s"] == 0.2


@pytest.mark.parametrize(
    "content", ["", "{", "[]", '{"corpus": {}}', '{"corpus": {"unveil_cold": {}, "agnix": {"wall_s": 0}}}']
)
def test_unveil_figures_missing_or_broken(floors, tmp_path, content):
    p = tmp_path / "results.json"
    p.write_text(content, encoding="utf-8")
    assert floors.unveil_figures(p) is None
    assert floors.unveil_figures(tmp_path / "absent.json") is None


def test_render_tables(floors, tmp_path):
    r = {
        "date": "2026-12-07 13:18 UTC",
        "commit": "abc1234",
        "machine": {"nproc": 2, "cpu": "CPU", "python": "3.11.7"},
        "files": 3,
        "bytes": 2_500_000,
        "reps": 3,
        "agnix": "agnix 0.59.3",
        "agnix_wall_s": 0.5,
        "corpus_goal_s": 2.5,
        "rows": [floors.row("markdown-it-py parse", [10.0], 2, 0, 0.5, 2.5)],
        "big_bytes": 10_000_000,
        "big_goal_s": 8.0,
        "big_rows": [floors.row("markdown-it-py parse", [6.8], 1, 0, None, 8.0)],
        "unveil": floors.unveil_figures(_results(tmp_path)),
    }
    text = floors.render(r)
    assert "Issue 10's goal for a 10 MB file: **8 s**." in text
    assert "Issue 10's goal, 5× agnix: **2.50 s** of wall time." in text
    assert "| markdown-it-py parse | 10.00 s | 5.00 s | 10.0× | 2.0× | 0 |" in text
    assert "| markdown-it-py parse | 6.80 s | 0.85× | 0 |" in text
    assert "45.0 s wall, 88.0 s CPU, 90.0× agnix in that run." in text
    assert "unveil's whole run on the same file (`results.md`): 20.9 s." in text


def test_py_structure_reads_blocks_and_inlines(floors):
    text = '# Hi `c`\n\n- a\n- b\n\n<div>\nx\n</div>\n\nSee <b>x</b> [l](http://x "t") ![i](u)\n'
    blocks, inlines = floors.py_structure(floors.markdown_it_py(), text)
    assert blocks == {("heading", 0): 1, ("html_block", 5): 1, ("paragraph", 9): 1}
    assert inlines == {
        ("code_inline", "c"): 1,
        ("html_inline", "<b>"): 1,
        ("html_inline", "</b>"): 1,
        ("link", "http://x", "t"): 1,
        ("image", "u", None): 1,
    }


class _Node:
    """The shape of a markdown-it-pyrs node: ``name``, ``srcmap`` (UTF-8 byte offsets), ``meta``, ``children``."""

    def __init__(self, name, srcmap=None, meta=None, children=()):
        self.name, self.srcmap, self.meta, self.children = name, srcmap, meta or {}, list(children)


def test_rs_structure_counts_lines_in_bytes_and_skips_inline_blocks(floors):
    text = "é€😀\n\nab `c`\n"  # the paragraph starts at byte 11 of line 2
    tree = _Node(
        "root",
        (0, 19),
        children=[
            _Node("paragraph", (0, 9)),
            _Node(
                "paragraph",
                (11, 18),
                children=[
                    _Node("code_inline", (14, 17), children=[_Node("text", (15, 16), {"content": "c"})]),
                    _Node("autolink", (17, 18), {"url": "mailto:a@b.c"}),
                ],
            ),
        ],
    )
    blocks, inlines = floors.rs_structure(lambda t: tree, text)
    assert blocks == {("paragraph", 0): 1, ("paragraph", 2): 1}
    assert inlines == {("code_inline", "c"): 1, ("link", "mailto:a@b.c", None): 1}


def test_compare_parsers_counts_panics_and_differences(floors):
    def rs_tree(text):
        if text == "boom":
            raise _Panic
        if text == "same":
            return _Node("root", (0, 4), children=[_Node("paragraph", (0, 4))])
        return _Node("root", (0, 9), children=[_Node("paragraph", (0, 9))])  # no link node

    texts = [("a.md", "same"), ("b.md", "boom"), ("c.md", "<http://x>")]
    got = floors.compare_parsers(texts, floors.markdown_it_py(), rs_tree)
    assert got == {
        "files": 3,
        "panics": 1,
        "block_files": 0,
        "inline_files": 1,
        "kinds": {"link": 1},
        "examples": {"blocks": [], "inlines": ["c.md"]},
    }
