"""Issue 9 item 5: terminal escapes in `unveil cost DIR` file names, and values from user-named
files in SARIF, are escaped."""

from __future__ import annotations

import json

from unveil.cli import main

ESC = "\x1b]0;pwned\x07\x1b[31m"


def test_cost_folder_table_escapes_file_names(tmp_path, monkeypatch, capsys):
    (tmp_path / f"evil{ESC}.md").write_text("hello\n")
    (tmp_path / "AGENTS.md").write_text("hello\n")
    monkeypatch.chdir(tmp_path)
    code = main(["cost", "."])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b]0;pwned\\x07\\x1b[31m.md" in out
    assert code == 0


def test_sarif_escapes_user_rule_messages_and_notifications(tmp_path, monkeypatch, capsys):
    rules = tmp_path / "my-rules.toml"
    rules.write_text(
        'category = "prompt-injection"\n[[rule]]\nid = "USR001"\nname = "x"\nseverity = "error"\n'
        'check = "directives"\nsummary = "s"\napplies = ["prose"]\npatterns = [\'zebra\']\n'
        'message = "found \\u001b[2J zebra"\n[[rule.bad]]\ntext = "zebra"\nline = 1\n'
        '[[rule.good]]\ntext = "horse"\n'
    )
    (tmp_path / ".unveil.toml").write_text(f'rules-paths = ["{rules.name}"]\n')
    (tmp_path / "AGENTS.md").write_text("a zebra here\n")
    monkeypatch.chdir(tmp_path)
    main(["check", ".", "--format", "sarif"])
    out = capsys.readouterr().out
    res = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "USR001"]
    assert [r["message"]["text"] for r in res] == ["found \\x1b[2J zebra"]
