"""Every rule's documented examples (rules/*.toml): each bad example fires that rule at its line,
each good example does not fire it, and every rule has at least one of each."""

from __future__ import annotations

import pytest

from unveil.core.analyze import analyze
from unveil.core.rules import bundled_rules

RULES = list(bundled_rules())


def test_rule_files_load_without_errors():
    assert bundled_rules().errors == []
    assert len(RULES) > 0


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples(rule):
    if rule.raw.get("examples") == "none":  # e.g. UNV001: only a crashing check fires it
        assert rule.raw.get("examples_reason"), f'{rule.id}: examples = "none" needs an examples_reason'
        assert not rule.bad and not rule.good, f'{rule.id}: examples = "none" but examples given'
        pytest.skip(f"{rule.id}: {rule.raw['examples_reason']}")
    assert rule.bad, f"{rule.id} has no bad example"
    assert rule.good, f"{rule.id} has no good example"
    # token budgets need counts: without them TOK rules fired only when an earlier test had loaded
    # the tokenizer (count_tokens=False does not wait for it)
    counts = rule.id.startswith("TOK")
    for n, ex in enumerate(rule.bad):
        result = analyze(ex.text, ex.path, count_tokens=counts)
        lines = sorted(result.doc.position(f.start).line + 1 for f in result.findings if f.rule == rule.id)
        assert ex.line in lines, f"{rule.id} bad[{n}]: expected a finding at line {ex.line}, got lines {lines}"
    for n, ex in enumerate(rule.good):
        result = analyze(ex.text, ex.path, count_tokens=counts)
        hits = [(result.doc.position(f.start).line + 1, f.message) for f in result.findings if f.rule == rule.id]
        assert hits == [], f"{rule.id} good[{n}] fired: {hits}"


# Rules whose limit counts what the agent reads byte by byte or character by character: a
# carriage return is one more of them, so with CRLF line breaks the limit is reached elsewhere.
_LINE_BREAK_COUNTED = {"TOK010", "TOK013"}


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_examples_hold_with_other_line_breaks(rule, newline):
    """The same examples with CRLF or lone-CR line breaks (LSP 3.17 and CommonMark end lines at
    all three): each bad example still fires its rule at its line, no good example fires it. (A
    CRLF file went unreported by AGY001 and AGY003, whose patterns end lines at ``$`` or ``\\n``,
    and a payload split across CRLF lines was not joined.)"""
    if rule.raw.get("examples") == "none" or rule.id in _LINE_BREAK_COUNTED:
        pytest.skip("no examples, or a limit the carriage returns count towards")
    counts = rule.id.startswith("TOK")
    for n, ex in enumerate(rule.bad):
        if "\r" in ex.text:
            continue  # an example about carriage returns themselves
        result = analyze(ex.text.replace("\n", newline), ex.path, count_tokens=counts)
        lines = sorted(result.doc.position(f.start).line + 1 for f in result.findings if f.rule == rule.id)
        assert ex.line in lines, f"{rule.id} bad[{n}] {newline!r}: expected a finding at line {ex.line}, got {lines}"
    for n, ex in enumerate(rule.good):
        if "\r" in ex.text:
            continue
        result = analyze(ex.text.replace("\n", newline), ex.path, count_tokens=counts)
        hits = [result.doc.position(f.start).line + 1 for f in result.findings if f.rule == rule.id]
        assert hits == [], f"{rule.id} good[{n}] {newline!r} fired at lines {hits}"
