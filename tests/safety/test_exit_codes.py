"""Issue 9 item 17: internal failures exit 3 with one clear line; a deeply nested config file gives
a message, not a traceback."""

from __future__ import annotations

from unveil.cli import EXIT_INTERNAL, main


def test_internal_failure_exits_3_with_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "AGENTS.md").write_text("hello\n")
    monkeypatch.chdir(tmp_path)

    def boom(*a, **k):
        raise RuntimeError("reporter exploded\nsecond line")

    monkeypatch.setattr("unveil.reporters.text.render", boom)
    code = main(["check", "."])
    err = capsys.readouterr().err
    assert code == EXIT_INTERNAL == 3
    assert err == (
        "unveil: internal error: RuntimeError: reporter exploded second line (this is a bug in unveil; "
        "rerun with UNVEIL_DEBUG=1 for the traceback)\n"
    )


def test_deeply_nested_config_is_one_message(tmp_path, monkeypatch, capsys):
    (tmp_path / ".unveil.toml").write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    (tmp_path / "AGENTS.md").write_text("hello\n")
    monkeypatch.chdir(tmp_path)
    code = main(["check", "."])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert err.startswith(f"unveil: {tmp_path / '.unveil.toml'}: invalid TOML, using the defaults: ")
    assert err.count("\n") == 1
    assert code == 0
