"""Prices shown by the language server: "≈" Claude estimates with a footnote in the hover table
and the file report, and price-table problems sent once (not on every hover).

CLAUDE.md below is 12 o200k tokens; the test price file makes "Test Claude" $10/MTok with ratio
1.5 (≈ 12 × 10 × 1.5 / 1e6 = $0.00018; exact o200k $0.00012) and "Test GPT" $2/MTok ($0.000024).
"""

from __future__ import annotations

import types as pytypes
from pathlib import Path

import pytest
from lsprotocol import types

from unveil.core.analyze import analyze
from unveil.core.config import DEFAULT_SETTINGS
from unveil.lsp.features.hover import cost_markdown, price_problems, report_price_problems
from unveil.lsp.features.reveal import file_report

MEMORY = "# Project\n\nRun `pytest -q` before committing.\n"
PRICES = (Path(__file__).resolve().parents[1] / "data" / "test-prices.toml").read_text(encoding="utf-8")
NOTE = "≈ Claude prices are estimates: o200k tokens × the measured Claude/o200k tokenizer ratio (1.5)."


@pytest.fixture
def analysis(tmp_path):
    (tmp_path / "prices.toml").write_text(PRICES, encoding="utf-8")
    settings = DEFAULT_SETTINGS.merged({"pricesFile": str(tmp_path / "prices.toml")})
    a = analyze(MEMORY, str(tmp_path / "CLAUDE.md"), settings)
    assert (a.tokens.session, a.tokens.invoke) == (12, 0)
    return a


def test_hover_table_shows_estimates_and_note(analysis):
    value = cost_markdown(analysis)
    assert "| Test Claude | ≈$0.00018 | $0 | ≈$0.18 |" in value
    assert "| Test GPT | $0.000024 | $0 | $0.024 |" in value
    assert f"_{NOTE}_" in value
    assert price_problems(analysis) == ()


def test_file_report_prices(analysis):
    rep = file_report(analysis, "file:///CLAUDE.md", 1)
    claude, gpt = rep["prices"]
    assert claude["approx"] is True and claude["tokenRatio"] == 1.5
    assert claude["usdPerSession"] == pytest.approx(0.00018)
    assert claude["o200kUsdPerSession"] == pytest.approx(0.00012)
    assert claude["o200kUsdPer1000Sessions"] == pytest.approx(0.12)
    assert claude["text"] == {"perSession": "≈$0.00018", "perInvoke": "$0", "per1000Sessions": "≈$0.18"}
    assert gpt["approx"] is False and gpt["tokenRatio"] is None
    assert gpt["text"] == {"perSession": "$0.000024", "perInvoke": "$0", "per1000Sessions": "$0.024"}
    assert rep["pricesNote"] == NOTE


def test_price_problems_reported_once(tmp_path):
    settings = DEFAULT_SETTINGS.merged({"pricesFile": str(tmp_path / "missing.toml"), "models": ["nosuch"]})
    a = analyze(MEMORY, str(tmp_path / "CLAUDE.md"), settings)
    problems = price_problems(a)
    assert problems == (
        f"prices file {tmp_path / 'missing.toml'}: cannot read it (No such file or directory); using the bundled prices",
        "setting models: unknown model 'nosuch'",
    )
    sent = []
    ls = pytypes.SimpleNamespace(window_log_message=sent.append)
    assert report_price_problems(ls, problems) is True
    assert report_price_problems(ls, problems) is False  # the next hover: nothing new
    assert report_price_problems(ls, ()) is False
    assert [(p.type, p.message) for p in sent] == [
        (types.MessageType.Warning, "unveil prices: " + "; ".join(problems)),
    ]
    assert report_price_problems(ls, problems[1:]) is True  # a different set is sent again
    assert len(sent) == 2
