"""`unveil check` with project configuration: [tool.unveil] in pyproject.toml, a broken
.unveil.toml, and the JSON "suppressed" count."""

from __future__ import annotations

import json

ZW = "\u200b"


def test_pyproject_ignore_applies(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", f"zero{ZW}width\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json", "--fail-on", "warning")
    assert code == 1 and [f["rule"] for f in json.loads(out)["files"][0]["findings"]] == ["HID002"]
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.unveil]\nignore = ["HID002"]\n')
    code, out, err = run("check", "AGENTS.md", "--format", "json", "--fail-on", "warning")
    assert (code, err) == (0, "")
    assert json.loads(out)["files"][0]["findings"] == []
    # command-line flags beat the project file
    code, out, _ = run("check", "AGENTS.md", "--format", "json", "--ignore", "HID008", "--fail-on", "warning")
    assert [f["rule"] for f in json.loads(out)["files"][0]["findings"]] == ["HID002"]


def test_broken_unveil_toml_reports_and_continues(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / ".unveil.toml", 'ignore = ["HID002"\n')
    write(tmp_path / "AGENTS.md", f"zero{ZW}width\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json")
    assert code == 0  # the finding is a warning; the config error does not change the exit status
    assert [f["rule"] for f in json.loads(out)["files"][0]["findings"]] == ["HID002"]
    lines = err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"unveil: {tmp_path / '.unveil.toml'}: invalid TOML, using the defaults: ")


def test_suppressed_count_and_audit_flag(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "CLAUDE.md", "See @docs/missing.md here. <!-- unveil-ignore IMP001: generated -->\n")
    code, out, err = run("check", "CLAUDE.md", "--format", "json")
    f = json.loads(out)["files"][0]
    assert (f["findings"], f["suppressed"], err) == ([], 1, "")
    code, out, err = run("check", "CLAUDE.md", "--format", "json", "--no-inline-suppressions")
    f = json.loads(out)["files"][0]
    assert ([x["rule"] for x in f["findings"]], f["suppressed"]) == (["IMP001"], 0)
    # a security finding stays, and the comment that tried to hide it is reported
    write(tmp_path / "AGENTS.md", f"zero{ZW}width <!-- unveil-ignore HID002: demo -->\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json")
    f = json.loads(out)["files"][0]
    assert (sorted(x["rule"] for x in f["findings"]), f["suppressed"]) == (["HID002", "UNV012"], 0)


def test_user_rule_file_errors_and_listing(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "rules" / "mine.toml",
        'category = "custom"\n[[rule]]\nid = "USR001"\nname = "frob"\nsummary = "s"\ncheck = "directives"\n'
        'patterns = ["frob"]\n[[rule]]\nid = "USR002"\nname = "bad"\nsummary = "s"\ncheck = "directives"\n'
        'patterns = ["(unclosed"]\n',
    )
    write(tmp_path / ".unveil.toml", 'rules-paths = ["rules"]\n')
    code, out, err = run("rules")
    assert code == 0 and any(line.startswith("USR001") for line in out.splitlines())
    # the rule that did not compile is not listed, and its error is printed once
    assert not any(line.startswith("USR002") for line in out.splitlines())
    assert err.count("rule USR002: invalid patterns[0] '(unclosed'") == 1
    write(tmp_path / "AGENTS.md", "frob it\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json")
    assert [f["rule"] for f in json.loads(out)["files"][0]["findings"]] == ["USR001"]
    assert err.count("rule USR002: invalid patterns[0] '(unclosed'") == 1 and "mine.toml" in err
