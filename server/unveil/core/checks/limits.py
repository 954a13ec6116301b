"""Host limits, token budgets and ``@imports``: rules ``TOK…`` (rules/cost.toml) and ``IMP…``
(rules/imports.toml).

* Imports (``IMP001`` not loaded: missing, or beyond the host's depth; ``IMP002`` cycle) come from the
  :class:`~unveil.core.imports.ImportTree` that :func:`unveil.core.analyze.analyze` resolves into
  ``ctx.imports``; each finding sits on the root file's import that leads to the problem.
* Caps the agents apply, found at the exact place where the host cuts (facts: research note
  agent-formats.md §2.2, §2.7, §2.11 and §3): Codex ``project_doc_max_bytes`` 32 KiB for
  AGENTS.md (``TOK010``), the Agent Skills 1,024-character ``description`` (``TOK011``), Claude
  Code's 1,536-character skill listing entry (``TOK012``), Windsurf's 12,000-character rule file
  (``TOK013``).
* Budgets (``TOK001``–``TOK004``), thresholds from ``settings.budgets`` over
  :data:`DEFAULT_BUDGETS`, reported at line 1 with the numbers.

Token counts are ``o200k_base`` and wait for the tokenizer when needed (only files big enough to
possibly exceed a budget are counted: a token is at least one UTF-8 byte).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from unveil.core import tokens
from unveil.core.findings import Finding, Severity

if TYPE_CHECKING:
    from unveil.core.imports import ImportNode, ImportTree

DEFAULT_BUDGETS: dict[str, int] = {
    "sessionTokens": 2_500,
    "listingTokens": 200,
    "skillBodyTokens": 5_000,
    "claudeMdLines": 200,
    "workspaceSessionTokens": 20_000,
}
"""Default budgets. ``skillBodyTokens`` 5,000: Agent Skills spec ("< 5000 tokens recommended")
and Claude Code's 5,000-token re-attach after compaction; ``claudeMdLines`` 200: Claude Code's
memory docs; ``sessionTokens`` 2,500: about what 200 lines of CLAUDE.md cost; ``listingTokens``
200: the spec's "~100 tokens" of metadata per skill, with room for a long description;
``workspaceSessionTokens`` 20,000: 10% of a 200k context window (unveil's choice)."""

AGENTS_MD_MAX_BYTES = 32 * 1024
SKILL_DESCRIPTION_MAX_CHARS = 1024
SKILL_LISTING_MAX_CHARS = 1536
WINDSURF_RULE_MAX_CHARS = 12_000

_ALWAYS_MODELS = (
    "always",
    "rules-paths",
    "cursor-rule",
    "windsurf-rule",
    "kiro-steering",
    "instructions-file",
    "openhands",
    "output-style",
    "unknown",
)


def budget(settings, name: str) -> int:
    """The budget ``name`` from ``settings.budgets`` or :data:`DEFAULT_BUDGETS` (0: disabled)."""
    values = getattr(settings, "budgets", None) or {}
    try:
        return int(values.get(name, DEFAULT_BUDGETS.get(name, 0)))
    except (TypeError, ValueError):
        return DEFAULT_BUDGETS.get(name, 0)


def check(ctx) -> Iterable[Finding]:
    """All findings of this module for a check :class:`~unveil.core.checks.Context`."""
    out: list[Finding] = []
    out.extend(_imports(ctx))
    out.extend(_caps(ctx))
    out.extend(_budgets(ctx))
    return out


# --------------------------------------------------------------------------- helpers


def _line_end(doc, line: int) -> int:
    return doc.line_span(line)[1]


def _count(text: str) -> int:
    n = tokens.count(text)
    return n if isinstance(n, int) else 0


def _lines_range(doc, start: int) -> tuple[int, int]:
    """1-based first and last line from offset ``start`` to the end of the text (a final line
    break does not start a new line)."""
    first = doc.line_of(start) + 1
    text = doc.text
    end = len(text)
    if end and text[-1] in "\r\n":
        end -= 2 if text.endswith("\r\n") else 1
    last = max(first, doc.line_of(max(start, end)) + 1)
    return first, last


def _unread(doc, cut: int, first: int, last: int) -> str:
    """ "lines N–M", "line N", or "line N from column C through line M" (1-based, code points)."""
    line_start = doc.line_span(first - 1)[0]
    if cut == line_start:
        return f"line {first}" if first == last else f"lines {first}–{last}"
    where = f"line {first} from column {cut - line_start + 1}"
    return where if first == last else f"{where} through line {last}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _short(path: str, root: str) -> str:
    import posixpath

    try:
        base = posixpath.dirname(root)
        rel = posixpath.relpath(path, base) if path.startswith(base) else path
    except ValueError:
        rel = path
    return rel


# --------------------------------------------------------------------------- imports


def _imports(ctx) -> list[Finding]:
    tree: ImportTree | None = getattr(ctx, "imports", None)
    if tree is None:
        return []
    out: list[Finding] = []
    for top in tree.imports:
        chain_problems: list[tuple[list[ImportNode], ImportNode]] = []

        def walk(node, chain):
            chain = chain + [node]
            if node.status != "ok":
                chain_problems.append((chain, node))  # noqa: B023 - walk runs within this iteration
            for c in node.children:
                walk(c, chain)

        walk(top, [])
        for chain, node in chain_problems:
            via = ""
            if len(chain) > 1:
                via = " (via " + " → ".join("@" + n.ref.target for n in chain) + ")"
            shown = _short(node.path, tree.root)
            data = {"path": node.path, "status": node.status, "depth": node.depth, "host": tree.host}
            if node.status == "missing":
                sev = Severity.WARNING if node.ref.explicit else Severity.INFO
                msg = (
                    f"Import @{node.ref.target} not found: there is no readable file {shown}{via}; "
                    f"{tree.host} loads nothing for it"
                )
                if not node.ref.explicit:
                    msg += " (ignore this if it names a package or a handle, not a file)"
                out.append(Finding("IMP001", sev, top.ref.start, top.ref.end, msg, category="imports", data=data))
            elif node.status == "cycle":
                names = [_short(tree.root, tree.root)] + [_short(n.path, tree.root) for n in chain]
                msg = (
                    f"Import cycle: {' → '.join(names)}; {tree.host} does not load {shown} again, "
                    "so the chain never finishes the way it reads"
                )
                out.append(
                    Finding("IMP002", Severity.WARNING, top.ref.start, top.ref.end, msg, category="imports", data=data)
                )
            elif node.status == "too-deep":
                msg = (
                    f"Import @{node.ref.target} is {node.depth} hops from this file{via}; {tree.host} follows "
                    f"imports at most {tree.max_depth} hops deep, so {shown} is not loaded"
                )
                out.append(
                    Finding("IMP001", Severity.WARNING, top.ref.start, top.ref.end, msg, category="imports", data=data)
                )
    return out


# --------------------------------------------------------------------------- caps


def byte_cut(text: str, max_bytes: int) -> int | None:
    """Code-point offset of the first character that does not fit entirely in the first
    ``max_bytes`` UTF-8 bytes of ``text`` (lone surrogates count as 3 bytes); ``None`` when the
    whole text fits."""
    data_len = len(text.encode("utf-8", "surrogatepass"))
    if data_len <= max_bytes:
        return None
    # Fast path: ASCII prefix
    total = 0
    for i, ch in enumerate(text):
        o = ord(ch)
        total += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
        if total > max_bytes:
            return i
    return None  # pragma: no cover - unreachable (data_len > max_bytes)


def value_offset(text: str, value_start: int, value_end: int, value: str, index: int) -> int:
    """Source offset of character ``index`` of the parsed YAML scalar ``value`` whose source is
    ``text[value_start:value_end]``: the source is walked alongside the value, skipping what the
    value does not contain (quotes, block indicators, indentation; any whitespace stands for a
    folded line break). Approximate after escapes in double-quoted strings; never outside
    ``[value_start, value_end]``."""

    def same(c: str, v: str) -> bool:
        return c == v or (v.isspace() and c.isspace())

    src = value_start
    for v in value[: max(0, index)]:
        while src < value_end and not same(text[src], v):
            src += 1
        if src < value_end:
            src += 1
    if 0 <= index < len(value):
        while src < value_end and not same(text[src], value[index]):
            src += 1
    return min(src, value_end)


def _caps(ctx) -> list[Finding]:
    text: str = ctx.doc.text
    doc = ctx.doc
    kind = ctx.kind
    out: list[Finding] = []
    if kind == "agents-md":
        cut = byte_cut(text, AGENTS_MD_MAX_BYTES)
        if cut is not None and text[cut] in "\r\n":  # only the line break is cut: the next line is lost
            cut += 2 if text.startswith("\r\n", cut) else 1
        if cut is not None and cut < len(text):
            first, last = _lines_range(doc, cut)
            lost = _count(text[cut:])
            msg = (
                f"Codex stops reading here (project_doc_max_bytes 32 KiB): the model never reads "
                f"{_unread(doc, cut, first, last)} ({_plural(lost, 'token')})"
            )
            out.append(
                Finding(
                    "TOK010",
                    Severity.WARNING,
                    cut,
                    max(cut + 1, _line_end(doc, first - 1)),
                    msg,
                    category="cost",
                    tokens=lost,
                    data={"cut": cut, "first_line": first, "last_line": last, "bytes": AGENTS_MD_MAX_BYTES},
                )
            )
    if kind == "windsurf-rule" and len(text) > WINDSURF_RULE_MAX_CHARS:
        cut = WINDSURF_RULE_MAX_CHARS
        first, last = _lines_range(doc, cut)
        lost = _count(text[cut:])
        msg = (
            f"Windsurf truncates rule files at 12,000 characters: the model never reads "
            f"{_unread(doc, cut, first, last)} ({_plural(lost, 'token')})"
        )
        out.append(
            Finding(
                "TOK013",
                Severity.WARNING,
                cut,
                max(cut + 1, _line_end(doc, first - 1)),
                msg,
                category="cost",
                tokens=lost,
            )
        )
    if kind in ("claude-skill", "claude-command"):
        out.extend(_skill_caps(ctx))
    return out


def _skill_caps(ctx) -> list[Finding]:
    text = ctx.doc.text
    fm = ctx.parsed_frontmatter()
    if fm.data is None:
        return []
    from unveil.core.cost import truthy

    out: list[Finding] = []
    desc = fm.data.get("description")
    when = fm.data.get("when_to_use")
    desc = desc.strip() if isinstance(desc, str) else ""
    when = when.strip() if isinstance(when, str) else ""
    dpos = fm.positions.get("description")
    raw_desc = fm.data.get("description") if isinstance(fm.data.get("description"), str) else ""
    lead = len(raw_desc) - len(raw_desc.lstrip())

    def where(key: str, index: int) -> tuple[int, int] | None:
        pos = fm.positions.get(key)
        raw = fm.data.get(key)
        if pos is None or not isinstance(raw, str):
            return None
        start = value_offset(text, pos.value_start, pos.value_end, raw, index)
        return start, max(start + 1, min(pos.value_end, ctx.doc.line_span(ctx.doc.line_of(start))[1]))

    if ctx.kind == "claude-skill" and len(desc) > SKILL_DESCRIPTION_MAX_CHARS and dpos is not None:
        span = where("description", lead + SKILL_DESCRIPTION_MAX_CHARS)
        if span:
            extra = desc[SKILL_DESCRIPTION_MAX_CHARS:]
            msg = (
                f"description is {len(desc):,} characters; the Agent Skills spec allows 1,024 and claude.ai and the "
                f"Skills API reject the skill: the {len(extra):,} characters from here on are over the limit "
                f"({_plural(_count(extra), 'token')})"
            )
            out.append(
                Finding(
                    "TOK011",
                    Severity.WARNING,
                    span[0],
                    span[1],
                    msg,
                    category="cost",
                    data={"length": len(desc), "limit": SKILL_DESCRIPTION_MAX_CHARS},
                )
            )
    if truthy(fm.data.get("disable-model-invocation")):
        return out
    combined = len(desc) + (len(" - ") + len(when) if desc and when else len(when))
    if combined > SKILL_LISTING_MAX_CHARS:
        if len(desc) > SKILL_LISTING_MAX_CHARS:
            span = where("description", lead + SKILL_LISTING_MAX_CHARS)
            field_name = "description"
        else:
            used = len(desc) + (3 if desc else 0)
            raw_when = fm.data.get("when_to_use") or ""
            wlead = len(raw_when) - len(raw_when.lstrip())
            span = where("when_to_use", wlead + SKILL_LISTING_MAX_CHARS - used)
            field_name = "when_to_use"
        if span:
            joined = f"{desc} - {when}" if desc and when else desc or when
            lost = joined[SKILL_LISTING_MAX_CHARS:]
            what = "command" if ctx.kind == "claude-command" else "skill"
            msg = (
                f"Claude Code cuts the {what} listing here: description + when_to_use is {combined:,} characters and "
                f"the listing keeps 1,536; the model never sees the rest of {field_name} "
                f"({_plural(_count(lost), 'token')})"
            )
            out.append(
                Finding(
                    "TOK012",
                    Severity.INFO,
                    span[0],
                    span[1],
                    msg,
                    category="cost",
                    data={"length": combined, "limit": SKILL_LISTING_MAX_CHARS},
                )
            )
    return out


# --------------------------------------------------------------------------- budgets


def _first_line(ctx) -> tuple[int, int]:
    return 0, max(1, _line_end(ctx.doc, 0)) if ctx.doc.text else 0


def _budgets(ctx) -> list[Finding]:
    text: str = ctx.doc.text
    out: list[Finding] = []
    start, end = _first_line(ctx)
    if ctx.kind == "claude-md":
        limit = budget(ctx.settings, "claudeMdLines")
        n = ctx.doc.line_count - (1 if text.endswith(("\n", "\r")) else 0)
        if limit and n > limit:
            out.append(
                Finding(
                    "TOK004",
                    Severity.INFO,
                    start,
                    end,
                    f"CLAUDE.md has {n:,} lines; Claude Code's docs recommend under {limit:,} (budgets.claudeMdLines)",
                    category="cost",
                    data={"lines": n, "budget": limit},
                )
            )
    session_budget = budget(ctx.settings, "sessionTokens")
    listing_budget = budget(ctx.settings, "listingTokens")
    body_budget = budget(ctx.settings, "skillBodyTokens")
    tree = getattr(ctx, "imports", None)
    size = len(text.encode("utf-8", "surrogatepass"))
    has_imports = tree is not None and bool(tree.imports)
    smallest = min([b for b in (session_budget, listing_budget, body_budget) if b] or [0])
    if not smallest or (size <= smallest and not has_imports):
        return out  # a token is at least one byte: nothing can be over budget
    from unveil.core import cost

    # Never wait for the tokenizer here: the first diagnostics must not (analyze() loads it first
    # when it counts tokens; the language server re-analyses open files once it is loaded).
    report = cost.token_report(ctx, wait=False)
    if report is not None:
        ctx.token_report = report  # the analysis reports the same one (analyze.with_tokens)
    if report is None or not isinstance(report.session, int) or not isinstance(report.invoke, int):
        return out
    if report.listing is not None:
        if listing_budget and report.session > listing_budget:
            out.append(
                Finding(
                    "TOK002",
                    Severity.INFO,
                    start,
                    end,
                    f"The listing line costs {report.session:,} tokens every session (≈ Claude "
                    f"{report.claude_session:,}); the budget is {listing_budget:,} (budgets.listingTokens)",
                    category="cost",
                    tokens=report.session,
                    data={"tokens": report.session, "budget": listing_budget},
                )
            )
    elif report.cost_model in _ALWAYS_MODELS and session_budget and report.session > session_budget:
        extra = f", {report.imported:,} of them from @imports" if report.imported else ""
        out.append(
            Finding(
                "TOK001",
                Severity.INFO,
                start,
                end,
                f"This file adds {report.session:,} tokens to every session{extra} (≈ Claude "
                f"{report.claude_session:,}); the budget is {session_budget:,} (budgets.sessionTokens)",
                category="cost",
                tokens=report.session,
                data={"tokens": report.session, "budget": session_budget},
            )
        )
    if ctx.kind == "claude-skill" and body_budget and report.invoke > body_budget:
        out.append(
            Finding(
                "TOK003",
                Severity.INFO,
                start,
                end,
                f"The skill body is {report.invoke:,} tokens once invoked (≈ Claude {report.claude_invoke:,}); "
                f"the Agent Skills spec recommends under 5,000 and Claude Code re-attaches only the first "
                f"5,000 after compaction; the budget is {body_budget:,} (budgets.skillBodyTokens)",
                category="cost",
                tokens=report.invoke,
                data={"tokens": report.invoke, "budget": body_budget},
            )
        )
    return out
