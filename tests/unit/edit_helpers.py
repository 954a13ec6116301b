"""Generated edit sequences for the tests that compare what an open document keeps between
versions with a fresh computation (``test_prose_splice.py``, ``test_obfuscation.py``)."""

from __future__ import annotations

import random
from typing import Iterator, Sequence


def versions(
    seed: int,
    pieces: Sequence[str],
    size: int,
    steps: int,
    cuts: Sequence[int] = (0, 0, 1, 2, 6),
    typed: Sequence[int] = (0, 1, 1, 2),
) -> Iterator[str]:
    """``steps`` successive texts: the first ``size`` random ``pieces`` joined, then each the
    last with one edit: at a random offset, a stretch of ``random.choice(cuts)`` code points
    (at most) replaced by ``random.choice(typed)`` random pieces. Deterministic for ``seed``."""
    rnd = random.Random(seed)
    text = "".join(rnd.choice(pieces) for _ in range(size))
    for _ in range(steps):
        yield text
        a = rnd.randrange(len(text) + 1)
        b = min(len(text), a + rnd.choice(cuts))
        text = text[:a] + "".join(rnd.choice(pieces) for _ in range(rnd.choice(typed))) + text[b:]
