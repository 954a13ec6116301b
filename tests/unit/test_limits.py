"""Host caps (TOK010–TOK013), token budgets (TOK001–TOK004), the ``budgets`` / ``claudeRatio``
settings and the ≈ Claude estimate. Token figures are o200k counts computed once with the
bundled tokenizer and hard-coded."""

from __future__ import annotations

from unveil.core import tokens
from unveil.core.analyze import analyze
from unveil.core.checks import limits
from unveil.core.config import Settings
from unveil.core.findings import Severity

LINE = "Build with `make`; test with `make test`.\n"  # 42 bytes, 11 tokens


def _only(a, rule):
    return [f for f in a.findings if f.rule == rule]


def test_byte_cut():
    assert limits.byte_cut("abc", 3) is None
    assert limits.byte_cut("abcd", 3) == 3
    assert limits.byte_cut("aé", 2) == 1  # é is 2 bytes and does not fit entirely
    assert limits.byte_cut("\U0001f600x", 4) == 1


def test_agents_md_cut_at_the_exact_place():
    text = LINE * 800  # 33,600 bytes; 32,768 = 780 lines × 42 + 8
    a = analyze(text, "/x/AGENTS.md")
    [f] = _only(a, "TOK010")
    assert f.severity == Severity.WARNING
    assert (a.doc.position(f.start).line, a.doc.position(f.start).character) == (780, 8)
    assert (a.doc.position(f.end).line, a.doc.position(f.end).character) == (780, 41)
    assert f.message == (
        "Codex stops reading here (project_doc_max_bytes 32 KiB): the model never reads line 781 "
        "from column 9 through line 800 (219 tokens)"
    )
    assert f.tokens == 219 == tokens.count(text[f.start :])


def test_agents_md_cut_on_a_line_break_moves_to_the_next_line():
    text = "Intro.\n" + "x" * 32761 + "\n" + LINE * 20  # byte 32,769 is the line break after the x's
    [f] = _only(analyze(text, "/x/AGENTS.md"), "TOK010")
    assert f.message == (
        "Codex stops reading here (project_doc_max_bytes 32 KiB): the model never reads lines 3–22 (220 tokens)"
    )


def test_agents_md_cut_counts_utf8_bytes():
    text = "é" * 20000  # 40,000 bytes: the cut is at code point 16,384
    [f] = _only(analyze(text, "/x/AGENTS.md"), "TOK010")
    assert f.start == 16384
    assert "line 1 from column 16385 (" in f.message


def test_agents_md_within_limit_and_other_kinds():
    assert _only(analyze(LINE * 780, "/x/AGENTS.md"), "TOK010") == []
    assert _only(analyze(LINE * 800, "/x/notes.md"), "TOK010") == []


def test_skill_description_cut_in_a_folded_scalar():
    desc1 = ("alpha beta " * 60).strip()
    desc2 = ("gamma delta " * 60).strip()
    text = f"---\nname: big\ndescription: >-\n  {desc1}\n  {desc2}\n---\nBody.\n"
    a = analyze(text, "/x/skills/big/SKILL.md")
    [f] = _only(a, "TOK011")
    # the parsed description is desc1 + " " + desc2 (1,379 characters); character 1,024 is on line 5
    pos = a.doc.position(f.start)
    assert (pos.line, pos.character) == (4, 366)
    assert text[f.start : f.start + 10] == "a delta ga" == (desc1 + " " + desc2)[1024:1034]
    assert f.message == (
        "description is 1,379 characters; the Agent Skills spec allows 1,024 and claude.ai and the "
        "Skills API reject the skill: the 355 characters from here on are over the limit (60 tokens)"
    )


def test_listing_cut_in_when_to_use():
    text = '---\nname: big\ndescription: "short"\nwhen_to_use: "' + "when " * 320 + '"\n---\nBody.\n'
    a = analyze(text, "/x/skills/big/SKILL.md")
    [f] = _only(a, "TOK012")
    pos = a.doc.position(f.start)
    assert (pos.line, pos.character) == (3, 14 + 1536 - len("short - "))
    assert f.severity == Severity.INFO
    assert f.message == (
        "Claude Code cuts the skill listing here: description + when_to_use is 1,607 characters and the "
        "listing keeps 1,536; the model never sees the rest of when_to_use (15 tokens)"
    )
    assert _only(a, "TOK011") == []


def test_listing_not_cut_when_model_invocation_disabled():
    text = "---\ndescription: " + "word " * 330 + "\ndisable-model-invocation: true\n---\nBody.\n"
    assert _only(analyze(text, "/x/.claude/commands/c.md"), "TOK012") == []


