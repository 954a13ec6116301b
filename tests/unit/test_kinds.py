"""File kinds from paths and frontmatter."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
from corpus_labels import KIND_LABELS as LABELS

from unveil.core import frontmatter, kinds

AGENT_FM = {"name": "reviewer", "description": "Reviews code", "tools": "Read"}


@pytest.mark.parametrize(
    ("path", "fm", "expected"),
    [
        (".claude/agents/reviewer.md", None, "claude-agent"),
        (".claude/agents/team/reviewer.md", None, "claude-agent"),
        ("plugins/p/agents/reviewer.md", None, "claude-agent"),
        ("some/agents/reviewer.md", AGENT_FM, "claude-agent"),
        ("some/agents/overview.md", None, "markdown"),  # weak pattern needs name + description
        ("categories/01/api-designer.md", AGENT_FM, "claude-agent"),  # frontmatter alone
        ("categories/01/api-designer.md", {"name": "a", "description": "b"}, "markdown"),
        (".claude/skills/pdf/SKILL.md", None, "claude-skill"),
        (".agents/skills/pdf/SKILL.md", None, "claude-skill"),
        (".claude/skills/pdf/references/forms.md", None, "claude-skill-resource"),
        ("plugins/p/skills/pdf/agents/grader.md", AGENT_FM, "claude-skill-resource"),
        (".claude/commands/commit.md", None, "claude-command"),
        ("plugins/p/commands/commit.md", None, "claude-command"),
        (".roo/commands/commit.md", {"description": "Commit"}, "claude-command"),
        ("CLAUDE.md", None, "claude-md"),
        ("pkg/CLAUDE.local.md", None, "claude-md"),
        (".claude/CLAUDE.md", None, "claude-md"),
        (".claude/rules/testing.md", None, "claude-rules"),
        (".claude/output-styles/teacher.md", None, "claude-output-style"),
        ("AGENTS.md", None, "agents-md"),
        ("sub/AGENTS.override.md", None, "agents-md"),
        ("GEMINI.md", None, "gemini-md"),
        (".cursor/rules/python.mdc", None, "cursor-rule"),
        ("rules/vue.mdc", None, "cursor-rule"),
        (".cursorrules", None, "cursorrules"),
        (".windsurf/rules/style.md", None, "windsurf-rule"),
        (".windsurfrules", None, "windsurf-rule"),
        (".clinerules/general.md", None, "cline-rules"),
        (".clinerules", None, "cline-rules"),
        (".roo/rules-code/1_workflow.xml", None, "roo-rules"),
        (".roo/rules/general.md", None, "roo-rules"),
        (".kiro/steering/tech.md", None, "kiro-steering"),
        (".github/copilot-instructions.md", None, "copilot-instructions"),
        (".github/instructions/ts.instructions.md", None, "copilot-instructions-file"),
        ("prompts/readme.prompt.md", None, "copilot-prompt"),
        ("agents/expert.agent.md", None, "copilot-agent"),
        ("chatmodes/plan.chatmode.md", None, "copilot-agent"),
        (".github/agents/helper.md", None, "copilot-agent"),
        (".openhands/microagents/repo.md", None, "openhands-microagent"),
        ("README.md", None, "markdown"),
        (None, None, "markdown"),
        (None, AGENT_FM, "claude-agent"),
        ("C:\\repo\\.claude\\agents\\x.md", None, "claude-agent"),
        ("file:///home/u/repo/.claude/commands/a%20b.md", None, "claude-command"),
        ("claude.md", None, "markdown"),  # names are case-sensitive
    ],
)
def test_detect_kind(path, fm, expected):
    assert kinds.detect_kind(path, fm) == expected


def test_kind_info():
    k = kinds.kind_info("claude-agent")
    assert (k.id, k.label, k.cost) == ("claude-agent", "Claude Code subagent", "agent-listing")
    assert "listing" in k.notes or "lists" in k.notes
    assert kinds.kind_info("no-such-kind").id == "markdown"
    ids = [k.id for k in kinds.all_kinds()]
    assert len(ids) == len(set(ids)) and ids[-1] == "markdown"


def test_detect_kind_never_raises_on_odd_input():
    assert kinds.detect_kind("////", {"name": object()}) == "markdown"
    assert kinds.detect_kind("x/agents/a.md", {"name": ["a"], "description": 3}) == "claude-agent"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/.cursorrules", True),
        ("README.md", True),
        ("x/.roo/rules-code/a.xml", True),
        (".roorules-code", True),
        ("skills/x/scripts/a.py", False),
        ("src/main.py", False),
        ("Makefile", False),
        ("x.mdc", True),
    ],
)
def test_is_agent_file(path, expected):
    assert kinds.is_agent_file(path) is expected


CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "benign"


@pytest.mark.skipif(not (CORPUS / "MANIFEST.tsv").exists(), reason="corpus not present")
def test_agreement_with_corpus_manifest():
    """Human kind labels of 3,349 real files vs detect_kind. The known disagreements are the
    anthropics/skills skill-creator/agents/*.md prompts (resources of a skill), a Copilot
    .github/agents file labelled as a Claude agent, two CLAUDE.md test fixtures with other
    names and a Gemini CLI command."""
    misses = collections.Counter()
    total = 0
    for line in (CORPUS / "MANIFEST.tsv").read_text().splitlines()[1:]:
        label, repo, _commit, path, *_ = line.split("\t")
        text = (CORPUS / repo.replace("/", "__") / path).read_text("utf-8", "surrogateescape")
        got = kinds.detect_kind(path, frontmatter.parse(text).mapping)
        total += 1
        if got != LABELS.get(label, label):
            misses[(label, got)] += 1
    assert total > 3000
    assert sum(misses.values()) <= 8, misses


def test_kind_by_weak_pattern_follows_the_frontmatter_when_the_path_is_known():
    """The pattern matches of a path are kept (kinds._path_kinds); the frontmatter's part of the
    decision is made again at each call."""
    detect_kind = kinds.detect_kind
    kinds_mod = kinds
    kinds_mod._PATH_KINDS.clear()
    path = "/work/plugin/agents/reviewer.md"
    assert detect_kind(path, {"name": "r", "description": "d"}) == "claude-agent"
    assert path in kinds_mod._PATH_KINDS
    assert detect_kind(path, {"description": "d"}) == "markdown"  # no name: not a subagent
    assert detect_kind(path, None) == "markdown"
    assert detect_kind(path, {"name": "r", "description": "d"}, {"**/reviewer.md": "claude-skill"}) == "claude-skill"
