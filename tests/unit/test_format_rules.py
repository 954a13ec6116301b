"""FMT rules (frontmatter checked per kind): exact rule ids, ranges, severities and fixes;
schema loading; the completion function behind the LSP feature."""

from __future__ import annotations

import pytest

from unveil.core.analyze import analyze
from unveil.core.checks import frontmatter_schema as fs
from unveil.core.findings import Edit, Severity
from unveil.lsp.features.completion import complete

AGENT = ".claude/agents/x.md"
SKILL = ".claude/skills/pdf-tools/SKILL.md"
CURSOR = ".cursor/rules/style.mdc"


def fmt(text: str, path: str):
    """(rule, severity label, covered text) of the FMT findings, in position order."""
    res = analyze(text, path, count_tokens=False)
    return [(f.rule, f.severity.label, text[f.start : f.end]) for f in res.findings if f.rule.startswith("FMT")]


def find(text: str, path: str, rule: str):
    res = analyze(text, path, count_tokens=False)
    hits = [f for f in res.findings if f.rule == rule]
    assert len(hits) == 1, hits
    return hits[0]


def apply(text: str, edits) -> str:
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: e.start] + e.new_text + text[e.end :]
    return text


# --------------------------------------------------------------------------- schemas
def test_schemas_load_and_command_extends_skill():
    s = fs.load_schemas()
    assert {"claude-agent", "claude-skill", "claude-command", "cursor-rule", "copilot-agent"} <= set(s.kinds)
    cmd = s.kinds["claude-command"]
    assert "name" not in cmd.keys and "paths" not in cmd.keys
    assert "allowed-tools" in cmd.keys and cmd.keys["description"].required is None
    assert s.kinds["claude-agent"].keys["name"].required == "error"
    assert "Read" in s.tools["claude"] and "AskUserQuestion" in s.tools["claude"]
    assert fs.schema_for("claude-md") is None


def test_kinds_without_schema_are_not_checked():
    assert fmt("---\nnonsense: [\n---\n# Notes\n", "CLAUDE.md") == []
    assert fmt("---\nfoo: 1\n---\n", "AGENTS.md") == []


def test_valid_subagent_is_clean():
    text = (
        "---\nname: code-reviewer\ndescription: Reviews code.\ntools: Read, Grep, Glob, Bash(git diff:*), "
        "mcp__github__get_issue, Agent(worker)\nmodel: claude-opus-4-1-20250805\npermissionMode: acceptEdits\n"
        "color: cyan\nmaxTurns: 5\n---\nBody\n"
    )
    assert fmt(text, AGENT) == []


# --------------------------------------------------------------------------- keys
def test_typo_key_with_fix():
    text = "---\nname: a\ndescription: b\npermission-mode: plan\n---\n"
    f = find(text, AGENT, "FMT001")
    assert (f.severity, text[f.start : f.end]) == (Severity.WARNING, "permission-mode")
    assert "did you mean 'permissionMode'" in f.message
    assert apply(text, f.fixes[0].edits) == "---\nname: a\ndescription: b\npermissionMode: plan\n---\n"
    assert f.fixes[0].kind == "quickfix"


def test_unknown_key_is_info_and_foreign_keys_are_not_typos():
    text = "---\nname: a\ndescription: b\nproviderId: x\nmodelId: y\n---\n"
    assert fmt(text, AGENT) == [("FMT002", "info", "providerId"), ("FMT002", "info", "modelId")]


def test_cursor_typo_glob_on_line_reader_file():
    text = "---\ndescription: TS\nglob: **/*.ts\n---\nx\n"
    assert fmt(text, CURSOR) == [("FMT001", "warning", "glob")]


# --------------------------------------------------------------------------- types and values
def test_wrong_type_range_is_the_value():
    text = "---\nname: a\ndescription: b\nmaxTurns: many\n---\n"
    assert fmt(text, AGENT) == [("FMT003", "warning", "many")]


def test_applyto_list_is_wrong_type():
    text = '---\napplyTo:\n  - "**/*.ts"\n---\nx\n'
    assert fmt(text, ".github/instructions/ts.instructions.md") == [("FMT003", "warning", '- "**/*.ts"')]


