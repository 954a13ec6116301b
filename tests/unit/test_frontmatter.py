"""YAML frontmatter: span, data, errors with file lines, duplicates, positions."""

from __future__ import annotations

import pytest

from unveil.core import frontmatter as F


def test_basic_span_data_positions():
    text = "---\nname: x\ndescription: y\n---\nbody"
    fm = F.parse(text)
    assert fm.span == F.FrontmatterSpan(start=0, end=30, yaml_start=4, yaml_end=27, body_start=31, yaml_line=1)
    assert fm.data == {"name": "x", "description": "y"}
    assert fm.error is None and fm.duplicate_keys == ()
    assert text[fm.body_start :] == "body"
    pos = fm.positions["description"]
    assert text[pos.key_start : pos.key_end] == "description"
    assert text[pos.value_start : pos.value_end] == "y"


def test_bom_crlf_and_dots_closer_with_duplicates():
    text = "\ufeff---\r\na: 1\r\na: 2\r\n...\r\nB"
    fm = F.parse(text)
    assert fm.span.start == 1 and fm.span.end == 21 and fm.body_start == 23
    assert text[fm.body_start :] == "B"
    assert fm.data == {"a": 2}
    assert fm.duplicate_keys == ("a",)
    p = fm.positions["a"]
    assert text[p.value_start : p.value_end] == "2"


def test_yaml_12_semantics():
    fm = F.parse("---\nx: yes\ny: 0o17\nz: true\n---\n")
    assert fm.data == {"x": "yes", "y": 15, "z": True}


def test_error_has_file_line_and_loose_fallback():
    text = "---\nname: gdpr\ndescription: Triggers on: 'GDPR', 'CCPA'\ntools: Read\n---\nBody\n"
    fm = F.parse(text)
    assert fm.data is None
    assert fm.error_line == 3
    assert fm.error.endswith("(line 3)")
    assert fm.loose == {"name": "gdpr", "description": "Triggers on: 'GDPR', 'CCPA'", "tools": "Read"}
    assert fm.mapping == fm.loose
    assert fm.get("tools") == "Read"
    assert text[fm.body_start :] == "Body\n"


def test_not_a_mapping():
    fm = F.parse("---\n- a\n---\n")
    assert fm.data is None
    assert fm.error == "frontmatter is a list, not a mapping of keys to values (line 2)"


def test_empty_block_is_empty_mapping():
    fm = F.parse("---\n---\nx")
    assert fm.data == {} and fm.body_start == 8


@pytest.mark.parametrize("text", ["---\na: 1\n", "x---\n---\n", "", "# Title\n---\n", " ---\na: 1\n---\n"])
def test_no_frontmatter(text):
    fm = F.parse(text)
    assert fm.span is None and fm.data is None and fm.error is None and fm.body_start == 0


def test_python_tags_are_not_constructed():
    fm = F.parse("---\na: !!python/object/apply:os.system ['echo hi']\n---\n")
    assert fm.data is None
    assert "could not determine a constructor" in fm.error
    assert fm.error_line == 2


@pytest.mark.parametrize(
    "text",
    ["---\n" + "[" * 5000 + "\n---\n", "---\n\udcff: \ud800\n---\n", "---\n\x00\x01: \x7f\n---\n", "---\na: *x\n---\n"],
)
def test_never_raises(text):
    fm = F.parse(text)
    assert fm.span is not None
    assert fm.data is None or isinstance(fm.data, dict)
