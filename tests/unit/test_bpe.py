"""The rank-table counter (core/bpe.py) counts what tiktoken's encoding counts, for every text it
covers: every code point in probe texts, generated families (long runs take the heap merge),
corpus files; a text holding a code point outside Unicode 14.0 is not covered."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from unveil.core import bpe, tokens

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"


@pytest.fixture(scope="module")
def both():
    """(tiktoken's full encoding, a counter reading the rank table)."""
    from unveil.core.rank_table import RankTable

    ranks, long = tokens._get_ranks()
    table = RankTable.build((k, v) for k, v in ranks.items() if len(k) <= bpe.SHORT_MAX)
    return tokens._encoding_of(ranks), bpe.TableCounter(table, long), table


def _probe(c: str) -> str:
    return f"a{c}b A{c} {c}1 1{c} {c}{c}\n{c}'s !{c}! \t{c}\n\n x{c}y {c}'LL {c}\r\n"


def test_every_covered_code_point_counts_as_tiktoken_counts(both):
    """All 1,114,112 code points but the surrogates, each in one probe text that puts it after
    and before letters, digits, spaces, punctuation, line breaks and contractions."""
    enc, counter, _ = both
    bad, seen = [], 0
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        text = _probe(chr(cp))
        if not bpe.covered(text):
            continue
        seen += 1
        if counter.count(text) != len(enc.encode_ordinary(text)):
            bad.append(hex(cp))
    assert bad == [] and seen == sum(hi - lo + 1 for lo, hi in bpe.load_assigned()) - 2048  # the surrogates


def test_generated_texts_count_as_tiktoken_counts(both):
    """Random texts over letters of several scripts, marks, digits, contractions, every kind of
    space and line break; one in five is a long run of one piece (the heap merge past
    SIMPLE_MAX bytes)."""
    enc, counter, _ = both
    rng = random.Random(14)
    alphabet = list("aAzZ09 \t\n\r'!?.,-_/=#*`~\\\"") + [
        "é", "ß", "ж", "Ω", "中", "한", "ア", "😀", "👍🏽", "\u0301", "\u00a0", "\u2028", "\u3000",
        "'s", "'LL", "'Ve", "ſ", "K", "İ", "ﬀ", "１", "½", "Ⅻ", "٣", "\u200b", "\ufeff", "\U0010fffd",
    ]  # fmt: skip
    long_runs = 0
    for k in range(2500):
        if k % 5 == 0:
            unit = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3)))
            text = unit * rng.randint(40, 1500) + "".join(rng.choice(alphabet) for _ in range(30))
            long_runs += max(len(p.encode("utf-8")) for p in counter._findall(text)) > bpe.SIMPLE_MAX
        else:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        assert bpe.covered(text)
        assert counter.count(text) == len(enc.encode_ordinary(text)), repr(text[:120])
    assert long_runs > 100


def test_the_two_merges_agree_on_every_prefix_of_long_pieces(both):
    _, counter, _ = both
    rng = random.Random(7)
    for _ in range(60):
        word = "".join(rng.choice("abcdefghij tion ing er ") for _ in range(rng.randint(2, 200))).replace(" ", "")
        b = word.encode()
        if len(b) < 2:
            continue
        assert bpe._merge_simple(b, counter.rank) == bpe._merge_heap(b, counter.rank), word


def test_corpus_files_count_as_tiktoken_counts(both):
    enc, counter, _ = both
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file())[::7]
    if not files:
        pytest.skip("corpus not found")
    counted = 0
    for p in files:
        text = tokens._clean(p.read_bytes().decode("utf-8", "surrogateescape"))
        if not bpe.covered(text):
            continue
        counted += 1
        for part in tokens.chunks(text):
            assert counter.count(part) == len(enc.encode_ordinary(part)), p
    assert counted >= 0.95 * len(files)


