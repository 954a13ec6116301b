"""The compiled kind globs (issue 10) match exactly like the reference matcher they replaced:
every bundled pattern and user-style globs against generated paths."""

from __future__ import annotations

import fnmatch
import functools
import random

from unveil.core import kinds


def reference_matches(path: str, pattern: str) -> bool:
    """The matcher before issue 10 (a fresh memo per call), kept as the specification."""
    segs = tuple(kinds._segments(path))
    pat = tuple(s for s in pattern.split("/") if s)
    if not pat:
        return False

    def match_from(segs, pat):
        @functools.lru_cache(maxsize=None)
        def go(i, j):
            if j == len(pat):
                return i == len(segs)
            if pat[j] == "**":
                return any(go(k, j + 1) for k in range(i, len(segs) + 1))
            return i < len(segs) and fnmatch.fnmatchcase(segs[i], pat[j]) and go(i + 1, j + 1)

        return go(0, 0)

    if pat[0] == "**":
        return match_from(segs, pat)
    fixed = sum(1 for p in pat if p != "**")
    return any(match_from(segs[start:], pat) for start in range(0, len(segs) - fixed + 1))


def test_compiled_globs_match_like_the_reference():
    rnd = random.Random(10)
    patterns = sorted({p for k in kinds.all_kinds() for p in k.patterns + k.weak_patterns})
    patterns += ["**", "**/x/**", "a/**/b.md", "docs/*.md", "**/agents/*.md", "[!a]*.md", "?.md", "a/**/**/c"]
    names = ["SKILL.md", "AGENTS.md", "CLAUDE.md", "x.md", "a.mdc", "b.md", ".cursorrules", "c", "rules.md"]
    dirs = [
        "a",
        "b",
        "x",
        ".claude",
        "agents",
        "skills",
        "commands",
        ".github",
        "instructions",
        "docs",
        "deep",
        ".cursor",
        "rules",
    ]
    paths = []
    for _ in range(600):
        parts = [rnd.choice(dirs) for _ in range(rnd.randint(0, 5))] + [rnd.choice(names + dirs)]
        sep = rnd.choice(["/", "\\\\"])
        path = sep.join(parts)
        if rnd.random() < 0.3:
            path = "/" + path
        if rnd.random() < 0.1:
            path = "file:///home/u/" + "/".join(parts)
        paths.append(path)
    checked = matched = 0
    for path in paths:
        for pattern in patterns:
            want = reference_matches(path, pattern)
            assert kinds.path_matches(path, pattern) == want, (path, pattern)
            checked += 1
            matched += want
    assert checked == len(paths) * len(patterns) and matched > 200
