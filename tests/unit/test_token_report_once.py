"""One analysis computes its token report once: the budget check's report is the one the
analysis returns (issue 10: waste removed), identical to a report computed on its own."""

from __future__ import annotations

from unveil.core import analyze as analyze_mod
from unveil.core import cost, tokens


def _skill(words: int) -> str:
    return "---\nname: big\ndescription: A skill.\n---\n# Big\n\n" + ("Review the change carefully. " * words) + "\n"


def test_budget_check_and_analysis_share_one_report(monkeypatch):
    tokens.wait()
    text = _skill(4000)  # over the skill body budget: the limits check needs the report
    calls = []
    real = cost.token_report

    def counted(ctx, wait=True):
        calls.append(wait)
        return real(ctx, wait)

    monkeypatch.setattr(cost, "token_report", counted)
    result = analyze_mod.analyze(text, ".claude/skills/big/SKILL.md")
    assert calls == [False]  # the limits check's call only
    assert any(f.rule.startswith("TOK") for f in result.findings)
    monkeypatch.setattr(cost, "token_report", real)
    assert result.tokens == real(analyze_mod.context_of(result))


def test_a_small_file_still_gets_its_report(monkeypatch):
    tokens.wait()
    result = analyze_mod.analyze(_skill(3), ".claude/skills/big/SKILL.md")
    assert result.tokens is not None and result.tokens.session > 0
