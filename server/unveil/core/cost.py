"""Token cost per file kind: what a file adds to every session and what it adds once used.

Two numbers per file, in ``o200k_base`` tokens (:mod:`unveil.core.tokens`):

* ``session`` — tokens that enter *every* session or request because the file exists: the
  whole file for always-on files (CLAUDE.md, AGENTS.md, GEMINI.md, …), or just the one-line
  catalogue entry the host builds from the frontmatter (subagents, skills, commands);
* ``invoke`` — tokens that enter once the file is used: a skill or command body on
  invocation, a subagent's body as its system prompt, a rule's body when its globs match.

The semantics per cost model are in ``unveil/data/kinds.toml``; facts from research note
agent-formats.md §1–§2 (Claude Code docs sub-agents/skills/memory/output-styles, Codex, Gemini
CLI, Cursor, Copilot, Windsurf, Cline, Kiro; August–November 2026). Listing-line formats are
reconstructions of Claude Code's prompt builders (unverified against official docs), so the
session cost of subagents and skills is an estimate of the right size, not an exact figure.

Prices: :func:`price_rows` turns a report into USD for :mod:`unveil.core.prices` models,
:func:`shown_usd` picks the figures to show (the "≈" estimate for Claude models),
:func:`estimate_note` explains them, and :func:`format_usd` prints amounts readably.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Iterable, NamedTuple

from unveil.core import kinds, tokens

SKILL_LISTING_MAX_CHARS = 1536
"""Claude Code truncates ``description`` + ``when_to_use`` per skill listing entry here."""

AGENTS_MD_MAX_BYTES = 32 * 1024
"""Codex ``project_doc_max_bytes`` default (combined AGENTS.md size)."""

WINDSURF_RULE_MAX_CHARS = 12_000
_IMPORT = re.compile(r"(?:^|\s)@[\w.~/-]*[/.][\w./-]+")
SKILL_BODY_TOKENS_RECOMMENDED = 5_000
CLAUDE_MD_LINES_RECOMMENDED = 200


class SectionCost(NamedTuple):
    """Tokens of the section opened by the heading on 0-based ``line`` (up to the next heading
    of any level). A named tuple, not a dataclass: a warm corpus run rebuilds 43,220 of them from
    the result cache, and a tuple is made about three times faster than an object with a
    ``__dict__``."""

    line: int
    level: int
    title: str
    tokens: int


@dataclass(frozen=True)
class TokenReport:
    """o200k tokens a file adds to every session (``session``) and once invoked (``invoke``).

    * ``kind`` / ``kind_label`` — file kind id and human label; ``cost_model`` — its model.
    * ``basis`` — one line saying how the numbers were derived.
    * ``sections`` — per-heading costs; ``notes`` — host limits exceeded, parse problems.
    * ``total`` — tokens of the whole file; ``body`` — tokens after the frontmatter.
    * ``listing`` — the catalogue line counted as ``session`` cost, when there is one.
    * ``imports`` — per top-level ``@import`` of a CLAUDE.md / GEMINI.md,
      :class:`unveil.core.imports.ImportCost`; ``imported`` — tokens all imports add (already
      included in ``session``).
    * ``claude_ratio`` — Claude tokens per o200k token used for the estimate;
      ``claude_session`` / ``claude_invoke`` — ``session`` / ``invoke`` × that ratio, rounded:
      an *estimate* (label it "≈ Claude"), not a count (research note agent-formats.md §5.6).
    """

    session: int
    invoke: int
    kind: str
    kind_label: str
    basis: str
    sections: tuple[SectionCost, ...] = ()
    notes: tuple[str, ...] = ()
    cost_model: str = "unknown"
    total: int = 0
    body: int = 0
    listing: str | None = None
    imports: tuple = ()
    imported: int = 0
    claude_ratio: float = 1.55
    claude_session: int = 0
    claude_invoke: int = 0


DEFAULT_CLAUDE_RATIO = 1.55
"""Claude v4.7/v4.8 tokenizer ÷ o200k on English Markdown (agent-formats.md §5.6: 1.555)."""


def claude_ratio(settings=None) -> float:
    """Claude tokens per o200k token for the "≈ Claude" estimate: ``settings.claude_ratio`` when
    set, else the ``token_ratio_vs_o200k`` of the first shown Claude model in the price table
    (:func:`unveil.core.prices.shown_models`), else :data:`DEFAULT_CLAUDE_RATIO`."""
    value = getattr(settings, "claude_ratio", None)
    if value:
        return float(value)
    import datetime as _dt

    key = None
    if not getattr(settings, "prices_file", None):  # (a user's prices file may change on disk)
        try:
            key = (
                _dt.date.today(),
                tuple(getattr(settings, "models", ()) or ()),
                repr(sorted((getattr(settings, "prices", None) or {}).items())),
            )
        except TypeError:
            key = None
        got = _RATIOS.get(key) if key is not None else None
        if got is not None:
            return got
    ratio = DEFAULT_CLAUDE_RATIO
    try:
        from unveil.core import prices

        for m in prices.shown_models(settings):
            if str(getattr(m, "tokenizer", "")).startswith("claude") and m.token_ratio_vs_o200k:
                ratio = float(m.token_ratio_vs_o200k)
                break
    except Exception:  # noqa: BLE001 - a broken price file must not stop the cost report
        pass
    if key is not None:
        if len(_RATIOS) >= 64:
            _RATIOS.clear()
        _RATIOS[key] = ratio
    return ratio


_RATIOS: dict[tuple, float] = {}
""":func:`claude_ratio` by (day, ``settings.models``, ``settings.prices``) when no prices file is
set: the bundled table gives the same answer all day, and looking it up took about 0.3 ms of
every token report (each keystroke in the language server)."""


@dataclass(frozen=True)
class PriceRow:
    """USD for one model: ``usd_per_session`` = session tokens × input price,
    ``usd_per_invoke`` = invoke tokens × input price, ``usd_per_1000_sessions``.

    Token counts are o200k for every model (no multiplier). For models whose tokenizer is
    known to differ (Claude), ``approx_*`` give the same costs with the model's
    ``token_ratio_vs_o200k`` applied (show them with "≈"); ``None`` otherwise.
    """

    model: str
    usd_per_session: float
    usd_per_invoke: float
    usd_per_1000_sessions: float
    model_id: str = ""
    input_per_mtok: float = 0.0
    token_ratio: float | None = None
    approx_usd_per_session: float | None = None
    approx_usd_per_invoke: float | None = None


# --------------------------------------------------------------------------- helpers


def truthy(value: Any) -> bool:
    """YAML-ish boolean as Claude Code reads it (``true``/``yes``/``on``/``1``, any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value == 1
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return False


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value).strip()


