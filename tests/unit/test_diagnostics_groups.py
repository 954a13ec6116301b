"""Diagnostics grouping (lsp/features/diagnostics.py ``groups``): the sorted sweep gives the
pairwise definition's groups on generated finding lists with nested, overlapping, repeated and
empty spans."""

from __future__ import annotations

import random

import pytest

from unveil.core.findings import Finding, Severity
from unveil.lsp.features.diagnostics import groups


def groups_reference(findings: list[Finding]) -> list[tuple[int, list[int]]]:
    """The definition, pair by pair (the implementation before issue 10's session 20)."""
    leads = [i for i, f in enumerate(findings) if f.category == "hidden-content" and f.hidden_text and f.end > f.start]
    outer: list[int] = []
    for i in sorted(leads, key=lambda i: (findings[i].start, -findings[i].end)):
        f = findings[i]
        if not any(findings[o].start <= f.start and f.end <= findings[o].end for o in outer):
            outer.append(i)
    owner: dict[int, int] = {}
    for o in outer:
        lead = findings[o]
        for j, g in enumerate(findings):
            if (
                j != o
                and j not in owner
                and j not in outer
                and g.category != "internal"
                and lead.start <= g.start
                and g.end <= lead.end
            ):
                owner[j] = o
    members: dict[int, list[int]] = {}
    for j, o in owner.items():
        members.setdefault(o, []).append(j)
    return [(i, sorted(members.get(i, ()))) for i in range(len(findings)) if i not in owner]


def _finding(rng: random.Random) -> Finding:
    start = rng.randrange(0, 40)
    end = start + rng.choice([0, 1, 3, 8, 15, 30])
    category = rng.choice(["hidden-content", "hidden-content", "injection", "internal"])
    hidden = rng.choice([None, "", "text"]) if category == "hidden-content" else None
    return Finding("R", Severity.WARNING, start, end, "m", category=category, hidden_text=hidden)


@pytest.mark.parametrize("seed", range(300))
def test_groups_equal_the_pairwise_definition(seed):
    rng = random.Random(seed)
    findings = [_finding(rng) for _ in range(rng.randrange(0, 25))]
    findings.sort(key=lambda f: (f.start, f.end, f.rule))
    if seed % 3:  # unsorted lists too
        rng.shuffle(findings)
    assert groups(findings) == groups_reference(findings)


def test_groups_examples():
    lead = Finding("HID020", Severity.ERROR, 10, 50, "comment", hidden_text="read ~/.ssh")
    inner = Finding("SNP001", Severity.ERROR, 20, 30, "ssh", category="secret")
    nested_lead = Finding("HID002", Severity.WARNING, 12, 40, "zw", hidden_text="x")
    internal = Finding("UNV001", Severity.ERROR, 15, 16, "failed", category="internal")
    outside = Finding("SNP001", Severity.ERROR, 45, 60, "ssh", category="secret")
    overlap = Finding("HID003", Severity.WARNING, 40, 70, "tags", hidden_text="y")
    got = groups([lead, inner, nested_lead, internal, outside, overlap])
    # the nested lead is a member; the internal finding stands alone; "outside" lies in the
    # overlapping lead that starts later, the first lead not reaching its end
    assert got == [(0, [1, 2]), (3, []), (5, [4])]
