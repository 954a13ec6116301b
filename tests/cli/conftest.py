"""Fixtures for the CLI tests.

``fake_checks`` replaces the real checks with one deterministic check so the reporters' exact
output (positions, severities, messages) can be asserted independently of the detection
rules: every marker ``<<E>>``, ``<<W>>``, ``<<I>>`` or ``<<H>>`` in a file becomes one finding
over the marker's five code points with rule HID001 (error), HID020 (warning), HID009 (info) or
HID002 (hint), message ``"marker <<X>> says: <rest of the line>"`` and ``hidden_text`` the rest
of the line.
"""

from __future__ import annotations

import re

import pytest

import unveil.core.analyze  # noqa: F401 - imported before patching so its own all_checks is the real one
from unveil.cli import main
from unveil.core.findings import Finding, Severity

MARKERS = {
    "E": ("HID001", Severity.ERROR),
    "W": ("HID020", Severity.WARNING),
    "I": ("HID009", Severity.INFO),
    "H": ("HID002", Severity.HINT),
}
_MARKER = re.compile(r"<<([EWIH])>>([^\r\n]*)")


def fake_check(ctx):
    for m in _MARKER.finditer(ctx.doc.text):
        rule, severity = MARKERS[m.group(1)]
        rest = m.group(2).strip()
        yield Finding(
            rule, severity, m.start(), m.start() + 5, f"marker <<{m.group(1)}>> says: {rest}", hidden_text=rest
        )


@pytest.fixture
def fake_checks(monkeypatch):
    """Run only :func:`fake_check` in :func:`unveil.core.analyze.analyze`."""
    monkeypatch.setattr("unveil.core.checks.all_checks", lambda: [fake_check])
    monkeypatch.setattr("unveil.core.analyze.all_checks", lambda: [fake_check], raising=False)
    return fake_check


@pytest.fixture
def run(capsys):
    """Run ``unveil ARGS`` in-process; returns ``(exit status, stdout, stderr)``."""

    def _run(*args: str):
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


def _write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def write():
    """``write(path, text)``: write ``text`` as UTF-8 bytes (line ends as given), creating folders."""
    return _write
