"""``unveil cost`` / ``check``: price-table errors, "≈" Claude estimates, layouts, plurals and
paths that are not regular files.

Prices come from a test price file (``PRICES``) so the dollar figures are exact whatever the
bundled table holds: CLAUDE.md below is 12 o200k tokens (pinned by ``test_memory_is_12_tokens``),
"Test Claude" costs $10/MTok with a Claude tokenizer ratio of 1.5 and "Test GPT" $2/MTok with
o200k, so per session: Claude 12 × 10 × 1.5 / 1e6 = $0.00018 (≈), o200k-exact $0.00012;
GPT 12 × 2 / 1e6 = $0.000024.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from unveil.core.analyze import analyze

MEMORY = "# Project\n\nRun `pytest -q` before committing.\n"
AGENTS = "# A\n\nMore text here.\n"  # 7 tokens

PRICES = (Path(__file__).resolve().parents[1] / "data" / "test-prices.toml").read_text(encoding="utf-8")

NOTE = "≈ Claude prices are estimates: o200k tokens × the measured Claude/o200k tokenizer ratio (1.5)."


@pytest.fixture
def project(tmp_path, monkeypatch, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "CLAUDE.md", MEMORY)
    write(tmp_path / "prices.toml", PRICES)
    return tmp_path


def test_memory_is_12_tokens(project):
    rep = analyze(MEMORY, str(project / "CLAUDE.md")).tokens
    assert (rep.session, rep.invoke) == (12, 0)
    assert (analyze(AGENTS, str(project / "AGENTS.md")).tokens.session) == 7


# --------------------------------------------------------------------------- 1. bad input


def test_unknown_model_exits_2(project, run):
    assert run("cost", "CLAUDE.md", "--models", "nosuchmodel") == (
        2,
        "",
        "unveil: setting models: unknown model 'nosuchmodel'\n",
    )


def test_unknown_model_among_known_exits_2(project, run):
    assert run("cost", "CLAUDE.md", "--models", "sonnet,nosuch") == (
        2,
        "",
        "unveil: setting models: unknown model 'nosuch'\n",
    )


def test_missing_prices_file_exits_2(project, run):
    assert run("cost", "CLAUDE.md", "--prices-file", "missing.toml") == (
        2,
        "",
        "unveil: prices file missing.toml: cannot read it (No such file or directory)\n",
    )


def test_prices_file_that_is_not_toml_exits_2(project, run, write):
    write(project / "passwd", "root:x:0:0:root:/root:/bin/bash\n")
    code, out, err = run("cost", "CLAUDE.md", "--prices-file", "passwd")
    assert (code, out) == (2, "")
    assert err.startswith("unveil: prices file passwd: invalid TOML: ")
    assert err.count("\n") == 1 and "bundled" not in err


def test_prices_file_with_bad_number_exits_2(project, run, write):
    write(project / "p.toml", '[[model]]\nmodel_id = "x"\ninput_per_mtok = "abc"\n')
    assert run("cost", "CLAUDE.md", "--prices-file", "p.toml") == (
        2,
        "",
        "unveil: prices file p.toml model 1 (x): input_per_mtok must be a non-negative number, not 'abc'\n",
    )


def test_check_reports_bad_prices_file_from_project_config(project, run, write):
    write(project / ".unveil.toml", 'prices-file = "missing.toml"\n')
    code, out, err = run("check", "CLAUDE.md")
    missing = project / "missing.toml"
    assert code == 2
    assert (
        err == f"unveil: prices file {missing}: cannot read it (No such file or directory); using the bundled prices\n"
    )
    assert out.endswith(
        "No findings in 1 file.\n"  # not counted as an unreadable path
        "Project configuration .unveil.toml applied to 1 file; it turns nothing off.\n"
    )


def test_cost_reports_bad_prices_file_from_project_config(project, run, write):
    write(project / ".unveil.toml", 'models = ["nosuch"]\n')
    code, out, err = run("cost", "CLAUDE.md", "--format", "json")
    assert code == 2
    assert err == "unveil: setting models: unknown model 'nosuch'\n"
    assert json.loads(out)["files"][0]["path"] == "CLAUDE.md"


def test_good_prices_file_is_quiet(project, run):
    code, _, err = run("cost", "CLAUDE.md", "--prices-file", "prices.toml")
    assert (code, err) == (0, "")


# --------------------------------------------------------------------------- 2. ≈ Claude prices


def test_single_file_text_shows_estimates(project, run):
    code, out, err = run("cost", "CLAUDE.md", "--prices-file", "prices.toml")
    assert (code, err) == (0, "")
    assert out.splitlines()[4:] == [
        "  model        per session  once invoked  per 1,000 sessions",
        "  Test Claude    ≈$0.00018            $0              ≈$0.18",
        "  Test GPT       $0.000024            $0              $0.024",
        "  " + NOTE,
    ]


def test_json_keeps_exact_and_adds_estimates(project, run):
    code, out, err = run("cost", "CLAUDE.md", "--prices-file", "prices.toml", "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    claude, gpt = data["files"][0]["prices"]
    assert claude == {
        "model": "Test Claude",
        "usd_per_session": pytest.approx(0.00012),
        "usd_per_invoke": 0.0,
        "usd_per_1000_sessions": pytest.approx(0.12),
        "estimated": True,
        "token_ratio": 1.5,
        "approx_usd_per_session": pytest.approx(0.00018),
        "approx_usd_per_invoke": 0.0,
        "approx_usd_per_1000_sessions": pytest.approx(0.18),
    }
    assert gpt == {
        "model": "Test GPT",
        "usd_per_session": pytest.approx(0.000024),
        "usd_per_invoke": 0.0,
        "usd_per_1000_sessions": pytest.approx(0.024),
        "estimated": False,
        "token_ratio": None,
        "approx_usd_per_session": None,
        "approx_usd_per_invoke": None,
        "approx_usd_per_1000_sessions": None,
    }
    assert data["total"]["prices"][0]["approx_usd_per_session"] == pytest.approx(0.00018)
    assert data["price_note"] == NOTE


def test_no_note_without_estimates(project, run):
    code, out, _ = run("cost", "CLAUDE.md", "--prices-file", "prices.toml", "--models", "test-gpt")
    assert code == 0
    assert out.splitlines()[4:] == [
        "  model     per session  once invoked  per 1,000 sessions",
        "  Test GPT    $0.000024            $0              $0.024",
    ]


# --------------------------------------------------------------------------- 5./6. layout, plurals


def test_folder_with_one_file_says_agent_file(project, run, write):
    write(project / "d" / "CLAUDE.md", MEMORY)
    code, out, err = run("cost", "d", "--prices-file", "prices.toml")
    assert (code, err) == (0, "")
    assert "Price of the 1 agent file (every session / once invoked):" in out.splitlines()
    assert "files" not in out.split("Price of the")[1].splitlines()[0]


def test_several_files_use_the_folder_table(project, run, write):
    write(project / "d" / "CLAUDE.md", MEMORY)
    write(project / "d" / "AGENTS.md", AGENTS)
    os.chdir(project / "d")
    listed = run("cost", "CLAUDE.md", "AGENTS.md", "--prices-file", "../prices.toml")
    folder = run("cost", ".", "--prices-file", "../prices.toml")
    assert listed == folder
    code, out, err = listed
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == [
        "file",
        "every",
        "session",
        "once",
        "invoked",
        "≈",
        "Claude/session",
        "grade",
        "err/warn/info",
    ]
    assert [ln.split()[:3] for ln in lines if ln.startswith("Total")] == [["Total", "(2", "agent"]]
    # 19 tokens: 19 × 10 × 1.5 / 1e6 = 0.000285; 19 × 2 / 1e6 = 0.000038
    assert lines[-5:] == [
        "Price of the 2 agent files (every session / once invoked):",
        "  model        per session  once invoked  per 1,000 sessions",
        "  Test Claude   ≈$0.000285            $0             ≈$0.285",
        "  Test GPT       $0.000038            $0              $0.038",
        "  " + NOTE,
    ]


# --------------------------------------------------------------------------- 4. FIFOs


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo") or sys.platform == "win32", reason="needs os.mkfifo")


@needs_fifo
def test_folder_walk_skips_fifo(project, run, write):
    write(project / "d" / "CLAUDE.md", MEMORY)
    os.mkfifo(project / "d" / "x.md")
    code, out, err = run("check", "d")  # would block forever opening the FIFO
    assert (code, err) == (0, "")
    assert out.endswith("No findings in 1 file.\n")
    assert "x.md" not in out


@needs_fifo
def test_fifo_on_command_line_is_an_error(project, run):
    os.mkfifo(project / "x.md")
    code, out, err = run("check", "x.md", "CLAUDE.md")
    assert code == 2
    assert err == "unveil: x.md: not a regular file\n"
    assert "CLAUDE.md: " in out
    assert run("cost", "x.md")[::2] == (2, "unveil: x.md: not a regular file\n")