@pytest.mark.parametrize(
    "path",
    [".claude/commands/release.md", ".claude/skills/release/SKILL.md", ".github/prompts/release.prompt.md"],
)
def test_bracketed_argument_hint_is_info_with_a_quoting_fix(path):
    text = "---\nname: release\ndescription: Release\nargument-hint: [major|minor|patch]\n---\nBump.\n"
    assert [x for x in fmt(text, path) if x[0] == "FMT003"] == [("FMT003", "info", "[major|minor|patch]")]
    f = find(text, path, "FMT003")
    assert f.message == (
        "argument-hint [major|minor|patch] is a YAML list because of its brackets; the host shows it as text, "
        'but quote it to keep the brackets: "[major|minor|patch]".'
    )
    assert apply(text, f.fixes[0].edits) == text.replace("[major|minor|patch]", '"[major|minor|patch]"')


def test_argument_hint_block_list_is_still_a_wrong_type():
    text = "---\ndescription: Release\nargument-hint:\n  - major\n  - minor\n---\nBump.\n"
    assert fmt(text, ".claude/commands/release.md") == [("FMT003", "warning", "- major\n  - minor")]


def test_values_outside_set_with_case_fix():
    text = "---\nname: a\ndescription: b\nmodel: Sonnet\npermissionMode: readonly\ncolor: magenta\n---\n"
    got = fmt(text, AGENT)
    assert got == [
        ("FMT004", "warning", "Sonnet"),
        ("FMT004", "warning", "readonly"),
        ("FMT004", "info", "magenta"),
    ]
    f = [x for x in analyze(text, AGENT, count_tokens=False).findings if x.rule == "FMT004"][0]
    assert f.fixes[0].edits == (Edit(text.index("Sonnet"), text.index("Sonnet") + 6, "sonnet"),)


@pytest.mark.parametrize(
    "model",
    [
        "inherit",
        "opus",
        "claude-sonnet-4-5",
        "claude-3-5-haiku@20241022",
        "us.anthropic.claude-sonnet-4-20250514-v1:0",
        "sonnet[1m]",
    ],
)
def test_model_values_allowed(model):
    assert fmt(f"---\nname: a\ndescription: b\nmodel: {model}\n---\n", AGENT) == []


def test_cursor_always_apply_string_true_and_false():
    text = '---\ndescription: d\nalwaysApply: "true"\n---\nx\n'
    f = find(text, CURSOR, "FMT005")
    assert (f.severity, text[f.start : f.end]) == (Severity.WARNING, '"true"')
    assert "treats the string as false" in f.message
    assert apply(text, f.fixes[0].edits) == "---\ndescription: d\nalwaysApply: true\n---\nx\n"
    assert fmt("---\nalwaysApply: 'false'\n---\n", CURSOR) == [("FMT005", "info", "'false'")]


def test_cursor_unquoted_globs_are_not_yaml_errors_but_string_true_still_caught():
    text = '---\ndescription: "x"\nglobs: **/*.ts, src/**/*.tsx\nalwaysApply: "true"\n---\n'
    assert fmt(text, CURSOR) == [("FMT005", "warning", '"true"')]
    assert fmt("---\nglobs: **/*.ts\nalwaysApply: true\n---\n", CURSOR) == []


# --------------------------------------------------------------------------- tools and globs
def test_unknown_tools_with_exact_item_ranges():
    text = "---\nname: a\ndescription: b\ntools: Read, Grepp, Bash(git:*), Webfetch\n---\n"
    got = fmt(text, AGENT)
    assert got == [("FMT006", "warning", "Grepp"), ("FMT006", "warning", "Webfetch")]
    fixes = [f.fixes[0] for f in analyze(text, AGENT, count_tokens=False).findings if f.rule == "FMT006"]
    assert [fx.title for fx in fixes] == ["Replace with 'Grep'", "Replace with 'WebFetch'"]


def test_tools_as_yaml_list_and_skill_space_separated():
    text = "---\nname: a\ndescription: b\ntools:\n  - Read\n  - Serch\n---\n"
    assert fmt(text, AGENT) == [("FMT006", "warning", "Serch")]
    text = "---\nname: pdf-tools\ndescription: d\nallowed-tools: Read Bash(git status:*) Frobnicate\n---\n"
    assert fmt(text, SKILL) == [("FMT006", "warning", "Frobnicate")]
    # A skill outside .claude/ may target another host: info.
    assert fmt(text, "skills/pdf-tools/SKILL.md") == [("FMT006", "info", "Frobnicate")]


