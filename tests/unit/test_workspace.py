"""The workspace summary (unveil.core.workspace) and ``unveil cost FOLDER``. Token figures are o200k
counts computed once with the bundled tokenizer."""

from __future__ import annotations

import json

from unveil.cli import main
from unveil.core import workspace

CLAUDE = "# Project\n\nSee @docs/style.md and @docs/missing.md.\n"  # 15 tokens
STYLE = "Use tabs.\n"  # 3 tokens
AGENT = "---\nname: reviewer\ndescription: Reviews diffs.\n---\nYou review.\n"  # listing 11, body 3
README = "# Readme\n"  # 4 tokens, unknown kind


def make_tree(root):
    (root / ".claude/agents").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "node_modules/x").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(CLAUDE, encoding="utf-8")
    (root / "docs/style.md").write_text(STYLE, encoding="utf-8")
    (root / ".claude/agents/reviewer.md").write_text(AGENT, encoding="utf-8")
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "node_modules/x/CLAUDE.md").write_text("ignored\n", encoding="utf-8")
    (root / "script.py").write_text("print()\n", encoding="utf-8")


def test_find_agent_files(tmp_path):
    make_tree(tmp_path)
    got = [p.relative_to(tmp_path).as_posix() for p in workspace.find_agent_files(tmp_path)]
    assert got == ["CLAUDE.md", "README.md", ".claude/agents/reviewer.md", "docs/style.md"]  # walk order
    assert workspace.find_agent_files(tmp_path / "nope") == []
    assert len(workspace.find_agent_files(tmp_path, limit=2)) == 2


def test_scan_summary(tmp_path):
    make_tree(tmp_path)
    s = workspace.scan(tmp_path)
    d = s.to_dict()
    files = {f["path"]: f for f in d["files"]}
    assert list(files) == [".claude/agents/reviewer.md", "CLAUDE.md", "README.md", "docs/style.md"]
    c = files["CLAUDE.md"]
    assert (c["kind"], c["session"], c["invoke"], c["imported"], c["claudeSession"]) == ("claude-md", 18, 0, 3, 28)
    assert (c["grade"], c["findings"]) == ("B", {"error": 0, "warning": 1, "info": 0, "hint": 0})  # IMP001
    a = files[".claude/agents/reviewer.md"]
    assert (a["kind"], a["session"], a["invoke"], a["grade"], a["counted"]) == ("claude-agent", 11, 3, "A", True)
    assert (files["README.md"]["kind"], files["README.md"]["counted"]) == ("markdown", False)
    assert files["CLAUDE.md"]["uri"] == (tmp_path / "CLAUDE.md").as_uri()
    assert [(k["kind"], k["files"], k["session"], k["invoke"]) for k in d["kinds"]] == [
        ("claude-md", 1, 18, 0),
        ("claude-agent", 1, 11, 3),
        ("markdown", 2, 7, 0),
    ]
    assert d["total"] == {
        "files": 2,
        "session": 29,
        "invoke": 3,
        "claudeSession": 45,
        "claudeInvoke": 5,
        "findings": {"error": 0, "warning": 1, "info": 0, "hint": 0},
        "grade": "B",
    }
    assert d["budget"] == {"workspaceSessionTokens": 20000, "over": False}
    assert d["root"] == tmp_path.as_uri() and d["complete"] is True


def test_workspace_budget(tmp_path):
    from unveil.core.config import Settings

    make_tree(tmp_path)
    s = workspace.scan(tmp_path, Settings().merged({"budgets": {"workspaceSessionTokens": 20}}))
    assert s.over_budget is True
    assert s.to_dict()["budget"] == {"workspaceSessionTokens": 20, "over": True}


def test_cli_cost_folder_table(tmp_path, monkeypatch, capsys):
    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["cost", "."]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == [
        "file",
        "every",
        "session",
        "once",
        "invoked",
        "≈",
        "Claude/session",
        "grade",
        "err/warn/info",
    ]
    assert out[1].split() == ["CLAUDE.md", "memory", "(1", "file)", "18", "0", "28", "B", "0/1/0"]
    assert out[2].split() == ["CLAUDE.md", "18", "0", "28", "B", "0/1/0"]
    assert out[3].split() == ["Claude", "Code", "subagent", "(1", "file)", "11", "3", "17", "A", "0/0/0"]
    assert out[6].split() == ["README.md", "4", "0", "6", "A", "0/0/0"]
    assert out[8].split() == ["Total", "(2", "agent", "files)", "29", "3", "45", "B", "0/1/0"]
    assert out[9] == (
        "Every-session tokens 29 are within the workspace budget of 20,000 (budgets.workspaceSessionTokens)."
    )


def test_cli_cost_folder_json(tmp_path, monkeypatch, capsys):
    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["cost", ".", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ws = data["workspace"]
    assert ws["total"]["session"] == 29 and ws["total"]["files"] == 2
    assert [f["path"] for f in ws["files"]] == [".claude/agents/reviewer.md", "CLAUDE.md", "README.md", "docs/style.md"]
    # the per-file list of the existing report agrees with the summary
    assert {f["path"]: f["tokens"]["session"] for f in data["files"]} == {f["path"]: f["session"] for f in ws["files"]}
