"""Issue 9 item 18: a user pattern that passes the load-time probe but times out on every file is
disabled for the run after three timeouts (UNV024), and user patterns have a per-file budget."""

from __future__ import annotations

import json

import pytest

from unveil.cli import main
from unveil.core.checks import directives

RULE = """category = "prompt-injection"
[[rule]]
id = "USR009"
name = "slow"
severity = "warning"
check = "directives"
summary = "s"
applies = ["prose"]
patterns = ['(?:q|qq)+z']
message = "m"
[[rule.bad]]
text = "qz"
line = 1
[[rule.good]]
text = "x"
"""


@pytest.fixture(autouse=True)
def fresh_counts(monkeypatch):
    monkeypatch.setattr(directives, "_timeouts", {})


def test_pattern_disabled_after_three_timeouts(tmp_path, monkeypatch, capsys, caplog):
    (tmp_path / "r.toml").write_text(RULE)
    (tmp_path / ".unveil.toml").write_text('rules-paths = ["r.toml"]\n')
    for i in range(6):
        (tmp_path / f"f{i}.md").write_text("z" + "q" * 34 + "\n")  # exponential backtracking
    monkeypatch.chdir(tmp_path)
    main(["check", ".", "--format", "json"])
    cap = capsys.readouterr()
    files = json.loads(cap.out)["files"]
    rules = [[f["rule"] for f in x["findings"]] for x in files]
    assert rules == [["UNV002"]] * 3 + [["UNV024"]] * 3
    assert [r.getMessage() for r in caplog.records if "disabled for this run" in r.getMessage()] == [
        "rule USR009: pattern '(?:q|qq)+z' timed out on 3 files; disabled for this run"
    ]  # logged once


def test_user_patterns_share_a_per_file_budget(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(directives, "USER_BUDGET_S", 0.0)
    one = RULE.replace("(?:q|qq)+z", "zebra")
    two = RULE.replace("USR009", "USR010").replace("(?:q|qq)+z", "horse").replace('category = "prompt-injection"\n', "")
    (tmp_path / "r.toml").write_text(one + two)
    (tmp_path / ".unveil.toml").write_text('rules-paths = ["r.toml"]\n')
    (tmp_path / "a.md").write_text("zebra horse\n")
    monkeypatch.chdir(tmp_path)
    main(["check", ".", "--format", "json"])
    found = [f["rule"] for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]]
    assert sorted(found) == ["UNV023", "USR009"]