def _stem(path: str | None) -> str:
    if not path:
        return ""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".agent.md", ".chatmode.md", ".prompt.md", ".instructions.md", ".md", ".mdc"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _parent(path: str | None) -> str:
    if not path:
        return ""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    return parts[-2] if len(parts) >= 2 else ""


def _first_paragraph(body: str) -> str:
    para: list[str] = []
    for line in body.splitlines():
        if line.strip():
            para.append(line.strip())
        elif para:
            break
    return " ".join(para)


def agent_listing(name: str, description: str, tools: Any) -> str:
    """Claude Code's subagent listing line ``- name: description (Tools: …)``; tools as a
    comma-separated list, ``*`` when omitted (inherit all)."""
    tool_text = _text(tools) or "*"
    return f"- {name}: {description} (Tools: {tool_text})"


def skill_listing(name: str, description: str, when_to_use: str = "") -> str:
    """Claude Code's skill listing line ``- name: description`` with ``when_to_use`` joined by
    `` - `` and the combination truncated at 1,536 code points."""
    desc = description
    if when_to_use:
        desc = f"{desc} - {when_to_use}" if desc else when_to_use
    return f"- {name}: {desc[:SKILL_LISTING_MAX_CHARS]}"


# --------------------------------------------------------------------------- the report


def token_report(ctx, wait: bool = True) -> TokenReport | None:
    """The :class:`TokenReport` for a check :class:`~unveil.core.checks.Context` (uses
    ``ctx.doc.text``, ``ctx.kind``, ``ctx.path``, ``ctx.markdown.headings``).

    ``wait=False`` returns ``None`` while the tokenizer is not loaded (and does not start
    loading it: :func:`unveil.core.tokens.count`). Raises only
    :class:`~unveil.core.tokens.TokenizerError` (corrupt bundled data).
    """
    if not wait and not tokens.ready():
        return None
    text: str = ctx.doc.text
    kind = kinds.kind_info(ctx.kind)
    fm = ctx.parsed_frontmatter()
    meta: dict = fm.mapping or {}
    body = text[fm.body_start :]
    count = tokens.count
    total = count(text)
    body_tokens = count(body) if fm.span else total
    notes: list[str] = []
    if fm.error:
        notes.append(f"Frontmatter: {fm.error}; values were read line by line.")
    if fm.duplicate_keys:
        notes.append(
            "Frontmatter repeats " + ", ".join(repr(k) for k in fm.duplicate_keys) + "; the last value is used."
        )

    model = kind.cost
    session = invoke = 0
    listing: str | None = None
    basis = ""
    desc = _text(meta.get("description"))

    if model == "agent-listing":
        name = _text(meta.get("name")) or _stem(ctx.path)
        invoke = body_tokens
        if not desc:
            basis = "subagent without a description: not listed (Claude Code skips it); body counted once delegated to"
            notes.append("Claude Code loads a subagent only when its frontmatter has name and description.")
        else:
            listing = agent_listing(name, desc, meta.get("tools"))
            session = count(listing)
            basis = (
                "subagent: the listing line '- name: description (Tools: …)' every session; the body once delegated to"
            )
        if fm.error:
            notes.append("Claude Code skips subagent files whose frontmatter is not valid YAML.")
    elif model == "skill-listing":
        is_command = kind.id == "claude-command"
        if is_command:
            name = _stem(ctx.path) or _text(meta.get("name"))
        else:
            name = _text(meta.get("name")) or _parent(ctx.path)
        invoke = body_tokens
        when = _text(meta.get("when_to_use"))
        what = "command" if is_command else "skill"
        if truthy(meta.get("disable-model-invocation")):
            basis = f"{what} with disable-model-invocation: not listed; body counted once invoked"
        else:
            shown_desc = desc
            if not shown_desc and not when:
                shown_desc = _first_paragraph(body)
                notes.append("No description: the first paragraph of the body is listed instead.")
            listing = skill_listing(name, shown_desc, when)
            session = count(listing)
            basis = f"{what}: the listing line '- name: description' every session; the body once invoked"
        if len(desc) > 1024 and not is_command:
            notes.append(f"description is {len(desc):,} characters; the Agent Skills spec allows 1,024.")
        if len(desc) + len(when) > SKILL_LISTING_MAX_CHARS:
            notes.append("description + when_to_use exceed 1,536 characters; Claude Code truncates the listing entry.")
        if invoke > SKILL_BODY_TOKENS_RECOMMENDED and not is_command:
            notes.append(f"Body is {invoke:,} tokens; the Agent Skills spec recommends under 5,000.")
        if "!`" in body or "```!" in body:
            notes.append("Contains !`command` injection: its output is added on invocation and is not counted.")
    elif model == "always":
        session, invoke = total, 0
        basis = f"{kind.label}: the whole file enters every session"
        if kind.id == "agents-md" and len(text.encode("utf-8", "surrogatepass")) > AGENTS_MD_MAX_BYTES:
            notes.append("Over 32 KiB: Codex stops adding AGENTS.md text at project_doc_max_bytes (32,768 bytes).")
        if kind.id == "claude-md":
            lines = text.count("\n") + 1
            if lines > CLAUDE_MD_LINES_RECOMMENDED:
                notes.append(f"{lines:,} lines; Claude Code's docs recommend under 200 per CLAUDE.md.")
            if _IMPORT.search(text) and getattr(ctx, "imports", None) is None:
                notes.append("@imports are not counted here; Claude Code loads them with this file (up to 4 hops).")
            if "<!--" in text:
                notes.append("Claude Code strips block-level HTML comments before sending; other hosts send them.")
    elif model == "rules-paths":
        if meta.get("paths"):
            session, invoke = 0, body_tokens
            basis = f"{kind.label} with paths: the body only when a matching file is involved"
        else:
            session, invoke = body_tokens, 0
            basis = f"{kind.label} without paths: the body enters every session"
    elif model == "cursor-rule":
        always = meta.get("alwaysApply")
        globs = meta.get("globs")
        if always is True:
            session, invoke = body_tokens, 0
            basis = "Cursor rule with alwaysApply: true: the body is sent with every request"
        elif globs:
            session, invoke = 0, body_tokens
            basis = "Cursor rule with globs: the body only when a matching file is in context"
        elif desc:
            session, invoke = count(desc), body_tokens
            basis = "Cursor agent-requested rule: the description every request; the body when the agent fetches it"
        else:
            session, invoke = 0, body_tokens
            basis = "Cursor manual rule: the body only when @-mentioned"
        if isinstance(always, str) and always.strip().lower() == "true":
            notes.append('alwaysApply is the string "true", which Cursor treats as false; write alwaysApply: true.')
    elif model == "windsurf-rule":
        trigger = _text(meta.get("trigger")).lower()
        if trigger == "model_decision":
            session, invoke = count(desc), body_tokens
            basis = "Windsurf model_decision rule: the description every request; the body when Cascade decides"
        elif trigger in ("glob", "manual"):
            session, invoke = 0, body_tokens
            basis = f"Windsurf {trigger} rule: the body only on a matching file or @mention"
        else:
            session, invoke = body_tokens, 0
            basis = "Windsurf always-on rule: the body is sent with every request"
            if not trigger and fm.span is None and not (ctx.path or "").endswith(".windsurfrules"):
                notes.append("No trigger in frontmatter: counted as always_on.")
        if len(text) > WINDSURF_RULE_MAX_CHARS:
            notes.append("Over 12,000 characters: Windsurf truncates rules files at that size.")
    elif model == "kiro-steering":
        inclusion = _text(meta.get("inclusion")) or "always"
        if inclusion == "always":
            session, invoke = body_tokens, 0
            basis = "Kiro steering (inclusion: always): the body enters every interaction"
        elif inclusion == "auto":
            session, invoke = count(desc), body_tokens
            basis = "Kiro steering (inclusion: auto): the description every interaction; the body when relevant"
        else:
            session, invoke = 0, body_tokens
            basis = f"Kiro steering (inclusion: {inclusion}): the body only when matched or referenced"
    elif model == "instructions-file":
        apply_to = _text(meta.get("applyTo"))
        if apply_to.replace(" ", "") in ("**", "**/*", "*"):
            session, invoke = body_tokens, 0
            basis = f"Copilot instructions with applyTo '{apply_to}': the body is sent with every request"
        elif apply_to:
            session, invoke = count(desc) if desc else 0, body_tokens
            basis = "Copilot instructions with applyTo: the body only when a matching file is involved"
        else:
            session, invoke = count(desc) if desc else 0, body_tokens
            basis = "Copilot instructions without applyTo: the body only when attached or matched by description"
    elif model == "on-use":
        session, invoke = 0, body_tokens
        basis = f"{kind.label}: nothing every session; the body when run or selected"
    elif model == "resource":
        session, invoke = 0, total
        basis = "skill resource: nothing every session; the whole file only if the agent reads it"
    elif model == "openhands":
        if meta.get("triggers"):
            session, invoke = 0, body_tokens
            basis = "OpenHands knowledge microagent: the body when a trigger word appears"
        else:
            session, invoke = body_tokens, 0
            basis = "OpenHands repository microagent: the body enters every session"
    elif model == "output-style":
        session, invoke = body_tokens, 0
        basis = "output style: the body is appended to the system prompt of every request while selected"
        if not truthy(meta.get("keep-coding-instructions")):
            notes.append(
                "keep-coding-instructions is false: Claude Code also removes its built-in coding instructions."
            )
    else:
        session, invoke = total, 0
        basis = "unknown markdown: counted as whole file every session"

    sections = tuple(
        SectionCost(h.line, h.level, h.title, count(text[h.section_start : h.section_end]))
        for h in getattr(ctx.markdown, "headings", ()) or ()
    )
    from unveil.core import imports as imports_mod

    tree = getattr(ctx, "imports", None)
    try:
        import_costs, imported = imports_mod.import_costs(tree, count)
    except TypeError:  # a counter that returns None (tokenizer stubbed or unavailable)
        import_costs, imported = (), 0
    if tree is not None and import_costs:
        if model == "always":
            session += imported
        loaded = len(tree.loaded_paths())
        notes.append(
            f"@imports add {imported:,} tokens from {loaded:,} file{'s' if loaded != 1 else ''} "
            f"({tree.host} loads them with this file, up to {tree.max_depth} hops); included above."
        )
    ratio = claude_ratio(getattr(ctx, "settings", None))
    return TokenReport(
        session=session,
        invoke=invoke,
        kind=kind.id,
        kind_label=kind.label,
        basis=basis,
        sections=sections,
        notes=tuple(notes),
        cost_model=model,
        total=total,
        body=body_tokens,
        listing=listing,
        imports=import_costs,
        imported=imported,
        claude_ratio=ratio,
        claude_session=round(session * ratio) if isinstance(session, (int, float)) else 0,
        claude_invoke=round(invoke * ratio) if isinstance(invoke, (int, float)) else 0,
    )