def test_covered_is_unicode_14_assigned():
    assert bpe.covered("plain ASCII, é, 中文, 😀, \U0010fffd (private use)")
    assert not bpe.covered("new in Unicode 15: \U0001fa75")
    assert not bpe.covered("unassigned: \u0378")
    assert not bpe.covered("a noncharacter is Cn too: \ufdd0")
    assert bpe.covered("")
    ranges = bpe.load_assigned()
    assert ranges[0] == (0, 0x377) and len(ranges) == 698
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))


def test_an_unusable_data_file_covers_nothing(tmp_path, monkeypatch):
    bad = tmp_path / "assigned.txt"
    for content in ("0000..XYZ\n", "0100..0050\n", "0000..0010\n0005..0020\n", "110000\n"):
        bad.write_text(content, encoding="ascii")
        with pytest.raises(ValueError, match="assigned.txt:"):
            bpe.load_assigned(bad)
    bpe._outside.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(bpe, "DATA", tmp_path / "missing.txt")
        assert bpe.covered("hello") is False  # then tiktoken counts every text
        bpe._outside.cache_clear()
    assert bpe.covered("hello") is True


def test_the_memo_is_bounded(both, monkeypatch):
    _, counter, table = both
    fresh = bpe.TableCounter(table, {})
    monkeypatch.setattr(bpe, "MEMO_MAX", 10)
    words = " ".join(f"w{i}x" for i in range(50))
    assert fresh.count(words) == counter.count(words)
    assert len(fresh._memo) <= 10


def test_long_pre_tokens_go_to_tiktoken_once_the_budget_is_spent(both, monkeypatch):
    """The counter merges pre-tokens over SIMPLE_MAX bytes itself (about 3 µs a byte) until
    LONG_BUDGET bytes of them are spent, then hands them to ``long_piece`` (tiktoken's merge in
    unveil.core.tokens); one that answers ``None`` leaves them to the counter. Counts are the
    same all along."""
    enc, _, table = both
    _, long = tokens._get_ranks()
    monkeypatch.setattr(bpe, "LONG_BUDGET", 1_000)
    handed: list[int] = []

    def long_piece(b: bytes) -> int:
        handed.append(len(b))
        return len(enc._encode_single_piece(b))

    counter = bpe.TableCounter(table, long, long_piece=long_piece)
    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)) for n in (30, 300, 400, 500, 600)]
    for w in words:
        assert counter.count(w) == len(enc.encode_ordinary(w)), w
    assert handed == [500, 600]  # 300 + 400 spent 700 of the 1,000; 500 would pass it
    assert counter.long_budget == 300
    refusing = bpe.TableCounter(table, long, long_piece=lambda b: handed.append(-len(b)))
    refusing.long_budget = 0
    assert refusing.count(words[-1]) == len(enc.encode_ordinary(words[-1])) and handed[-1] == -600


def test_tokens_hands_long_pre_tokens_to_tiktoken_merge():
    b = ("xq" * 400).encode()
    assert tokens._long_piece(b) == len(tokens.encoding().encode_ordinary(b.decode()))


def test_ascii_texts_are_split_by_the_ascii_pattern_as_by_the_full_one(both):
    """O200K_ASCII_PAT (stdlib re) splits every ASCII text as O200K_PAT (regex) does: 20,000
    generated texts over all 128 code points and contractions in every case, and the corpus's
    ASCII files; the counts are tiktoken's."""
    import re

    import regex

    enc, counter, _ = both
    full = regex.compile(bpe.O200K_PAT).findall
    ascii_ = re.compile(bpe.O200K_ASCII_PAT).findall
    rng = random.Random(128)
    alphabet = [chr(i) for i in range(128)] + ["'s", "'S", "'LL", "'Ve", "'d", "  ", "\r\n", "\n\n", "Ab", "aB"]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        assert ascii_(text) == full(text), repr(text)
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 2000)))
        assert counter.count(text) == len(enc.encode_ordinary(text)), repr(text[:100])
    files = [p for p in sorted(CORPUS.rglob("*"))[::5] if p.is_file()]
    texts = [t for t in (p.read_bytes().decode("utf-8", "replace") for p in files) if t.isascii()]
    assert texts or not files
    for t in texts:
        assert ascii_(t) == full(t)
