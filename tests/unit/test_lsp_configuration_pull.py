"""The ``workspace/configuration`` answer pulled at ``initialized``: only a section that changes
a setting re-analyses the open documents (:func:`unveil.lsp.features.configuration.adds_nothing`)."""

from __future__ import annotations

import pytest

from unveil.core.config import Settings
from unveil.core.project import editor_layer
from unveil.lsp.features.configuration import adds_nothing


@pytest.mark.parametrize(
    "section",
    [None, {}, {"unveil": {}}, {"select": [], "ignore": None, "severity": {}, "rulesPaths": ""}, [], "x", 3],
)
def test_sections_that_change_nothing(section):
    assert adds_nothing(section) is True
    # the two ways a section reaches the analysis leave the settings as they were
    base = Settings().merged({"ignore": ["HID002"]})
    layer = editor_layer(section)
    assert (base.merged(layer) if isinstance(layer, dict) else base) == base


@pytest.mark.parametrize(
    "section",
    [
        {"ignore": ["HID002"]},
        {"unveil": {"select": ["hidden"]}},
        {"severity": {"HID001": "hint"}},
        {"budgets": {"x": 1}},
    ],
)
def test_sections_that_change_a_setting(section):
    assert adds_nothing(section) is False
