"""The prefilter analysis (core/checks/pattern_analysis.py) skips `regex`-only escapes such as
``\\p{..}`` and ``\\K`` but not an escaped backslash followed by one of those letters
(``\\\\Programs`` is a backslash and "Programs"), and its cache key follows its source."""

from __future__ import annotations

import pytest

from unveil.core.checks import pattern_analysis as pa

FOLDERS = ["Programs", "Microsoft", "Plugins", "Packages", "Keys", "Logs", "Hooks", "Mail", "Notes", "Guard"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_an_escaped_backslash_before_a_letter_keeps_the_prefilter(folder):
    pattern = r"\\Start\s*Menu\\" + folder + r"\\Startup\b|shell:startup"
    assert pa.required_literals(pattern, pa.FLAGS) != ()


@pytest.mark.parametrize("escape", [r"\p{L}+", r"\P{Lu}", r"\X", r"\K", r"\\\p{L}"])
def test_regex_only_escapes_still_have_no_prefilter(escape):
    assert pa.required_literals("launchctl " + escape, pa.FLAGS) == ()


def test_windows_startup_paths_rule_gets_literals():
    from unveil.core.checks import directives

    pr = next(p for p in directives.load_pattern_rules().rules if p.id == "PER005")
    assert "launchctl" in pr.prefilters[0][0] and "shell:startup" in pr.prefilters[0][0]


def test_the_rule_analysis_cache_key_follows_the_analysis_source(monkeypatch, tmp_path):
    from pathlib import Path

    from unveil.core.checks import directives

    before = directives._bundled_key()
    copy = tmp_path / "pattern_analysis.py"
    copy.write_bytes(Path(pa.__file__).read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(pa, "__file__", str(copy))
    assert directives._bundled_key() != before