def test_windsurf_cut():
    rule = "Always run the linter before you commit changes.\n"  # 49 characters
    a = analyze(rule * 250, "/x/.windsurf/rules/big.md")
    [f] = _only(a, "TOK013")
    assert f.start == 12000
    assert f.message == (
        "Windsurf truncates rule files at 12,000 characters: the model never reads line 245 from "
        "column 45 through line 250 (52 tokens)"
    )


def test_session_budget_configurable_and_claude_estimate():
    text = "# P\n\nRun the tests before each commit, always, without exception.\n"  # 15 tokens
    assert tokens.count(text) == 15
    assert _only(analyze(text, "/x/CLAUDE.md"), "TOK001") == []
    settings = Settings().merged({"budgets": {"sessionTokens": 10}, "claudeRatio": 1.2})
    a = analyze(text, "/x/CLAUDE.md", settings)
    [f] = _only(a, "TOK001")
    assert (f.start, f.end, f.severity) == (0, 3, Severity.INFO)
    assert (
        f.message == "This file adds 15 tokens to every session (≈ Claude 18); the budget is 10 (budgets.sessionTokens)"
    )
    assert (a.tokens.claude_ratio, a.tokens.claude_session, a.tokens.claude_invoke) == (1.2, 18, 0)
    off = Settings().merged({"budgets": {"sessionTokens": 0}})
    assert _only(analyze(text * 300, "/x/CLAUDE.md", off), "TOK001") == []


def test_default_claude_ratio_from_price_table():
    a = analyze("# P\n\nRun the tests before each commit, always, without exception.\n", "/x/CLAUDE.md")
    assert a.tokens.claude_ratio == 1.55
    assert a.tokens.claude_session == 23  # round(15 × 1.55)


def test_session_budget_counts_imports():
    files = {"/x/big.md": LINE * 300}  # 3,300 tokens
    a = analyze("@big.md\n", "/x/CLAUDE.md", reader=files.get)
    [f] = _only(a, "TOK001")
    assert a.tokens.session == 4 + 3300  # "@big.md\n" is 4 tokens
    assert f.message.startswith("This file adds 3,304 tokens to every session, 3,300 of them from @imports (≈ Claude ")


def test_listing_and_skill_body_budgets():
    agent = "---\nname: verbose\ndescription: " + "word " * 250 + "\n---\nYou review code.\n"
    [f] = _only(analyze(agent, "/x/.claude/agents/verbose.md"), "TOK002")
    assert f.message == (
        "The listing line costs 257 tokens every session (≈ Claude 398); the budget is 200 (budgets.listingTokens)"
    )
    skill = "---\nname: long\ndescription: A long skill.\n---\n" + LINE * 460  # body 5,060 tokens
    [g] = _only(analyze(skill, "/x/skills/long/SKILL.md"), "TOK003")
    assert g.tokens == 5060
    assert g.message.startswith("The skill body is 5,060 tokens once invoked (≈ Claude 7,843)")
    assert (
        _only(
            analyze(skill, "/x/skills/long/SKILL.md", Settings().merged({"budgets": {"skillBodyTokens": 6000}})),
            "TOK003",
        )
        == []
    )


def test_claude_md_lines_budget():
    assert [f.message for f in _only(analyze("- item\n" * 201, "/x/CLAUDE.md"), "TOK004")] == [
        "CLAUDE.md has 201 lines; Claude Code's docs recommend under 200 (budgets.claudeMdLines)"
    ]
    assert _only(analyze("- item\n" * 200, "/x/CLAUDE.md"), "TOK004") == []


def test_bad_settings_are_reported_not_raised():
    s = Settings().merged({"budgets": {"sessionTokens": "lots"}, "claudeRatio": -1, "workspaceScan": False})
    assert s.problems == (
        "setting budgets.sessionTokens: 'lots' is not a whole number",
        "setting 'claudeRatio' must be a positive number (Claude tokens per o200k token)",
    )
    assert s.workspace_scan is False and s.claude_ratio is None


def test_budgets_never_wait_for_the_tokenizer(monkeypatch):
    # While the tokenizer loads (language server start-up), diagnostics come first: the budget
    # rules are left out instead of blocking; analyze(count_tokens=True) loads it and has them.
    text = LINE * 300
    monkeypatch.setattr(tokens, "ready", lambda: False)
    monkeypatch.setattr(tokens, "preload", lambda: None)
    pending = analyze(text, "/x/CLAUDE.md", count_tokens=False)
    assert _only(pending, "TOK001") == [] and pending.tokens is None
    monkeypatch.undo()
    assert len(_only(analyze(text, "/x/CLAUDE.md"), "TOK001")) == 1
