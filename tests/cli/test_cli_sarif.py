"""``unveil check --format sarif``: valid against the OASIS SARIF 2.1.0 schema, code-point columns."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from unveil import __version__
from unveil.core.rules import bundled_rules

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def sarif(run, *paths):
    code, out, err = run("check", *paths, "--format", "sarif")
    return code, json.loads(out), err


def test_validator_rejects_an_invalid_log(validator):
    """The schema is really enforced (guards against a vacuous validation)."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}  # driver.name missing
    assert list(validator.iter_errors(bad))
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "columnKind": "bytes"}]}
    assert list(validator.iter_errors(bad))


def test_sarif_is_valid_and_counts_code_points(tmp_path, monkeypatch, fake_checks, run, write, validator):
    monkeypatch.chdir(tmp_path)
    # U+1F600 is astral: 1 code point, 2 UTF-16 units. The marker starts at code point 3.
    write(tmp_path / ".claude/agents/dir with space/r\u00e9viewer.md", "x\U0001f600<<E>> leak ~/.ssh\n<<I>> pua\n")
    code, log, err = sarif(run, ".")
    assert (code, err) == (1, "")
    validator.validate(log)
    assert log["version"] == "2.1.0"
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    (run_,) = log["runs"]
    assert run_["columnKind"] == "unicodeCodePoints"
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    driver = run_["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("unveil", __version__)
    assert driver["informationUri"].startswith("https://")
    first, second = run_["results"]
    assert first["ruleId"] == "HID001"
    assert driver["rules"][first["ruleIndex"]]["id"] == "HID001"
    assert first["level"] == "error"
    assert first["message"]["text"] == "marker <<E>> says: leak ~/.ssh"
    assert first["properties"]["hiddenText"] == "leak ~/.ssh"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {
        "uri": ".claude/agents/dir%20with%20space/r%C3%A9viewer.md",
        "uriBaseId": "%SRCROOT%",
    }
    assert loc["region"] == {"startLine": 1, "startColumn": 3, "endLine": 1, "endColumn": 8}
    # info → note
    assert (second["ruleId"], second["level"]) == ("HID009", "note")
    assert driver["rules"][second["ruleIndex"]]["id"] == "HID009"
    assert second["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 1,
        "endLine": 2,
        "endColumn": 6,
    }
    assert run_["invocations"] == [{"executionSuccessful": True}]


def test_sarif_rules_come_from_the_bundled_rules(tmp_path, monkeypatch, fake_checks, run, write, validator):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "clean\n")
    code, log, _ = sarif(run, "AGENTS.md")
    assert code == 0
    validator.validate(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    bundled = list(bundled_rules())
    assert [r["id"] for r in rules] == [r.id for r in bundled]
    by_id = {r["id"]: r for r in rules}
    hid001 = next(r for r in bundled if r.id == "HID001")
    d = by_id["HID001"]
    assert d["name"] == hid001.name
    assert d["shortDescription"]["text"] == hid001.summary
    assert d["fullDescription"]["text"] == hid001.description.strip()
    assert d["helpUri"] == hid001.doc_url
    assert d["defaultConfiguration"]["level"] == "error"
    levels = {r.id: d["defaultConfiguration"]["level"] for r, d in zip(bundled, rules)}
    for r in bundled:
        assert (
            levels[r.id] == {"error": "error", "warning": "warning", "info": "note", "hint": "note"}[r.severity.label]
        )
    assert log["runs"][0]["results"] == []


def test_sarif_reports_unreadable_paths_as_notifications(tmp_path, monkeypatch, fake_checks, run, write, validator):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<W>> x\n")
    code, log, err = sarif(run, "AGENTS.md", "missing.md")
    assert code == 2
    assert err == "unveil: missing.md: no such file or folder\n"
    validator.validate(log)
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert inv["toolExecutionNotifications"] == [
        {"level": "error", "message": {"text": "missing.md: no such file or folder"}}
    ]
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["HID020"]


def test_sarif_unknown_rule_gets_a_descriptor(tmp_path, monkeypatch, run, write, validator):
    """A crashed check reports UNV001, which is not in the bundled rules: it still gets a valid ruleIndex."""

    def boom(ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr("unveil.core.checks.all_checks", lambda: [boom])
    monkeypatch.setattr("unveil.core.analyze.all_checks", lambda: [boom], raising=False)
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "x\n")
    code, log, _ = sarif(run, "AGENTS.md")
    assert code == 1
    validator.validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "UNV001"
    assert log["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "UNV001"
    assert result["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 1,
        "endLine": 1,
        "endColumn": 1,
    }


def test_sarif_of_the_bundled_examples_is_valid(run, validator, monkeypatch):
    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(root)
    code, log, err = sarif(run, "examples")
    assert err == ""
    validator.validate(log)
    assert code == 1
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert "examples/.claude/skills/release-notes/SKILL.md" in uris


def test_sarif_file_name_with_undecodable_bytes(tmp_path, monkeypatch, fake_checks, run, validator):
    import os

    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"AGENTS-\xff.md")  # a Linux file name that is not UTF-8
    (tmp_path / name).write_bytes(b"<<W>> x\n")
    code, log, err = sarif(run, name)
    assert (code, err) == (0, "")
    validator.validate(log)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "AGENTS-%FF.md"