def test_glob_unbalanced_brace():
    text = '---\napplyTo: "src/**/*.{ts,tsx"\n---\nx\n'
    assert fmt(text, ".github/instructions/web.instructions.md") == [("FMT007", "warning", "src/**/*.{ts,tsx")]


# --------------------------------------------------------------------------- names
def test_skill_name_invalid_error_with_fix():
    text = "---\nname: PDF Tools!\ndescription: d\n---\n"
    f = find(text, SKILL, "FMT010")
    assert (f.severity, text[f.start : f.end]) == (Severity.ERROR, "PDF Tools!")
    assert apply(text, f.fixes[0].edits) == "---\nname: pdf-tools\ndescription: d\n---\n"


@pytest.mark.parametrize(
    "name,severity",
    [
        ("-pdf", "error"),
        ("pdf--tools", "error"),
        ("a" * 65, "error"),
        ("PDF-Tools", "warning"),
        ("pdf_tools", "warning"),
    ],
)
def test_skill_name_rules(name, severity):
    got = fmt(f"---\nname: {name}\ndescription: d\n---\n", f".claude/skills/{name}/SKILL.md")
    assert got == [("FMT010", severity, name)]


def test_skill_name_folder_mismatch():
    text = "---\nname: pdf-helper\ndescription: d\n---\n"
    assert fmt(text, SKILL) == [("FMT011", "warning", "pdf-helper")]
    assert fmt(text, "file:///w/.claude/skills/pdf-helper/SKILL.md") == []


def test_subagent_name_colon_is_error_and_capitals_info():
    assert fmt("---\nname: db:migrate\ndescription: d\n---\n", AGENT) == [("FMT012", "error", "db:migrate")]
    assert fmt("---\nname: DbMigrate\ndescription: d\n---\n", AGENT) == [("FMT012", "info", "DbMigrate")]


def test_compatibility_too_long_range_starts_at_limit():
    value = "x" * 510
    text = f"---\nname: pdf-tools\ndescription: d\ncompatibility: {value}\n---\n"
    f = find(text, SKILL, "FMT013")
    assert f.end - f.start == 10 and f.start == text.index(value) + 500


# --------------------------------------------------------------------------- required
def test_subagent_missing_description_is_error_on_fence():
    text = "---\nname: a\ntools: Read\n---\nbody\n"
    assert fmt(text, AGENT) == [("FMT015", "error", "---")]


def test_subagent_empty_name_is_error_on_key():
    text = "---\nname:\ndescription: d\n---\n"
    assert fmt(text, AGENT) == [("FMT015", "error", "name:")]


def test_plugin_subagent_without_name_is_warning():
    text = "---\ndescription: d\n---\n"
    assert fmt(text, "plugins/p/agents/x.md") == [("FMT015", "warning", "---")]


def test_agent_without_frontmatter_is_info_and_readme_is_quiet():
    assert fmt("# Agents\nnotes\n", AGENT) == [("FMT015", "info", "# Agents")]
    assert fmt("# Agents\nnotes\n", ".claude/agents/README.md") == []


def test_skill_missing_name_is_warning():
    assert fmt("---\ndescription: d\n---\n", SKILL) == [("FMT015", "warning", "---")]


# --------------------------------------------------------------------------- YAML
def test_duplicate_key_on_earlier_occurrences():
    text = "---\nname: a\ndescription: b\ntools: Read\ntools: Bash\n---\n"
    res = analyze(text, AGENT, count_tokens=False)
    dups = [f for f in res.findings if f.rule == "FMT020"]
    assert [(f.start, f.end, f.severity) for f in dups] == [
        (text.index("tools"), text.index("tools") + 5, Severity.WARNING)
    ]


def test_yaml11_line_separator_creates_key():
    text = "---\nname: a\ndescription: Helper.\u2028tools: Bash\n---\n"
    got = fmt(text, AGENT)
    assert ("FMT021", "warning", "\u2028") in got
    f = find(text, AGENT, "FMT021")
    assert f.data["yaml11_keys"] == ["name", "description", "tools"]
    assert f.data["yaml12_keys"] is None  # ": " in a plain scalar: YAML 1.2 parsers reject it
    assert apply(text, f.fixes[0].edits) == "---\nname: a\ndescription: Helper.tools: Bash\n---\n"


