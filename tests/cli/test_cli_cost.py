"""``unveil cost``: tokens per session and once invoked, the basis and the price per model.

Expected numbers come from :func:`unveil.core.analyze.analyze` and the price helpers, so these
tests check that the command reports exactly what the core computes (the core's own tests pin
the token counts themselves).
"""

from __future__ import annotations

import json

from unveil.core import cost, prices
from unveil.core.analyze import analyze
from unveil.core.config import DEFAULT_SETTINGS

AGENT = """---
name: reviewer
description: Reviews diffs for bugs. Use after a change.
tools: Read, Grep
---

You review code. Report bugs with file and line.
"""

MEMORY = "# Project\n\nRun `pytest -q` before committing.\n"


def _report(path, text):
    return analyze(text, str(path.resolve())).tokens


def test_cost_json(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    agent = write(tmp_path / ".claude/agents/reviewer.md", AGENT)
    memory = write(tmp_path / "CLAUDE.md", MEMORY)
    code, out, err = run("cost", ".", "--format", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    a, m = _report(agent, AGENT), _report(memory, MEMORY)
    assert a is not None and m is not None, "the token report must be computed"
    files = {f["path"]: f for f in data["files"]}
    assert set(files) == {".claude/agents/reviewer.md", "CLAUDE.md"}
    fa = files[".claude/agents/reviewer.md"]
    assert fa["kind"] == "claude-agent"
    assert fa["kind_label"] == a.kind_label
    assert fa["tokens"] == {"session": a.session, "invoke": a.invoke}
    assert fa["basis"] == a.basis
    fm = files["CLAUDE.md"]
    assert fm["tokens"] == {"session": m.session, "invoke": m.invoke}
    # CLAUDE.md is loaded whole every session; a subagent only lists its name and description
    assert m.session > 0 and a.session < a.session + a.invoke
    models = prices.shown_models(DEFAULT_SETTINGS)
    rows = list(cost.price_rows(a, models))
    assert [p["model"] for p in fa["prices"]] == [getattr(r.model, "name", r.model) for r in rows]
    assert [p["usd_per_session"] for p in fa["prices"]] == [r.usd_per_session for r in rows]
    assert [p["usd_per_1000_sessions"] for p in fa["prices"]] == [r.usd_per_1000_sessions for r in rows]
    assert data["total"]["tokens"] == {"session": a.session + m.session, "invoke": a.invoke + m.invoke}
    assert data["total"]["files"] == 2


def test_cost_text(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    memory = write(tmp_path / "CLAUDE.md", MEMORY)
    code, out, err = run("cost", "CLAUDE.md")
    assert (code, err) == (0, "")
    m = _report(memory, MEMORY)
    assert m is not None
    lines = out.splitlines()
    assert lines[0] == f"CLAUDE.md — {m.kind_label}"
    assert lines[1] == f"  tokens every session: {m.session:,}"
    assert lines[2] == f"  tokens once invoked:  {m.invoke:,}"
    assert lines[3] == f"  basis: {m.basis}"
    rows = list(cost.price_rows(m, prices.shown_models(DEFAULT_SETTINGS)))
    assert rows
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("model"))
    assert lines[header].split() == ["model", "per", "session", "once", "invoked", "per", "1,000", "sessions"]
    first = lines[header + 1]
    assert first.strip().startswith(getattr(rows[0].model, "name", str(rows[0].model)))
    per_1000 = rows[0].usd_per_1000_sessions
    if rows[0].approx_usd_per_session is not None:  # Claude: the "≈" estimate is shown
        expected = "≈" + cost.format_usd(rows[0].approx_usd_per_session * 1000)
    else:
        expected = cost.format_usd(per_1000)
    assert first.rstrip().endswith(expected)
    assert "Total" not in out  # one file: no totals


def test_cost_totals_for_several_files(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    one = write(tmp_path / "CLAUDE.md", MEMORY)
    two = write(tmp_path / "AGENTS.md", MEMORY + "More.\n")
    code, out, _ = run("cost", "CLAUDE.md", "AGENTS.md")
    assert code == 0
    r1, r2 = _report(one, MEMORY), _report(two, MEMORY + "More.\n")
    # several files: the folder table, whose Total row sums both files
    total = next(line for line in out.splitlines() if line.startswith("Total"))
    assert total.split()[:5] == ["Total", "(2", "agent", "files)", f"{r1.session + r2.session:,}"]
    assert total.split()[5] == f"{r1.invoke + r2.invoke:,}"


def test_cost_models_flag(tmp_path, monkeypatch, run, write):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "CLAUDE.md", MEMORY)
    models = prices.shown_models(DEFAULT_SETTINGS)
    rows = list(cost.price_rows(_report(tmp_path / "CLAUDE.md", MEMORY), models))
    name = getattr(rows[-1].model, "name", str(rows[-1].model))
    code, out, _ = run("cost", "CLAUDE.md", "--format", "json", "--models", name)
    assert code == 0
    assert [p["model"] for p in json.loads(out)["files"][0]["prices"]] == [name]


def test_cost_missing_path_exits_2(tmp_path, monkeypatch, run):
    monkeypatch.chdir(tmp_path)
    code, out, err = run("cost", "nope.md")
    assert code == 2
    assert err == "unveil: nope.md: no such file or folder\n"
