"""The model view's map back to the original (:class:`unveil.core.normalize.RunMap`, runs instead
of one offset per code point) answers exactly as the per-code-point list it replaced: every
offset, range start and end (negative and past-the-end offsets included, errors included) and
every reverse lookup, over a generated family of texts with tag characters, ignorables, NFKC
expansions, combining marks and CJK."""

from __future__ import annotations

import bisect
import random
import unicodedata

import pytest

from unveil.core import normalize as N

ALPHABET = list("ab c\n") + [
    "é", "\u200b", "\u00ad", "ﬁ", "①", "\U000e0041", "\U000e0001", "\U000e007f", "\u0301", "日", "㍿", "\ufeff", "ǅ", "ﷺ",
]  # fmt: skip


def _per_code_point(text: str) -> list[int] | None:
    """The map as the earlier implementation built it: one original offset per view code point."""
    if text.isascii():
        return None
    omap: list[int] = []
    pos = 0
    for m in N._SPECIAL.finditer(text):
        omap.extend(range(pos, m.start()))
        for i in range(m.start(), m.end()):
            cp = ord(text[i])
            if 0xE0000 <= cp <= 0xE007F:
                if 0xE0020 <= cp <= 0xE007E:
                    omap.append(i)
                continue
            if N._IGNORABLE.match(text[i]):
                continue
            omap.extend([i] * len(unicodedata.normalize("NFKC", text[i])))
        pos = m.end()
    omap.extend(range(pos, len(text)))
    return omap


def _outcome(f, *args):
    try:
        return f(*args)
    except IndexError:
        return IndexError


def _ref_start(ol: list[int], n: int, i: int) -> int:
    return n if i >= len(ol) else ol[i]


def _ref_end(ol: list[int], i: int) -> int:
    return (ol[0] if ol else 0) if i <= 0 else ol[min(i, len(ol)) - 1] + 1


@pytest.mark.parametrize("seed", range(3))
def test_run_map_answers_as_the_per_code_point_list(seed):
    rnd = random.Random(seed)
    mapped = 0
    for _ in range(1500):
        t = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randrange(0, 40)))
        v = N._model_view(t)
        ol = _per_code_point(t)
        if ol is None:
            assert v.omap is None
            continue
        mapped += 1
        assert len(v.omap) == len(ol) == len(v.text)
        for i in range(-len(ol) - 2, len(ol) + 3):
            assert _outcome(v.orig_start, i) == _outcome(_ref_start, ol, len(t), i)
            assert _outcome(v.orig_end, i) == _outcome(_ref_end, ol, i)
        for o in range(-2, len(t) + 3):
            assert v.view_offset(o) == bisect.bisect_left(ol, o)
        origs = [rnd.randrange(-2, len(t) + 3) for _ in range(12)]  # any order, repeats
        assert v.view_offsets(origs) == [bisect.bisect_left(ol, o) for o in origs]
    assert mapped > 1000
    assert N.ModelView("abc").view_offsets([2, 0, 5]) == [2, 0, 5]  # no map: the offsets themselves


def test_run_map_is_a_few_runs_for_a_long_text():
    text = ("Plain prose with a café and a naïve résumé.\n" * 5000) + "ﬁ\u200b"
    v = N._model_view(text)
    assert len(v.omap) == len(text) - 1 + 1  # the ligature expands to two, the zero-width space is dropped
    assert len(v.omap.v) == 2  # one run of copied text, one for the expansion
    assert v.orig_start(len(text) - 2) == len(text) - 2 and v.orig_start(len(text) - 1) == len(text) - 2
    assert v.view_offset(len(text) - 1) == len(v.text)


def test_a_lookup_before_the_map_is_complete_does_not_go_stale():
    m = N.RunMap()
    m.add(0, 5)
    assert m.first_at_or_after(7) == 5  # past the end so far
    m.add(5, 5)  # merged into the same run
    assert m.first_at_or_after(7) == 7
    m.add(20, 3, 0)  # a new run
    assert m.first_at_or_after(15) == 10 and m[11] == 20


# -- an open document's model view, put together from its paragraphs' ---------------------------


def _state(mv: N.ModelView) -> tuple:
    m = mv.omap
    runs = None if m is None else (list(m.v), list(m.o), list(m.step), m.n)
    return mv.text, runs, list(mv.tag_runs), mv.original_length


PIECE_ALPHABET = ALPHABET + ["\n\n", "\n\n\n", " \n\n", "😀", "\ufe0f"]


@pytest.mark.parametrize("seed", range(8))
def test_a_pieced_model_view_is_the_whole_texts(seed):
    """Built paragraph by paragraph (cut after blank lines, each piece's view from the memo or
    built), the model view has the same text, runs, tag runs and length as one built whole, over
    generated texts and a memo carried from text to text (which does not grow past about twice
    the latest text's pieces)."""
    rng = random.Random(seed)
    memo: dict = {}
    checked = 0
    for _ in range(300):
        text = "".join(rng.choice(PIECE_ALPHABET) for _ in range(rng.randint(0, 120)))
        if text.isascii():
            continue
        assert _state(N._model_view_pieced(text, memo)) == _state(N._model_view(text))
        pieces = len([m for m in N._PIECE_END.finditer(text)]) + 1
        assert len(memo) <= 3 * pieces + 64  # the memo stays about the latest text's pieces
        checked += 1
    assert checked > 250 and memo


def test_an_open_documents_model_view_is_built_from_the_pieces_it_kept(monkeypatch):
    """In an open document a long non-ASCII text's model view comes from its pieces: after an
    edit of one paragraph only that paragraph's view is built again, and the result equals a
    model view built whole."""
    from unveil.core import scope
    from unveil.core.incremental import DocumentCache

    paras = [f"Paragraph {i}: caf\u00e9 \ufb01le \u200bnote \U000e0041\U000e0042 end.\n\n" for i in range(600)]
    text = "".join(paras)
    assert len(text) > N._PIECED_MIN
    cache = DocumentCache()
    built: list[str] = []
    real = N._model_view
    monkeypatch.setattr(N, "_model_view", lambda t: built.append(t) or real(t))
    with scope.analysis(cache):
        first = N.model_view(text)
    assert len(built) == 600 and _state(first) == _state(real(text))
    paras[300] = paras[300].replace("note", "n\u00f6te")
    text = "".join(paras)
    built.clear()
    with scope.analysis(cache):
        second = N.model_view(text)
    assert built == [paras[300]]
    assert _state(second) == _state(real(text))
    built.clear()
    assert _state(N.model_view(text)) == _state(real(text)) and built == [text]  # no document: whole
