"""A negation word inside a hyphenated name or option (``--no-verify``, ``no-cache``,
``non-interactive``) is part of that name: it neither lowers nor cuts the scope of the sentence's
real negation (context.py ``_last_negation``)."""

from __future__ import annotations

import itertools

import pytest

from unveil.core.analyze import analyze

COMPOUNDS = ["`--no-verify`", "`--no-cache`", "`no-op` mode", "`--no-color`", "`--non-interactive`"]
NEGATIONS = ["Never use", "Do not use", "You must not use", "Don't pass"]


def _agy006(text: str):
    return [f.severity.label for f in analyze(text, "AGENTS.md", count_tokens=False).findings if f.rule == "AGY006"]


@pytest.mark.parametrize(("neg", "compound"), list(itertools.product(NEGATIONS, COMPOUNDS)))
def test_a_prohibition_over_a_list_with_a_no_compound_is_lowered(neg, compound):
    text = f"- {neg} {compound}, `--force` on `main`, or `-auto-approve` with Terraform.\n"
    assert _agy006(text) == ["hint"]


@pytest.mark.parametrize("compound", COMPOUNDS)
def test_the_same_list_as_an_instruction_stays_a_warning(compound):
    text = f"- Always use {compound}, `--force` on `main`, and `-auto-approve` with Terraform.\n"
    assert _agy006(text) == ["warning"]


@pytest.mark.parametrize("compound", COMPOUNDS)
def test_a_compound_alone_is_no_negation(compound):
    # the only "no" is inside the option's name: nothing lowers the auto-approval
    text = f"- Run the plan with {compound} and `-auto-approve` every time.\n"
    assert _agy006(text) == ["warning"]
