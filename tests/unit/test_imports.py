"""@imports of CLAUDE.md / GEMINI.md: parsing, resolution, depth limits, cycles, token costs,
findings (IMP001/IMP002) and the inlay hints. Token figures are o200k counts computed once with
the bundled tokenizer (MAIN 26, STYLE 14, REVIEW 6)."""

from __future__ import annotations

from unveil.core import imports, tokens
from unveil.core.analyze import analyze
from unveil.core.findings import Severity
from unveil.lsp.features.inlay_hints import inlay_hints

MAIN = "# Project\n\nFollow @docs/style.md and @./shared/review.md.\n\n`@docs/ignored.md` is code.\n"
STYLE = "# Style\n\nUse tabs. See @../shared/review.md\n"
REVIEW = "Review every diff for bugs.\n"
FILES = {"/r/docs/style.md": STYLE, "/r/shared/review.md": REVIEW}


def test_fixture_token_counts():
    assert (tokens.count(MAIN), tokens.count(STYLE), tokens.count(REVIEW)) == (26, 14, 6)


def test_find_imports_skips_code_emails_and_handles():
    text = (
        "See @README.md, then @docs/a.md.\n"
        "Mail dev@example.com or ask @alice; `@code.md` and\n"
        "```\n@fenced.md\n```\n"
        "@my\\ notes.md (escaped space) and (@paren.md)\n"
    )
    refs = imports.find_imports(text)
    assert [(r.target, r.line, text[r.start : r.end]) for r in refs] == [
        ("README.md", 0, "@README.md"),
        ("docs/a.md", 0, "@docs/a.md"),
        ("my notes.md", 5, "@my\\ notes.md"),
    ]


def test_find_imports_after_frontmatter_only():
    text = "---\ndescription: see @x.md\n---\n@y.md\n"
    assert [r.target for r in imports.find_imports(text)] == ["y.md"]


def test_resolve_paths():
    assert imports.resolve_path("docs/a.md", "/r/CLAUDE.md") == "/r/docs/a.md"
    assert imports.resolve_path("../b.md", "/r/sub/CLAUDE.md") == "/r/b.md"
    assert imports.resolve_path("/abs/c.md", "/r/CLAUDE.md") == "/abs/c.md"
    assert imports.resolve_path("~/.claude/x.md", "/r/CLAUDE.md", home="/home/u") == "/home/u/.claude/x.md"


def test_session_includes_imports_and_per_import_tokens():
    a = analyze(MAIN, "/r/CLAUDE.md", reader=FILES.get)
    t = a.tokens
    # root 26 + style.md 14 + review.md 6 (loaded twice, counted once)
    assert (t.session, t.imported, t.invoke) == (46, 20, 0)
    assert [(c.target, c.line, c.status, c.tokens) for c in t.imports] == [
        ("docs/style.md", 2, "ok", 20),  # style.md + the review.md it imports
        ("./shared/review.md", 2, "ok", 6),
    ]
    assert [f.rule for f in a.findings if f.category == "imports"] == []
    assert t.claude_session == round(46 * t.claude_ratio)


def test_missing_import_is_a_finding_at_its_range():
    text = "# P\n\nSee @docs/nope.md and @scope/pkg for details.\n"
    a = analyze(text, "/r/CLAUDE.md", reader=FILES.get)
    got = [(f.rule, f.severity, text[f.start : f.end], f.message) for f in a.findings if f.rule == "IMP001"]
    assert got == [
        (
            "IMP001",
            Severity.WARNING,
            "@docs/nope.md",
            "Import @docs/nope.md not found: there is no readable file docs/nope.md; Claude Code loads nothing for it",
        ),
        (
            "IMP001",
            Severity.INFO,
            "@scope/pkg",
            "Import @scope/pkg not found: there is no readable file scope/pkg; Claude Code loads nothing for it"
            " (ignore this if it names a package or a handle, not a file)",
        ),
    ]
    assert a.tokens.session == tokens.count(text)


def test_nested_missing_import_reported_on_the_root_import():
    files = {"/r/a.md": "A @b.md\n"}
    text = "@a.md\n"
    a = analyze(text, "/r/CLAUDE.md", reader=files.get)
    got = [(f.rule, f.start, f.end, f.message) for f in a.findings if f.rule == "IMP001"]
    assert got == [
        (
            "IMP001",
            0,
            5,
            "Import @b.md not found: there is no readable file b.md (via @a.md → @b.md); "
            "Claude Code loads nothing for it",
        )
    ]


