"""Issue 9 item 1: symlinks out of the scanned root are never read, and secrets are redacted."""

from __future__ import annotations

import json
import os

from unveil.cli import main

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z12"


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_symlink_to_proc_environ_is_a_finding_not_read(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "env.md").symlink_to("/proc/self/environ")
    (repo / "ok.md").write_text("hello\n")
    monkeypatch.chdir(repo)
    code, out, err = _run(capsys, "check", ".", "--format", "sarif")
    assert TOKEN not in out and TOKEN[4:20] not in out
    log = json.loads(out)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("UNV020", "env.md")
    ]
    assert "symbolic link to /proc/self/environ" in results[0]["message"]["text"]
    assert code == 1


def test_symlink_inside_root_is_followed(tmp_path, monkeypatch, capsys):
    (tmp_path / "real.md").write_text("zero\u200bwidth\n")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "check", ".", "--format", "json")
    files = {f["path"]: [x["rule"] for x in f["findings"]] for f in json.loads(out)["files"]}
    # both names lead to the same file inside the root: scanned once, no UNV020
    assert list(files) == ["link.md"] and "UNV020" not in files["link.md"]


def test_named_symlink_out_of_cwd_is_refused(tmp_path, monkeypatch, capsys):
    secret = tmp_path / "outside.md"
    secret.write_text(f"token {TOKEN}\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "CLAUDE.md").symlink_to(secret)
    monkeypatch.chdir(repo)
    code, out, err = _run(capsys, "check", "CLAUDE.md", "--format", "json")
    data = json.loads(out)
    assert [(f["path"], [x["rule"] for x in f["findings"]]) for f in data["files"]] == [("CLAUDE.md", ["UNV020"])]


def test_secret_values_are_redacted_everywhere(tmp_path, monkeypatch, capsys):
    (tmp_path / "AGENTS.md").write_text(f"export GITHUB_TOKEN={TOKEN}\n<!-- {TOKEN} -->\n")
    monkeypatch.chdir(tmp_path)
    for fmt in ("text", "json", "sarif"):
        code, out, err = _run(capsys, "check", ".", "--format", fmt)
        assert TOKEN not in out, fmt
        assert "ghp_…3z12" in out, fmt


def test_workspace_scan_reports_symlink_out_and_never_reads_it(tmp_path):
    import sys

    sys.path.insert(0, os.path.dirname(__file__))
    from rpc import RawServer

    (tmp_path / "env.md").symlink_to("/proc/self/environ")
    (tmp_path / "AGENTS.md").write_text("hello\n")
    env = dict(os.environ, GITHUB_TOKEN=TOKEN)
    s = RawServer(env=env)
    try:
        s.initialize(tmp_path.as_uri())
        uri = (tmp_path / "env.md").as_uri()
        p = s.publish(uri, timeout=120)
        assert [d["code"] for d in p["diagnostics"]] == ["UNV020"]
        assert all(TOKEN not in str(m) and TOKEN[4:20] not in str(m) for m in s.seen)
    finally:
        s.kill()