# --------------------------------------------------------------------------- prices


def _usd(tok: int, per_mtok: float) -> float:
    return tok * per_mtok / 1_000_000


def price_rows(report: TokenReport | None, models: Iterable) -> list[PriceRow]:
    """One :class:`PriceRow` per model (:class:`~unveil.core.prices.ModelPrice`) for
    ``report``; empty when ``report`` is ``None``. USD = o200k tokens × ``input_per_mtok`` / 1e6."""
    if report is None:
        return []
    rows = []
    for m in models:
        price = float(m.input_per_mtok)
        ratio = float(getattr(m, "token_ratio_vs_o200k", 1.0) or 1.0)
        tok = str(getattr(m, "tokenizer", "") or "")
        approx = tok.startswith("claude") and ratio != 1.0
        rows.append(
            PriceRow(
                model=m.display_name,
                usd_per_session=_usd(report.session, price),
                usd_per_invoke=_usd(report.invoke, price),
                usd_per_1000_sessions=_usd(report.session, price) * 1000,
                model_id=m.model_id,
                input_per_mtok=price,
                token_ratio=ratio if approx else None,
                approx_usd_per_session=_usd(report.session, price) * ratio if approx else None,
                approx_usd_per_invoke=_usd(report.invoke, price) * ratio if approx else None,
            )
        )
    return rows