def test_cycle():
    files = {"/r/a.md": "@b.md\n", "/r/b.md": "@a.md\n"}
    a = analyze("@a.md\n", "/r/GEMINI.md", reader=files.get)
    got = [(f.rule, f.start, f.end, f.message) for f in a.findings if f.rule == "IMP002"]
    assert got == [
        (
            "IMP002",
            0,
            5,
            "Import cycle: GEMINI.md → a.md → b.md → a.md; Gemini CLI does not load a.md "
            "again, so the chain never finishes the way it reads",
        )
    ]
    # a.md and b.md once each: 3 + 3 tokens on top of the root's 3
    assert a.tokens.imported == tokens.count("@b.md\n") + tokens.count("@a.md\n")


def test_depth_limits_claude_4_gemini_5():
    # chain /r/f1.md → f2 → … → f6
    files = {f"/r/f{i}.md": f"level {i} @f{i + 1}.md\n" for i in range(1, 6)}
    files["/r/f6.md"] = "level 6\n"
    claude = imports.resolve("@f1.md\n", "/r/CLAUDE.md", "claude-md", files.get)
    gemini = imports.resolve("@f1.md\n", "/r/GEMINI.md", "gemini-md", files.get)
    assert [(n.path, n.depth, n.status) for n in claude.nodes()] == [
        ("/r/f1.md", 1, "ok"),
        ("/r/f2.md", 2, "ok"),
        ("/r/f3.md", 3, "ok"),
        ("/r/f4.md", 4, "ok"),
        ("/r/f5.md", 5, "too-deep"),
    ]
    assert [n.status for n in gemini.nodes()] == ["ok"] * 5 + ["too-deep"]
    a = analyze("@f1.md\n", "/r/CLAUDE.md", reader=files.get)
    f = [x for x in a.findings if x.rule == "IMP001"]
    assert len(f) == 1 and f[0].message.startswith("Import @f5.md is 5 hops from this file (via @f1.md → @f2.md → ")
    assert "Claude Code follows imports at most 4 hops deep" in f[0].message


def test_reader_errors_count_as_missing_and_no_kind_no_imports():
    def boom(path):
        raise PermissionError(path)

    tree = imports.resolve("@a.md\n", "/r/CLAUDE.md", "claude-md", boom)
    assert [n.status for n in tree.nodes()] == ["missing"]
    assert imports.resolve("@a.md\n", "/r/AGENTS.md", "agents-md", boom) is None
    assert analyze("@a.md\n", None).extra.get("imports") is None


def test_disk_reader_prefers_overrides(tmp_path):
    (tmp_path / "a.md").write_text("on disk\n", encoding="utf-8")
    read = imports.disk_reader(overrides={str(tmp_path / "b.md"): "unsaved\n"})
    assert read(str(tmp_path / "a.md")) == "on disk\n"
    assert read(str(tmp_path / "b.md")) == "unsaved\n"
    assert read(str(tmp_path / "c.md")) is None
    assert read(str(tmp_path)) is None


def test_inlay_hint_after_each_import():
    a = analyze(MAIN, "/r/CLAUDE.md", reader=FILES.get)
    hints = inlay_hints(a, None, "utf-16")
    got = [
        (h.position.line, h.position.character, h.label.replace("\u00a0", " "))
        for h in hints
        if str(h.label).startswith("+")
    ]
    assert got == [(2, 21, "+20 tok"), (2, 45, "+6 tok")]


def test_norm_path_names_files_as_the_import_tree_does():
    # one normalisation for the tree, the disk reader's overrides and the result cache's deps
    assert imports.norm_path("/ws/docs/./a/../style.md") == "/ws/docs/style.md"
    assert imports.norm_path("C:\\ws\\docs\\..\\docs\\style.md") == "C:\\ws\\docs\\style.md"
    assert imports.norm_path("C:\\ws/docs") == "C:\\ws/docs"  # mixed: POSIX rules
    read = imports.disk_reader(overrides={"C:\\ws\\docs\\..\\docs\\style.md": "unsaved"})
    assert read("C:\\ws\\docs\\style.md") == "unsaved"