def test_yaml11_separator_in_quoted_value_same_keys_quiet():
    text = '---\nname: a\ndescription: "one\u2028two"\n---\n'
    assert [r for r in fmt(text, AGENT) if r[0] == "FMT021"] == []


def test_yaml11_boolean_on_boolean_key():
    text = "---\ndescription: d\nuser-invocable: no\n---\n"
    f = find(text, ".github/agents/r.agent.md", "FMT022")
    assert (f.severity, text[f.start : f.end]) == (Severity.WARNING, "no")
    assert apply(text, f.fixes[0].edits) == "---\ndescription: d\nuser-invocable: false\n---\n"
    skill = "---\nname: pdf-tools\ndescription: d\ndisable-model-invocation: yes\n---\n"
    assert fmt(skill, SKILL) == [("FMT022", "info", "yes")]


def test_invalid_yaml_error_at_parser_line():
    text = "---\nname: a\ndescription: Use it. Triggers on: 'x'\n---\n"
    assert fmt(text, AGENT) == [("FMT030", "error", "description: Use it. Triggers on: 'x'")]
    assert "line 3" in find(text, AGENT, "FMT030").message


def test_frontmatter_not_a_mapping():
    assert fmt("---\n- a\n- b\n---\n", AGENT) == [("FMT030", "error", "- a")]


@pytest.mark.parametrize(
    "text",
    [
        "---\n---\n",
        "---\n\x00\n---\n",
        "---\nname: [\n---\n",
        "---\n? [a]\n: b\n---\n",
        "---\nname: !!binary x\n---\n",
        "---\r\nname: a\r\ndescription: b\r\n---\r\n",
        "\ufeff---\nname: a\n---\n",
        "---\na: *x\n---\n",
    ],
)
def test_bad_input_never_crashes(text):
    res = analyze(text, AGENT, count_tokens=False)
    assert not any(f.rule == "UNV001" for f in res.findings)


def test_crlf_ranges():
    text = "---\r\nname: a\r\ndescription: b\r\nmodel: sonet\r\n---\r\n"
    assert fmt(text, AGENT) == [("FMT004", "warning", "sonet")]


# --------------------------------------------------------------------------- completion
def at(text: str, path: str):
    off = text.index("|")
    return complete(text.replace("|", ""), path, off), text.replace("|", "")


def test_complete_keys_for_kind_excluding_present():
    items, text = at("---\nname: a\nmo|\n---\n", AGENT)
    labels = [i.label for i in items]
    assert "name" not in labels and "model" in labels and "permissionMode" in labels
    model = next(i for i in items if i.label == "model")
    assert (model.new_text, text[model.start : model.end], model.kind) == ("model: ", "mo", "key")
    assert "inherit" in model.documentation and "https://code.claude.com/docs/en/sub-agents" in model.documentation


def test_complete_values_after_colon():
    items, text = at("---\nname: a\npermissionMode: |\n---\n", AGENT)
    assert [i.label for i in items] == [
        "default",
        "acceptEdits",
        "auto",
        "dontAsk",
        "bypassPermissions",
        "plan",
        "manual",
    ]
    items, text = at("---\nalwaysApply:|\n---\n", CURSOR)
    assert [(i.label, i.new_text) for i in items] == [("true", " true"), ("false", " false")]


def test_complete_tools_after_comma():
    items, text = at("---\ntools: Read, Gr|\n---\n", AGENT)
    grep = next(i for i in items if i.label == "Grep")
    assert (grep.new_text, text[grep.start : grep.end]) == ("Grep", "Gr")
    assert "Read" not in [i.label for i in items]


def test_no_completion_outside_frontmatter_or_without_schema():
    assert at("---\nname: a\n---\nbo|dy\n", AGENT)[0] == []
    assert at("---\nfo|\n---\n", "CLAUDE.md")[0] == []


def test_unclosed_frontmatter_is_reported_as_such():
    from unveil.core.analyze import analyze

    text = "---\nname: pdf-tools\ndescription: Work with PDF files\n\n# PDF tools\nBody.\n"
    a = analyze(text, ".claude/skills/pdf-tools/SKILL.md", count_tokens=False)
    fmt = [(f.rule, f.severity.label, a.doc.position(f.start).line) for f in a.findings if f.rule.startswith("FMT")]
    assert fmt == [("FMT030", "error", 0)]
    assert next(f for f in a.findings if f.rule == "FMT030").message.startswith("Frontmatter is never closed")
