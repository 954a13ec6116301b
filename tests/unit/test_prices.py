"""Bundled price table, dated entries, user overrides and shown models."""

from __future__ import annotations

import datetime as dt

import pytest

from unveil.core import prices
from unveil.core.config import Settings

TODAY = dt.date(2026, 11, 29)


def table(settings=None, day=TODAY):
    return prices.load_prices(settings, today=day)


def test_bundled_defaults():
    t = table()
    assert t.errors == []
    got = {
        name: t.find(name).input_per_mtok
        for name in ("Claude Fable 5.1", "opus", "sonnet", "haiku", "gpt-6.2-sol", "gpt-6.2-astra", "gemini-3.8-flash")
    }
    assert got == {
        "Claude Fable 5.1": 10.0,
        "opus": 4.0,
        "sonnet": 2.0,
        "haiku": 1.0,
        "gpt-6.2-sol": 2.0,
        "gpt-6.2-astra": 8.0,
        "gemini-3.8-flash": 0.75,
    }
    haiku = t.find("claude-haiku-4-5")
    assert (haiku.display_name, haiku.tokenizer, haiku.token_ratio_vs_o200k, haiku.cached_input_per_mtok) == (
        "Claude Haiku 4.5",
        "claude-v3",
        1.18,
        0.1,
    )
    assert haiku.source_url.startswith("https://platform.claude.com/")
    assert len({m.model_id for m in t.models}) == len(t.models)


def test_every_entry_has_provenance():
    for m in table().models:
        assert m.provider in ("anthropic", "openai", "google"), m
        assert m.source_url.startswith("https://") and m.retrieved_at, m
        assert m.tokenizer in ("o200k_base", "claude-v3", "claude-v4.8", "unknown"), m


@pytest.mark.parametrize(("day", "price"), [(dt.date(2026, 12, 31), 0.75), (dt.date(2027, 1, 1), 1.5)])
def test_dated_price_change(day, price):
    assert table(day=day).find("Gemini 3.8 Flash").input_per_mtok == price


def test_default_shown_models():
    names = [m.display_name for m in prices.shown_models(None, table())]
    assert names == [
        "Claude Fable 5.1",
        "Claude Opus 5.5",
        "Claude Sonnet 5.5",
        "Claude Haiku 4.5",
        "GPT-6.2 Sol",
        "Gemini 3.8 Flash",
    ]


def test_prices_file_merges_over_bundled(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(
        'shown = ["claude-opus-5-5", "local-llm"]\n'
        '[[model]]\nmodel_id = "claude-opus-5-5"\ninput_per_mtok = 6\n'
        '[[model]]\nmodel_id = "local-llm"\ndisplay_name = "Local"\ninput_per_mtok = 0.5\n'
    )
    s = Settings().merged({"pricesFile": str(f)})
    t = table(s)
    assert t.errors == []
    opus = t.find("opus")
    assert (opus.input_per_mtok, opus.cached_input_per_mtok, opus.display_name) == (6.0, 0.2, "Claude Opus 5.5")
    assert [m.display_name for m in prices.shown_models(s, t)] == ["Claude Opus 5.5", "Local"]


def test_broken_prices_file_keeps_bundled_table(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("[[model]\nx=")
    t = table(Settings().merged({"pricesFile": str(f)}))
    assert len(t.errors) == 1
    assert t.errors[0].startswith(f"prices file {f}: invalid TOML") and t.errors[0].endswith("using the bundled prices")
    assert t.find("opus").input_per_mtok == 4.0


def test_prices_file_bad_entry_and_missing_file(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text('[[model]]\nmodel_id = "claude-opus-5-5"\ninput_per_mtok = "cheap"\n[[model]]\nmodel_id = "x"\n')
    t = table(Settings().merged({"pricesFile": str(f)}))
    assert t.find("opus").input_per_mtok == 4.0
    assert len(t.errors) == 2
    assert "input_per_mtok must be a non-negative number" in t.errors[0]
    assert "input_per_mtok is required" in t.errors[1]
    missing = table(Settings().merged({"pricesFile": str(tmp_path / "none.toml")}))
    assert len(missing.errors) == 1 and "cannot read it" in missing.errors[0]


def test_settings_prices_override_and_add():
    s = Settings().merged({"prices": {"Claude Sonnet 5.5": 2.5, "my-model": 0.2, "bad": "x"}})
    t = table(s)
    assert t.find("sonnet").input_per_mtok == 2.5
    assert t.find("my-model").input_per_mtok == 0.2
    assert [m.display_name for m in prices.shown_models(s, t)][-1] == "my-model"


def test_settings_models_selection_by_alias_and_display_name():
    s = Settings().merged({"models": ["opus", "GPT-6 Luna", "nope"]})
    t = table(s)
    assert [m.display_name for m in prices.shown_models(s, t)] == ["Claude Opus 5.5", "GPT-6 Luna"]
    assert t.errors == ["setting models: unknown model 'nope'"]


def test_settings_models_wrong_type_is_a_problem_and_keeps_the_default():
    default = Settings().models
    s = Settings().merged({"models": 42})
    assert s.problems == ("setting 'models' must be a list of model names",)
    assert s.models == default
    assert Settings().merged({"models": "opus, sonnet"}).models == ("opus", "sonnet")
    assert Settings().merged({"models": None}).problems == ()


def test_display_name_without_vendor_word_is_accepted():
    from unveil.core.prices import load_prices

    table = load_prices()
    assert table.find("Sonnet 5.5").display_name == "Claude Sonnet 5.5"
    assert table.find("haiku 4.5").display_name == "Claude Haiku 4.5"
    assert table.find("Sonnet 9.9") is None


def test_model_names_are_computed_once_per_entry_and_follow_replace():
    from dataclasses import replace

    m = prices.ModelPrice("x-1", "Claude X 1", 1.0, aliases=("XA",))
    assert m.names() == ("x-1", "claude x 1", "xa", "x 1")
    assert m.names() is m.names()
    n = replace(m, display_name="OpenAI Y")
    assert n.names() == ("x-1", "openai y", "xa", "y")
    assert m == replace(m)  # the kept names are not a field: equality ignores them
    assert prices.PriceTable([m, n]).find(" XA ") is m
