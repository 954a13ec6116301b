"""The ``kinds`` setting / ``--kind GLOB=KIND`` flag: files with other names mapped to a kind."""

from __future__ import annotations

import json

import pytest

from unveil.cli import main
from unveil.core import kinds
from unveil.core.analyze import analyze
from unveil.core.config import Settings

AGENT = "---\nname: reviewer\ndescription: Reviews code\n---\nReview the diff.\n"
MAP = {"docs/personas/*.md": "claude-agent", "**/RULES.md": "cursorrules"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/personas/reviewer.md", "claude-agent"),
        ("/home/u/proj/docs/personas/reviewer.md", "claude-agent"),  # relative glob matches the tail
        ("file:///home/u/proj/docs/personas/reviewer.md", "claude-agent"),
        ("C:\\proj\\docs\\personas\\reviewer.md", "claude-agent"),
        ("docs/personas/deep/reviewer.md", "markdown"),  # "*" does not cross folders
        ("RULES.md", "cursorrules"),
        ("a/b/RULES.md", "cursorrules"),
        ("a/b/rules.md", "markdown"),  # case-sensitive, like the bundled patterns
        ("CLAUDE.md", "claude-md"),  # unmapped files keep the bundled detection
    ],
)
def test_detect_kind_with_map(path, expected):
    assert kinds.detect_kind(path, None, MAP) == expected


def test_map_wins_over_bundled_patterns_and_frontmatter():
    fm = {"name": "reviewer", "description": "Reviews code"}
    assert kinds.detect_kind(".claude/agents/reviewer.md", fm) == "claude-agent"
    assert kinds.detect_kind(".claude/agents/reviewer.md", fm, {".claude/agents/*.md": "markdown"}) == "markdown"
    assert kinds.detect_kind("AGENTS.md", None, {"AGENTS.md": "claude-md"}) == "claude-md"


def test_first_matching_entry_wins_and_unknown_ids_are_skipped():
    assert (
        kinds.detect_kind("x/RULES.md", None, {"RULES.md": "cline-rules", "**/RULES.md": "cursorrules"})
        == "cline-rules"
    )
    assert kinds.detect_kind("x/RULES.md", None, {"RULES.md": "no-such-kind"}) == "markdown"
    assert kinds.detect_kind(None, None, MAP) == "markdown"
    assert kinds.detect_kind("x/RULES.md", None, "not a mapping") == "markdown"  # type: ignore[arg-type]


def test_setting_merges_and_reports_unknown_kind_ids():
    s = Settings().merged({"unveil": {"kinds": MAP}})
    assert dict(s.kind_map) == MAP
    assert s.problems == ()
    s2 = s.merged({"kinds": {"x/*.md": "claude-agnet", "y/*.md": "claude-skill", "z/*.md": 3}})
    assert dict(s2.kind_map) == {**MAP, "y/*.md": "claude-skill"}
    assert len(s2.problems) == 2
    assert s2.problems[0].startswith("setting kinds.x/*.md: unknown kind 'claude-agnet' (known: agents-md, ")
    assert s2.problems[1].startswith("setting kinds.z/*.md: unknown kind 3 ")
    s3 = Settings().merged({"kinds": ["docs/*.md"]})
    assert s3.kind_map == {} and s3.problems == ("setting 'kinds' must map path globs to kind ids",)
    assert Settings().merged({"kinds": None}).kind_map == {}


def test_analyze_uses_the_setting():
    settings = Settings().merged({"kinds": MAP})
    assert analyze(AGENT, "docs/personas/reviewer.md").kind == "markdown"
    assert analyze(AGENT, "docs/personas/reviewer.md", settings).kind == "claude-agent"


def test_cli_kind_flag_changes_json_kind(tmp_path, monkeypatch, capsys):
    (tmp_path / "docs" / "personas").mkdir(parents=True)
    (tmp_path / "docs" / "personas" / "reviewer.md").write_text(AGENT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    path = "docs/personas/reviewer.md"
    assert main(["check", path, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["kind"] == "markdown"
    assert main(["check", path, "--format", "json", "--kind", "docs/personas/*.md=claude-agent"]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["kind"] == "claude-agent"
    assert (
        main(
            ["cost", path, "--format", "json", "--kind", "RULES.md=cursorrules", "--kind", "personas/*.md=claude-agent"]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["files"][0]["kind"] == "claude-agent"


def test_cli_kind_flag_errors(tmp_path, monkeypatch, capsys):
    (tmp_path / "a.md").write_text("hi\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "a.md", "--kind", "a.md=bogus"]) == 2
    assert "unknown kind 'bogus'" in capsys.readouterr().err
    assert main(["cost", "a.md", "--kind", "a.md"]) == 2
    assert capsys.readouterr().err == "unveil: --kind expects GLOB=KIND, got 'a.md'\n"