def format_usd(x: float | None) -> str:
    """Readable USD: ``$0`` for zero; three significant digits below $1, trailing zeros dropped
    down to whole cents (``0.5`` → ``"$0.50"``, ``0.0143`` → ``"$0.0143"``, ``0.00717`` → ``"$0.00717"``, ``0.000175`` → ``"$0.000175"``,
    ``0.175`` → ``"$0.175"``, ``0.18`` → ``"$0.18"``, ``3e-9`` → ``"$0.000000003"``); from $1 up
    two decimals with thousands separators (``1234.5`` → ``"$1,234.50"``). Rounding is half-up
    on the decimal value of the float's repr; an amount that rounds to $1 is written ``"$1.00"``.
    ``None`` → ``"–"``."""
    if x is None:
        return "–"
    d = Decimal(repr(float(x)))
    sign = "-" if d < 0 else ""
    d = abs(d)
    if d == 0:
        return "$0"
    if d < 1:
        exp = d.adjusted()  # power of ten of the first significant digit
        q = d.quantize(Decimal(1).scaleb(exp - 2), rounding=ROUND_HALF_UP)
        if q < 1:
            whole, _, frac = format(q, "f").partition(".")
            frac = frac.rstrip("0").ljust(2, "0")  # at least cents: "$0.50", not "$0.5"
            return f"{sign}${whole}.{frac}"
        d = q
    return f"{sign}${d.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}"


