"""Token counting with tiktoken's ``o200k_base``, loaded from the copy shipped in the package.

STUB — owned by the cost work. Interface:

* :func:`preload` starts loading in a background thread (returns at once);
* :func:`ready` says whether the encoding is loaded;
* :func:`count` counts tokens (``wait=False`` returns ``None`` while still loading).
"""

from __future__ import annotations


def preload() -> None:
    return None


def ready() -> bool:
    return True


def count(text: str, wait: bool = True) -> int | None:
    return len(text.split())
