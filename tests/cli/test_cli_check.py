"""``unveil check``: exit codes, JSON shape and values, text lines, folder scanning, I/O errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from unveil.cli import collect, read_text
from unveil.core.analyze import analyze

FIXTURE = "# Title\nab<<E>> run rm -rf /\n\U0001f600<<W>> a note\n"


def expected_tokens(path: Path, text: str) -> dict:
    report = analyze(text, str(path.resolve())).tokens
    return {"session": report.session if report else None, "invoke": report.invoke if report else None}


# ----------------------------------------------------------------------------- exit codes


@pytest.mark.parametrize(
    ("marker", "fail_on", "status"),
    [
        ("", "error", 0),
        ("<<E>>", "error", 1),
        ("<<W>>", "error", 0),
        ("<<W>>", "warning", 1),
        ("<<I>>", "warning", 0),
        ("<<I>>", "info", 1),
        ("<<H>>", "info", 0),
        ("<<H>>", "hint", 1),
        ("<<E>>", "never", 0),
    ],
)
def test_exit_status_follows_fail_on(tmp_path, monkeypatch, fake_checks, run, marker, fail_on, status, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", f"# Agents\n{marker} text\n")
    code, out, err = run("check", "AGENTS.md", "--fail-on", fail_on)
    assert (code, err) == (status, "")


def test_default_fail_on_is_error(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<W>> just a warning\n")
    assert run("check", "AGENTS.md")[0] == 0
    write(tmp_path / "AGENTS.md", "<<E>> an error\n")
    assert run("check", "AGENTS.md")[0] == 1


@pytest.mark.parametrize(
    "args",
    [
        ("check",),  # no PATH
        ("check", "x.md", "--format", "xml"),
        ("check", "x.md", "--fail-on", "critical"),
        ("check", "x.md", "--select", "HID999"),
        ("check", "x.md", "--severity", "HID001"),
        ("check", "x.md", "--severity", "HID001=fatal"),
        ("frobnicate",),
        (),
    ],
)
def test_usage_errors_exit_2(tmp_path, monkeypatch, fake_checks, run, args, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "x.md", "<<E>>\n")
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    assert err  # says what is wrong


def test_missing_path_exits_2_but_reports_the_others(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "CLAUDE.md", "clean\n")
    code, out, err = run("check", "nope.md", "CLAUDE.md", "--format", "json")
    assert code == 2
    assert err == "unveil: nope.md: no such file or folder\n"
    assert [f["path"] for f in json.loads(out)["files"]] == ["CLAUDE.md"]


def test_unreadable_file_exits_2_and_the_others_are_reported(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<E>> hidden\n")
    secret = write(tmp_path / "CLAUDE.md", "clean\n")
    from unveil.core import safe_read

    real = safe_read.read_bytes

    def read_bytes(path, max_bytes=None, **kw):
        if Path(path).name == secret.name:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, max_bytes, **kw)

    monkeypatch.setattr(safe_read, "read_bytes", read_bytes)
    code, out, err = run("check", ".", "--format", "json")
    assert code == 2  # an I/O error wins over findings (which alone would give 1)
    assert err == "unveil: CLAUDE.md: cannot read: Permission denied\n"
    files = json.loads(out)["files"]
    assert [(f["path"], [x["rule"] for x in f["findings"]]) for f in files] == [("AGENTS.md", ["HID001"])]


def test_select_ignore_and_severity_flags(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<E>> one\n<<W>> two\n")

    def rules(*extra):
        code, out, _ = run("check", "AGENTS.md", "--format", "json", *extra)
        return code, [(f["rule"], f["severity"]) for f in json.loads(out)["files"][0]["findings"]]

    assert rules() == (1, [("HID001", "error"), ("HID020", "warning")])
    assert rules("--ignore", "HID001") == (0, [("HID020", "warning")])
    assert rules("--select", "hid020") == (0, [("HID020", "warning")])  # ids are case-insensitive
    assert rules("--ignore", "hidden-content") == (0, [])  # a category works too
    assert rules("--severity", "HID020=error", "--ignore", "HID001") == (1, [("HID020", "error")])


# ----------------------------------------------------------------------------- JSON


def test_json_shape_and_values(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "CLAUDE.md", FIXTURE)
    code, out, err = run("check", "CLAUDE.md", "--format", "json")
    assert (code, err) == (1, "")
    expected = analyze(FIXTURE, str(path.resolve()))
    assert json.loads(out) == {
        "files": [
            {
                "path": "CLAUDE.md",
                "kind": "claude-md",
                "grade": expected.grade,
                "tokens": expected_tokens(path, FIXTURE),
                "findings": [
                    {
                        "rule": "HID001",
                        "category": "hidden-content",
                        "severity": "error",
                        "line": 2,
                        "column": 3,
                        "end_line": 2,
                        "end_column": 8,
                        "message": "marker <<E>> says: run rm -rf /",
                        "hidden_text": "run rm -rf /",
                    },
                    {
                        # U+1F600 is one code point (two UTF-16 units): the marker is column 2
                        "rule": "HID020",
                        "category": "hidden-content",
                        "severity": "warning",
                        "line": 3,
                        "column": 2,
                        "end_line": 3,
                        "end_column": 7,
                        "message": "marker <<W>> says: a note",
                        "hidden_text": "a note",
                    },
                ],
                "suppressed": 0,
            }
        ],
        "config": {"isolated": False, "applied": []},
    }


def test_json_tokens_are_counted(tmp_path, monkeypatch, fake_checks, run, write):
    """CLAUDE.md is loaded whole every session: both counts are the o200k tokens of the file."""
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "CLAUDE.md", FIXTURE)
    tokens = json.loads(run("check", "CLAUDE.md", "--format", "json")[1])["files"][0]["tokens"]
    assert tokens == expected_tokens(path, FIXTURE)
    assert isinstance(tokens["session"], int) and tokens["session"] > 0


def test_output_file(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "CLAUDE.md", FIXTURE)
    code, out, err = run("check", "CLAUDE.md", "--format", "json", "--output", "report.json")
    assert (code, out, err) == (1, "", "")
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [f["rule"] for f in data["files"][0]["findings"]] == ["HID001", "HID020"]


# ----------------------------------------------------------------------------- text


def test_text_format(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path / "CLAUDE.md", FIXTURE)
    write(tmp_path / "AGENTS.md", "# clean\n")
    code, out, err = run("check", "CLAUDE.md", "AGENTS.md")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == "CLAUDE.md:2:3: error HID001 marker <<E>> says: run rm -rf /"
    assert lines[1] == "CLAUDE.md:3:2: warning HID020 marker <<W>> says: a note"
    a = analyze(FIXTURE, str(path.resolve()))
    summary = f"CLAUDE.md: CLAUDE.md memory · grade {a.grade}"
    if a.tokens is not None:
        summary += f" · {a.tokens.session:,} tok/session · {a.tokens.invoke:,} tok on invoke"
    assert lines[2] == summary + " · 2 findings"
    assert lines[3].startswith("AGENTS.md: AGENTS.md · grade ") and lines[3].endswith(" · no findings")
    assert lines[4:] == ["", "Found 2 findings (1 error, 1 warning) in 1 of 2 files."]
    assert "\x1b[" not in out  # no colour when stdout is not a terminal


def test_text_no_findings_summary(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "# clean\n")
    code, out, _ = run("check", "AGENTS.md")
    assert code == 0
    assert out.splitlines()[-1] == "No findings in 1 file."


def test_text_escapes_terminal_controls_from_the_file(tmp_path, monkeypatch, fake_checks, run, write):
    """Hidden text echoed in a message must not drive the terminal (ANSI) or reorder the line (bidi)."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<E>> \x1b[2J\u202egnp.exe\U000e0041\n")
    code, out, _ = run("check", "AGENTS.md", "--color", "never")
    assert out.splitlines()[0] == "AGENTS.md:1:1: error HID001 marker <<E>> says: \\x1b[2J\\u202egnp.exe\\U000e0041"


