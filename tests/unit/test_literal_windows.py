"""``Lines.windows``: the seed spans of the chosen clause are sorted as single integers (start *
w + length) instead of pairs. Over generated texts, clauses and match widths, the windows equal
those of the pairs sorted as tuples (the earlier computation, rewritten here as the reference),
including occurrences near the text's start (clipped at 0), several literals of different
lengths in one clause, and a later clause chosen for having fewer occurrences. And the longest
runs and the word index that read a long text in pieces (``longest_word``, ``longest_match``,
``word_index``) against one pass over the whole text."""

from __future__ import annotations

import random

import pytest

from unveil.core.checks import literal_index as li
from unveil.core.checks.literal_index import Lines


def _reference(lines: Lines, clauses, bounds):
    width = sum(k * lines.longest_run(cls) for cls, k in bounds[0])
    reach = sum(k * lines.longest_run(cls) for cls, k in bounds[1]) + 2
    n = len(lines.folded)
    limit = max(16, n // (4 * max(width, 1)))
    seeds = None
    for clause in clauses:
        got: list[tuple[int, int]] = []
        cap = limit if seeds is None else len(seeds) - 1
        ok = True
        for lit in clause:
            occ = lines.occurrences(lit, cap - len(got)) if cap >= len(got) else None
            if occ is None:
                ok = False
                break
            d = len(lit) - width
            got.extend((max(0, o + d), o + 1) for o in occ)
        if ok:
            seeds = got
            if len(seeds) <= li._FEW_SEEDS:
                break
    if seeds is None:
        return None
    spans: list[tuple[int, int]] = []  # the seeds merged when at most reach apart
    for a, b in sorted(seeds):
        if spans and a <= spans[-1][1] + reach:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    return [(a, b, min(n, b - 1 + reach)) for a, b in spans]


WORDS = ["curl", "cu", "rl", "send", "token", "x", "the", "secret", "env"]


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS + ["a", "bb", "ccc", "\n"]) for _ in range(rng.randrange(0, 400))]
    return " ".join(words)


@pytest.mark.parametrize("seed", range(200))
def test_windows_equal_the_pairs_sorted(seed):
    rng = random.Random(seed)
    text = _text(rng)
    clauses = [[rng.choice(WORDS) for _ in range(rng.randrange(1, 4))] for _ in range(rng.randrange(1, 4))]
    bounds = ([(r"[^\n]", rng.randrange(1, 3)), (r"\S", rng.randrange(0, 2))], [(r"\s", rng.randrange(0, 3))])
    lines = Lines(text, text)
    width = sum(k * lines.longest_run(cls) for cls, k in bounds[0])
    if any(len(lit) > width for clause in clauses for lit in clause):
        pytest.skip("a match is at least as wide as each literal it holds (see the test below)")
    got = lines.windows(clauses, bounds)
    want = _reference(Lines(text, text), clauses, bounds)
    assert got == want


def test_a_width_below_a_literals_length_searches_the_whole_text():
    """A bound narrower than a literal the match holds cannot come from a real pattern; the
    windows are refused (``None``: the caller searches the whole text) rather than guessed."""
    text = "a " * 200 + "secret " + "b " * 200
    lines = Lines(text, text)
    assert lines.longest_run(r"\s") == 1
    assert lines.windows([["secret"]], ([(r"\s", 1)], [])) is None
    wide = ([(r"\S", 1)], [(r"\S", 1)])  # as wide as the literal: windows
    assert lines.windows([["secret"]], wide) == _reference(Lines(text, text), [["secret"]], wide) == [(400, 401, 408)]


def test_windows_clip_at_the_start_and_merge_overlaps():
    text = "curl x curl " + "a " * 300 + "send curl"
    lines = Lines(text, text)
    bounds = ([(r"[^\n]", 1)], [(r"[^\n]", 0)])
    width = lines.longest_run(r"[^\n]")
    got = lines.windows([["curl", "send"]], bounds)
    assert got == _reference(Lines(text, text), [["curl", "send"]], bounds)
    assert got[0][0] == 0 and width > len("curl")  # the first occurrence's window clipped at 0


@pytest.mark.parametrize("chunk", [1, 3, 16, 1 << 20])
def test_the_longest_word_and_the_word_index_read_in_pieces_equal_one_pass(monkeypatch, chunk):
    """``longest_word`` and ``word_index`` read a long text in pieces cut after line feeds: the
    same answers as ``str.split`` and one ``findall`` over the whole text, over generated texts
    with long lines, runs of spaces and line feeds, non-ASCII words and no line feed at all."""
    monkeypatch.setattr(li, "WORD_CHUNK", chunk)
    rng = random.Random(chunk)
    pieces = ["ab", "c", " ", "  ", "\n", "\n\n", "\t", "é", "ñandú", "\u3000", "x" * 40, "_9", "—"]
    texts = ["", "\n", "word", "no line feed at all " * 5]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 120))) for _ in range(150)]
    for text in texts:
        assert "".join(li.line_chunks(text)) == text
        assert li.longest_word(text) == max(map(len, text.split()), default=0), text
        assert sorted(li.word_index(text).split("\n")) == sorted(set(li._WORD_RUN.findall(text))) or (
            not li._WORD_RUN.findall(text) and li.word_index(text) == ""
        )


@pytest.mark.parametrize("chunk", [1, 4, 1 << 20])
@pytest.mark.parametrize("cls", [r"\s", r"\S", r"[\s\w]", r"\W", r"[\W_]", r"[\s\w-]", r"[^\n]"])
def test_a_class_runs_longest_read_in_pieces_equals_one_pass(monkeypatch, chunk, cls):
    """``Lines.longest_run`` of every class the pattern widths use (``pattern_analysis._run_key``)
    reads a long text in pieces that end where a run of the class ends: the same answer as one
    ``findall`` of the class's runs over the whole text (and ``str.split`` for ``\\S``)."""
    import regex

    monkeypatch.setattr(li, "WORD_CHUNK", chunk)
    rng = random.Random(len(cls) * 7 + chunk)
    pieces = ["ab", "c", " ", "  ", "\n", "\n\n", "\t", "é", "-", "_", "--", "!?", "x" * 30, " \u3000 "]
    for _ in range(60):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 150)))
        want = max(map(len, regex.compile("(?:" + cls + ")+", li._FLAGS).findall(text)), default=0)
        if cls == r"\S":
            want = max(map(len, text.split()), default=0)
        assert Lines(text, text).longest_run(cls) == want, (cls, text)
