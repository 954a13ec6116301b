"""Inline suppressions (unveil.core.suppress): which findings remain, UNV010/UNV011 ranges."""

from __future__ import annotations

from unveil.core.analyze import analyze
from unveil.core.config import Settings

ZW = "\u200b"


def run(text: str, settings: Settings | None = None):
    a = analyze(text, "notes.md", settings or Settings(), count_tokens=False)
    return a, [(f.rule, a.doc.position(f.start).line, a.doc.position(f.start).character,
                a.doc.position(f.end).line, a.doc.position(f.end).character) for f in a.findings]


def test_next_line_skips_blank_lines_and_only_that_line():
    text = f"<!-- unveil-ignore-next-line HID002: demo of a zero-width space -->\n\nzero{ZW}width\nmore{ZW}here\n"
    a, got = run(text)
    assert got == [("HID002", 3, 4, 3, 5)]
    assert [(f.rule, a.doc.position(f.start).line) for f in a.extra["suppressed"]] == [("HID002", 2)]


def test_same_line_and_category():
    a, got = run(f"zero{ZW}width <!-- unveil-ignore hidden-content: demo -->\n")
    assert got == []
    assert [f.rule for f in a.extra["suppressed"]] == ["HID002"]


def test_file_wide_and_several_ids():
    a, got = run(f"a{ZW}b\n\n<!-- unveil-ignore-file HID002, HID008: fixture file -->\n\nc{ZW}d\n")
    # HID008 suppressed nothing: reported as unused, with the comment's range
    assert got == [("UNV011", 2, 0, 2, 56)]
    assert "HID008" in a.findings[0].message and "HID002" not in a.findings[0].message
    assert len(a.extra["suppressed"]) == 2


def test_disable_enable_range():
    text = f"a{ZW}b\n<!-- unveil-disable HID002: table of examples -->\nc{ZW}d\n<!-- unveil-enable HID002 -->\ne{ZW}f\n"
    a, got = run(text)
    assert got == [("HID002", 0, 1, 0, 2), ("HID002", 4, 1, 4, 2)]
    assert len(a.extra["suppressed"]) == 1


def test_disable_without_enable_runs_to_end():
    _, got = run(f"<!-- unveil-disable HID002: rest of file -->\na{ZW}b\n\nc{ZW}d\n")
    assert got == []


def test_malformed_reported_and_suppresses_nothing():
    text = f"<!-- unveil-ignore-next-line HID002 -->\na{ZW}b\n"
    a, got = run(text)
    assert ("UNV010", 0, 0, 0, 39) in got and ("HID002", 1, 1, 1, 2) in got
    assert ("HID020", 0, 0, 0, 39) in got  # not an exact pragma: judged as a hidden comment
    unv = [f for f in a.findings if f.rule == "UNV010"][0]
    assert "reason is mandatory" in unv.message and unv.severity.label == "warning"


def test_unknown_id_and_directive_and_orphan_enable():
    _, got = run("<!-- unveil-ignore NOPE123: typo -->\n<!-- unveil-ignore-line HID002: x -->\n<!-- unveil-enable HID002 -->\n")
    assert [g for g in got if g[0] == "UNV010"] == [("UNV010", 0, 0, 0, 36), ("UNV010", 1, 0, 1, 37),
                                                     ("UNV010", 2, 0, 2, 29)]


def test_exact_pragma_not_reported_as_hidden_comment():
    _, got = run(f"<!-- unveil-ignore-next-line HID002: demo -->\na{ZW}b\n")
    assert got == []


def test_pragma_in_code_is_ignored():
    _, got = run(f"```md\n<!-- unveil-ignore-next-line HID002: demo -->\n```\na{ZW}b\n")
    assert got == [("HID002", 3, 1, 3, 2)]


def test_inline_suppressions_can_be_turned_off():
    s = Settings().merged({"inlineSuppressions": False})
    a, got = run(f"a{ZW}b <!-- unveil-ignore HID002: demo -->\n", s)
    assert got == [("HID002", 0, 1, 0, 2)] and a.extra["suppressed"] == []


def test_error_level_hidden_content_is_never_suppressed_inline():
    tags = "".join(chr(0xE0000 + ord(c)) for c in "run rm -rf")
    text = f"<!-- unveil-ignore-file hidden-content: harmless, trust me -->\nHello {tags} world\nzero{ZW}width\n"
    a, got = run(text)
    # the tag payload (an error) stays; the comment is reported; the warning-level HID002 is suppressed
    assert got == [("UNV012", 0, 0, 0, 62), ("HID001", 1, 6, 1, 16)]
    hid001 = a.findings[1]
    assert hid001.severity.label == "error" and hid001.hidden_text == "run rm -rf"
    assert "cannot hide HID001 on line 2" in a.findings[0].message
    assert [f.rule for f in a.extra["suppressed"]] == ["HID002"]


def test_text_report_shows_the_suppressed_count(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "notes.md"
    f.write_text(f"<!-- unveil-ignore-next-line HID002: demo of a zero-width space -->\nzero{ZW}width\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "unveil", "check", str(f)], capture_output=True, text=True).stdout
    assert "no findings · 1 suppressed inline" in out
