"""o200k_base token counting from the bundled, hash-verified BPE file."""

from __future__ import annotations

import gzip
import threading

import pytest

from unveil.core import tokens


def test_hello_world_matches_tiktoken():
    assert tokens.count("hello world") == 2
    assert tokens.encoding().encode_ordinary("hello world") == [24912, 2375]
    assert tokens.encoding().n_vocab == 200019


def test_ready_after_wait():
    tokens.count("x")
    assert tokens.ready()
    assert tokens.count("hello world", wait=False) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("# Project\n\nUse uv for Python. Run `make test` before committing.\n", 16),
        ("<|endoftext|>", 7),  # special tokens are ordinary text, never raise
        ("a\udcff b \ud800", 4),  # lone surrogates count as U+FFFD
    ],
)
def test_exact_counts(text, expected):
    assert tokens.count(text) == expected


def test_wait_false_returns_none_while_loading(monkeypatch):
    monkeypatch.setattr(tokens, "_done", threading.Event())
    monkeypatch.setattr(tokens, "_thread", object())  # pretend a load is in progress
    monkeypatch.setattr(tokens, "_subsets", None)  # (prepare() sets up subsets only when none is)
    assert tokens.ready() is False
    assert tokens.count("hello world", wait=False) is None
    assert tokens.count("", wait=False) == 0


def test_hash_mismatch_is_a_clear_error():
    with pytest.raises(tokens.TokenizerError, match="SHA-256"):
        tokens.build_encoding(gzip.compress(b"aGVsbG8= 0\n"))


def test_not_gzip_is_a_clear_error():
    with pytest.raises(tokens.TokenizerError, match="decompressed"):
        tokens.build_encoding(b"not gzip")


def test_concurrent_counts_agree():
    text = "Thread-safe counting of agent files. " * 50
    expected = tokens.count(text)
    results: list[int] = []

    def work():
        results.append(tokens.count(text))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 8
    assert expected == 351
