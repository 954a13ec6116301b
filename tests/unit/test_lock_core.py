"""core/lock.py pieces: capabilities, reveal, the lock model's validation, the git wrapper's guards."""

from __future__ import annotations

import os

import pytest

from unveil.core import git
from unveil.core import lock as lk
from unveil.core.analyze import analyze


def test_capabilities_of_a_skill():
    text = (
        "---\nname: x\ndescription: y\nallowed-tools: Read, Bash(git:*)\npermissionMode: acceptEdits\n---\n"
        "See HTTPS://Example.com/a. and <https://b.example/p?q=1>.\n\n```bash\n$ npm ci\n# a comment\n"
        "npm test\n```\n\n```console\n# apt-get install jq\n```\n\n```python\nimport os\n```\n\nContext: !`git status`\n"
    )
    caps = lk.capabilities(analyze(text, "/r/.claude/skills/x/SKILL.md"))
    assert caps == {
        "urls": ["HTTPS://Example.com/a", "https://b.example/p?q=1"],
        "commands": ["apt-get install jq", "git status", "npm ci", "npm test"],
        "imports": [],
        "tools": ["Bash(git:*)", "Read"],
        "permissionMode": ["acceptEdits"],
    }


def test_capabilities_imports_of_claude_md(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "style.md").write_text("Be brief.\n")
    path = tmp_path / "CLAUDE.md"
    text = "# Notes\n\nSee @docs/style.md for style.\n"
    path.write_text(text)
    assert lk.capabilities(analyze(text, str(path)))["imports"] == ["docs/style.md"]


def test_reveal_names_invisibles_and_marks_spans():
    assert lk.reveal("a\u200bb\tc\n", [(1, 2)]) == "a⟦hidden: ‹U+200B ZERO WIDTH SPACE›⟧b\tc\n"
    assert lk.reveal("x\U000e0041", []) == "x‹U+E0041 TAG LATIN CAPITAL LETTER A›"
    assert lk.reveal("ab", [(0, 2)]) == "⟦hidden: ab⟧"


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"", "not a valid lock file"),
        (b"[]", "expected a JSON object"),
        (b'{"version": 2}', "unsupported lock version 2"),
        (b'{"version": 1, "files": {"a.md": {}}}', "entry 'a.md' has no content hash"),
        (b'{"version": 1, "files": {"/etc/x": {"hash": "h"}}}', "entry '/etc/x' is outside the repository"),
        (b'{"version": 1, "paths": ["../up"]}', "path '../up' is outside the repository"),
        (b"\xff", "not a valid lock file"),
    ],
)
def test_lock_loads_rejects_bad_input(raw, message):
    with pytest.raises(lk.LockError, match=message.replace("(", r"\(")):
        lk.Lock.loads(raw)


def test_lock_round_trip_is_stable():
    lock = lk.Lock(
        files={"b.md": {"hash": "sha256:1", "kind": "x"}, "a.md": {"hash": "sha256:2"}},
        paths=["z", "."],
        rules={"hash": "h", "unveil": "0"},
    )
    text = lock.dumps()
    assert text.index('"a.md"') < text.index('"b.md"') and text.endswith("}\n") and "\r" not in text
    assert lk.Lock.loads(text).dumps() == text


def test_write_atomic_leaves_no_temp_file(tmp_path):
    target = tmp_path / "unveil.lock"
    old = os.umask(0o022)
    try:
        lk.write_atomic(target, "one\n")
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o644  # not mkstemp's 0600
    target.chmod(0o664)
    lk.write_atomic(target, "two\n")
    assert target.stat().st_mode & 0o777 == 0o664  # an existing file keeps its mode
    assert target.read_text() == "two\n" and [p.name for p in tmp_path.iterdir()] == ["unveil.lock"]
    with pytest.raises(lk.LockError, match="cannot write"):
        lk.write_atomic(tmp_path / "missing-dir" / "x", "y")


def test_git_guards(tmp_path):
    with pytest.raises(git.GitError, match="invalid commit '--output=x'"):
        git.show(tmp_path, "--output=x", "a.md")
    with pytest.raises(git.GitError, match="invalid git ref '-x'"):
        git.resolve(tmp_path, "-x")
    with pytest.raises(git.GitError):
        git.toplevel(tmp_path)  # not a repository


def test_delta_summary_wording():
    d = lk.Delta(
        "CLAUDE.md",
        "changed",
        review={"date": "2026-11-30T10:00:00Z", "commit": "abc1234def"},
        added=[
            lk.NewFinding("v1:x", "HID020", "error", "hidden-content", 3, 1, 3, 9, "m", "payload"),
            lk.NewFinding("v1:y", "EXF003", "error", "data-exfiltration", 3, 1, 3, 9, "m", None),
        ],
        grade=("A", "C"),
        tokens=({"session": 100}, {"session": 412}),
    )
    assert d.summary() == (
        "Changed since review (2026-11-30, abc1234): +1 hidden html comment, +1 error EXF003, "
        "grade A→C, +312 tok/session"
    )
