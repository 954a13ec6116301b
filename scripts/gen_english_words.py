#!/usr/bin/env python3
"""Generate ``server/unveil/data/english-words.txt.gz``: the most frequent English words, for
the dictionary test of decoded text (:func:`unveil.core.checks.obfuscation.english_words`).

Source: the ``small_en`` word list of the PyPI package **wordfreq** (Robyn Speer et al.; code
Apache-2.0, word-frequency data CC BY-SA 4.0), read through ``wordfreq.top_n_list("en", N,
wordlist="small")``. Install wordfreq in a development environment to regenerate; unveil itself
does not depend on it (the wheel would grow by 57 MB for one list of words).

Output: gzip of UTF-8 text, one word per line, most frequent first: the first ``N`` (30,000)
entries of the list, keeping only lower-case ASCII words of 3 letters or more (the filter the
check applies anyway). The gzip header carries no file name and mtime 0, so the bytes depend
only on the list.

Usage: ``python scripts/gen_english_words.py [N]`` (writes the file, prints the count).
"""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "server" / "unveil" / "data" / "english-words.txt.gz"


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30000
    from wordfreq import top_n_list

    words = [w for w in top_n_list("en", n, wordlist="small") if len(w) >= 3 and w.isascii() and w.isalpha()]
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as f:
        f.write(("\n".join(words) + "\n").encode("utf-8"))
    OUT.write_bytes(buf.getvalue())
    print(f"wrote {OUT.relative_to(ROOT)}: {len(words)} words of the first {n}, {len(buf.getvalue())} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
