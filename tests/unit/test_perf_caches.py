"""The user cache (unveil.core.cache), the cached tokenizer ranks, the cached rule analysis with
patterns compiled on first use, and the first-file token budget race (issue 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from unveil.core import cache, tokens
from unveil.core.checks import directives


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(d))
    monkeypatch.delenv(cache.ENV_OFF, raising=False)
    return d


def test_marshal_and_pickle_round_trip(cache_dir):
    assert cache.load_marshal("x", "k") is None
    assert cache.store_marshal("x", "k", {"a": (1, frozenset({"b"}))})
    assert cache.load_marshal("x", "k") == {"a": (1, frozenset({"b"}))}
    assert cache.store_pickle("y", "k", [1, 2])
    assert cache.load_pickle("y", "k") == [1, 2]
    assert oct((cache_dir / "x").stat().st_mode & 0o777) == "0o700"


def test_corrupt_entry_is_a_miss(cache_dir):
    cache.store_marshal("x", "k", [1])
    (cache_dir / "x" / "k").write_bytes(b"\xff\x00garbage")
    assert cache.load_marshal("x", "k") is None
    (cache_dir / "y").mkdir()
    (cache_dir / "y" / "k").write_bytes(b"not a pickle")
    assert cache.load_pickle("y", "k") is None


def test_no_cache_turns_reads_and_writes_off(cache_dir, monkeypatch):
    monkeypatch.setenv(cache.ENV_OFF, "1")
    assert cache.cache_dir() is None
    assert cache.store_marshal("x", "k", 1) is False
    assert not cache_dir.exists()


def test_unwritable_cache_dir_is_harmless(tmp_path, monkeypatch):
    f = tmp_path / "file"
    f.write_text("x")
    monkeypatch.setenv(cache.ENV_DIR, str(f / "sub"))  # below a regular file: cannot be created
    assert cache.store_marshal("x", "k", 1) is False
    assert cache.load_marshal("x", "k") is None


def test_digest_is_length_prefixed():
    assert cache.digest(["ab", "c"]) != cache.digest(["a", "bc"])
    assert cache.digest([b"x"]) == cache.digest(["x"])


def test_cached_ranks_give_the_same_encoding(cache_dir):
    ranks = tokens._ranks_of((tokens.DATA_DIR / tokens.DATA_FILE).read_bytes())
    assert tokens._cached_ranks() is None
    cache.store_marshal("tokenizer", f"o200k-{tokens.O200K_SHA256[:16]}", ranks)
    got = tokens._cached_ranks()
    assert got == ranks
    enc = tokens._encoding_of(got)
    assert enc.encode_ordinary("hello world") == [24912, 2375]
    # a truncated entry is ignored and the bundled file is used
    cache.store_marshal("tokenizer", f"o200k-{tokens.O200K_SHA256[:16]}", {b"a": 1})
    assert tokens._cached_ranks() is None


def test_wait_returns_after_loading():
    assert tokens.wait() is True
    assert tokens.ready()


def test_cached_rule_analysis_equals_fresh(cache_dir):
    directives.load_pattern_rules.cache_clear()
    try:
        fresh = directives.load_pattern_rules(())  # miss: every pattern compiled, analysis stored
        assert list((cache_dir / "rules").iterdir())
        directives.load_pattern_rules.cache_clear()
        cached = directives.load_pattern_rules(())  # hit: lazy patterns
    finally:
        directives.load_pattern_rules.cache_clear()
    assert [r.id for r in cached.rules] == [r.id for r in fresh.rules]
    assert cached.errors == fresh.errors == []
    lazy = [p for r in cached.rules for p in r.patterns]
    assert all(isinstance(p, directives._LazyPattern) for p in lazy)
    assert not any(isinstance(p, directives._LazyPattern) for r in fresh.rules for p in r.patterns)
    for a, b in zip(fresh.rules, cached.rules):
        assert a.prefilters == b.prefilters and a.single_line == b.single_line and a.widths == b.widths
        assert [p.pattern for p in a.patterns] == [p.pattern for p in b.patterns]
        assert [p.pattern for p in a.requires + a.excludes + a.raise_if + a.lower_if] == [
            p.pattern for p in b.requires + b.excludes + b.raise_if + b.lower_if
        ]
    # a lazy pattern compiles on first use and then matches like the compiled one
    p = cached.rules[0].patterns[0]
    assert p._compiled is None
    text = "tools: Bash(*)\n"
    assert [m.span() for m in p.finditer(text)] == [m.span() for m in fresh.rules[0].patterns[0].finditer(text)]
    assert p._compiled is not None


def test_lazy_pattern_forwards_errors_of_use_not_of_compiling():
    p = directives._LazyPattern(r"a+b", directives._FLAGS)
    assert p.pattern == "a+b" and p.search("xaab").span() == (1, 4)


SKILL_BODY = "# Skill\n\n" + "".join(
    f"Step {i}: check the module {i} and report what it returns.\n" for i in range(600)
)


def test_first_file_of_a_run_gets_token_budget_findings(tmp_path):
    """Race (issue 10): analyze() warmed the tokenizer with count(""), which returned at once,
    so the first file of a CLI run skipped the TOK rules."""
    skill = tmp_path / ".claude" / "skills" / "big" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: big\ndescription: A big skill.\n---\n" + SKILL_BODY, encoding="utf-8")
    env = dict(os.environ, UNVEIL_NO_CACHE="1")
    out = subprocess.run(
        [sys.executable, "-m", "unveil", "check", "--format", "json", str(skill)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    data = json.loads(out.stdout)
    rules = [f["rule"] for f in data["files"][0]["findings"]]
    assert rules.count("TOK003") == 1, out.stdout
    assert data["files"][0]["tokens"]["invoke"] > 5000


def test_a_damaged_ranks_entry_is_rebuilt_from_the_bundled_file(cache_dir, monkeypatch):
    import threading

    ranks = tokens._ranks_of((tokens.DATA_DIR / tokens.DATA_FILE).read_bytes())
    shifted = {k: (v + 1) % len(ranks) for k, v in ranks.items()}  # right size, wrong values
    key = f"o200k-{tokens.O200K_SHA256[:16]}"
    cache.store_marshal("tokenizer", key, shifted)
    monkeypatch.setattr(tokens, "_done", threading.Event())
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "_error", None)
    monkeypatch.setattr(tokens, "_ranks", None)  # read again: from the damaged entry
    monkeypatch.setattr(tokens, "_long", None)
    monkeypatch.setattr(tokens, "_thread", None)
    monkeypatch.setattr(tokens, "_counter", None)
    monkeypatch.setattr(tokens, "_counter_source", None)
    monkeypatch.setattr(tokens, "_subsets", None)
    assert tokens.encoding().encode_ordinary("hello world") == [24912, 2375]
    assert cache.load_marshal("tokenizer", key) == ranks  # the entry was rewritten