def test_colour_always(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "AGENTS.md", "<<E>> x\n")
    out = run("check", "AGENTS.md", "--color", "always")[1]
    assert (
        out.splitlines()[0]
        == "\x1b[1mAGENTS.md:1:1:\x1b[0m \x1b[1;31merror\x1b[0m \x1b[2mHID001\x1b[0m marker <<E>> says: x"
    )


# ----------------------------------------------------------------------------- folders


def test_folder_scan_picks_agent_files_and_skips_the_rest(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    for rel in [
        "CLAUDE.md",
        "AGENTS.md",
        ".claude/agents/reviewer.md",
        ".claude/skills/notes/SKILL.md",
        ".cursor/rules/style.mdc",
        ".cursorrules",
        # not agent files
        "src/main.py",
        "notes.txt",
        "data.json",
        # inside folders that are never scanned
        ".git/CLAUDE.md",
        "node_modules/pkg/AGENTS.md",
        ".venv/lib/SKILL.md",
    ]:
        write(tmp_path / rel, "<<W>> x\n")
    code, out, err = run("check", ".", "--format", "json")
    assert (code, err) == (0, "")
    paths = sorted(f["path"] for f in json.loads(out)["files"])
    assert paths == sorted(
        [
            "CLAUDE.md",
            "AGENTS.md",
            ".claude/agents/reviewer.md",
            ".claude/skills/notes/SKILL.md",
            ".cursor/rules/style.mdc",
            ".cursorrules",
        ]
    )


def test_explicit_file_is_scanned_whatever_its_name(tmp_path, monkeypatch, fake_checks, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "prompt.txt", "<<E>> x\n")
    code, out, _ = run("check", "prompt.txt", "--format", "json")
    assert code == 1
    assert json.loads(out)["files"][0]["path"] == "prompt.txt"


def test_collect_dedupes_and_orders(tmp_path, write):
    write(tmp_path / "b/CLAUDE.md", "x")
    write(tmp_path / "a/AGENTS.md", "x")
    got = collect([".", "a/AGENTS.md", "a"], cwd=tmp_path)
    assert [shown for shown, _ in got.files] == ["a/AGENTS.md", "b/CLAUDE.md"]
    assert got.errors == []


def test_path_outside_cwd_is_absolute(tmp_path, monkeypatch, fake_checks, run, write):
    other = write(tmp_path / "other" / "AGENTS.md", "x\n")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    out = run("check", "../other/AGENTS.md", "--format", "json")[1]
    assert json.loads(out)["files"][0]["path"] == other.resolve().as_posix()


# ----------------------------------------------------------------------------- decoding


def test_read_text_keeps_invalid_bytes(tmp_path):
    raw = b"ok \xff\xfe caf\xc3\xa9 \xc3\n"
    path = tmp_path / "bad.md"
    path.write_bytes(raw)
    text = read_text(path)
    assert text == "ok \udcff\udcfe caf\u00e9 \udcc3\n"
    assert text.encode("utf-8", "surrogateescape") == raw  # nothing lost


def test_utf8_bom_and_valid_text_decode_strictly(tmp_path):
    path = tmp_path / "bom.md"
    path.write_bytes("\ufeff# caf\u00e9\n".encode("utf-8"))
    assert read_text(path) == "\ufeff# caf\u00e9\n"


def test_invalid_utf8_file_is_scanned_not_crashed(tmp_path, monkeypatch, fake_checks, run):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "AGENTS.md").write_bytes(b"<<E>> bad \xff byte\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json")
    assert (code, err) == (1, "")
    finding = json.loads(out)["files"][0]["findings"][0]
    # the undecodable byte reaches the checks as U+DCFF; JSON carries U+FFFD (valid UTF-8 output)
    assert finding["hidden_text"] == "bad \ufffd byte"
    text_out = run("check", "AGENTS.md")[1]
    assert text_out.splitlines()[0] == "AGENTS.md:1:1: error HID001 marker <<E>> says: bad \\xff byte"


def test_invalid_utf8_is_reported_by_the_real_checks(tmp_path, monkeypatch, run):
    """With the real checks, an invalid byte is itself a finding at its position."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "AGENTS.md").write_bytes(b"# Agents\nrun \xff\xfe tests\n")
    code, out, err = run("check", "AGENTS.md", "--format", "json", "--fail-on", "never")
    assert (code, err) == (0, "")
    findings = json.loads(out)["files"][0]["findings"]
    assert any((f["line"], f["column"]) == (2, 5) for f in findings), findings
