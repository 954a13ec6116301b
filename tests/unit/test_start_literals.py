"""Patterns searched only where their start literals occur (``pattern_analysis.start_literals``,
``directives._anchored``) give exactly one ``finditer``'s matches: every bundled pattern with
start literals over corpus files and texts made of its own literals."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from unveil.core.checks import directives
from unveil.core.checks.literal_index import Lines, records
from unveil.core.checks.pattern_analysis import FLAGS, start_literals

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        (r"\bnpx\s+-y", {"npx"}),
        (r"(?<![\w.-])(?:nslookup|dig|Host)\s+\S+", {"nslookup", "dig", "host"}),
        (r"^[ \t]*tools:", None),  # a class first
        (r"(?:pip3?|uv\s+pip)\s+install", {"pip", "uv"}),
        (r"(?:ab)+c", {"ab"}),
        (r"(?:ab)?c", None),  # may start with "c"
        (r"[xY]yz", {"x", "y"}),
        (r"(?=foo)fo+", {"f"}),  # the literal run stops at a repeat
        (r"a|\w", None),
        (r"(?-i:Sk-)live", {"sk-"}),  # a group gives its own start
        (r"\p{L}x", None),  # regex-only syntax
    ],
)
def test_start_literals(pattern, want):
    got = start_literals(pattern, FLAGS)
    assert (None if got is None else set(got)) == want


def _texts() -> list[str]:
    rng = random.Random(3)
    files = sorted((CORPUS / "benign").rglob("*.md")) if (CORPUS / "benign").is_dir() else []
    texts = [p.read_text(encoding="utf-8", errors="replace")[:30000] for p in rng.sample(files, min(12, len(files)))]
    return texts


def _anchored_records(pat, text: str) -> list | None:
    lits = start_literals(pat.pattern, pat.flags)
    folded = text.casefold()
    if lits is None or len(folded) != len(text):
        return None
    starts = set()
    for lit in lits:
        i = folded.find(lit)
        while i >= 0:
            starts.add(i)
            i = folded.find(lit, i + 1)
    return list(records(directives._anchored(pat, text, sorted(starts), 5.0)))


def test_every_bundled_pattern_with_start_literals_matches_as_one_finditer():
    pats = [p for pr in directives.load_pattern_rules().rules for p in pr.patterns]
    texts = _texts()
    rng = random.Random(5)
    compared = 0
    for pat in pats:
        lits = start_literals(pat.pattern, pat.flags)
        if lits is None:
            continue
        # a text made of the pattern's own start literals among corpus words: many candidate starts
        words = " ".join(rng.choice(texts).split()[:400]).split() if texts else ["word"]
        own = " ".join(rng.choice([*sorted(lits), *words[:50]]) for _ in range(300))
        for text in [*texts[:4], own, own.upper()]:
            got = _anchored_records(pat, text)
            if got is None:
                continue
            assert got == list(records(pat.finditer(text))), pat.pattern
            compared += 1
    assert compared > 1000


def test_start_positions_skip_a_text_where_the_literals_are_everywhere():
    class T:
        text = "x" * 100

        def line_index(self):
            return Lines(self.text, self.text.casefold())

    import regex

    common = regex.compile(r"x+y", FLAGS)
    assert directives._start_positions(common, T()) is None  # "x" at every offset: one finditer
    assert list(directives._start_positions(regex.compile(r"xxxxxxxxxxy", FLAGS), T())) == []  # never occurs
    assert directives._start_positions(regex.compile(r"(?:xy|x{50})z", FLAGS), T()) is None  # "x" again


def test_start_positions_of_several_literals_are_each_offset_once_in_order():
    """The literals' offsets merged (``_union``): what a set of them sorted gives, as an array."""
    import regex

    text = ("nc ncat netcat xnc NCAT nc\nnetcat " + "." * 500) * 7

    class T:
        def __init__(self, text):
            self.text = text

        def line_index(self):
            return Lines(self.text, self.text.casefold())

    pat = regex.compile(r"(?:nc|xn|ne)\w*", FLAGS)
    lits = start_literals(pat.pattern, pat.flags)
    assert len(lits) >= 2
    folded = text.casefold()
    want = sorted({m.start() for lit in lits for m in regex.finditer(regex.escape(lit), folded, overlapped=True)})
    got = directives._start_positions(pat, T(text))
    assert list(got) == want and got.typecode == "q"
    rng = random.Random(3)
    for _ in range(200):
        a = sorted(rng.sample(range(60), rng.randint(0, 20)))
        b = sorted(rng.sample(range(60), rng.randint(0, 20)))
        assert list(directives._union(a, b)) == sorted(set(a) | set(b))