def shown_usd(row: PriceRow) -> tuple[float, float, float, bool]:
    """``(per session, once invoked, per 1,000 sessions, estimated)`` in USD as a report should
    show them: the ``approx_*`` figures (tokenizer ratio applied) when the row has them
    (``estimated`` true: prefix the text with "≈"), else the exact o200k-based ones."""
    s: float | None = getattr(row, "approx_usd_per_session", None)
    if s is not None:
        i = row.approx_usd_per_invoke if row.approx_usd_per_invoke is not None else row.usd_per_invoke
        return s, i, s * 1000, True
    return row.usd_per_session, row.usd_per_invoke, row.usd_per_1000_sessions, False


def estimate_note(rows: Iterable) -> str | None:
    """The footnote for price rows with estimates, e.g. ``"≈ Claude prices are estimates: o200k
    tokens × the measured Claude/o200k tokenizer ratio (1.55)."``; ``None`` when no row has an
    estimate. Ratios come from each model's ``token_ratio_vs_o200k`` (research note
    agent-formats.md §5.6)."""
    ratios = sorted(
        {
            float(r.token_ratio)
            for r in rows
            if getattr(r, "approx_usd_per_session", None) is not None and getattr(r, "token_ratio", None)
        }
    )
    if not ratios:
        return None
    shown = ", ".join(f"{x:g}" for x in ratios)
    return f"≈ Claude prices are estimates: o200k tokens × the measured Claude/o200k tokenizer ratio ({shown})."
