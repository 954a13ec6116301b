"""Settings shared by the CLI and the language server, merged in layers.

Layers, lowest first: built-in defaults < ``initializationOptions`` < ``workspace/configuration``
(section ``unveil``) — or, on the command line, defaults < flags. Keys are camelCase as editors
send them; unknown keys are ignored and reported through :attr:`Settings.problems` rather than
raised, so a typo in an editor setting never breaks analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from unveil.core.findings import Severity


@dataclass(frozen=True)
class Settings:
    """Effective settings.

    * ``select`` — rule ids or categories to enable (empty: all); ``ignore`` — ids or categories
      to disable (wins over ``select``).
    * ``severity`` — rule id or category → severity override.
    * ``prices`` — model → USD per million input tokens, overriding or adding to the bundled
      table; ``prices_file`` — a TOML file in the bundled table's format that replaces entries.
    * ``models`` — models shown in hover and the CLI, by id or display name (empty: defaults).
    * ``inlay_hints`` — emit token inlay hints; ``inlay_hint_min_tokens`` — no hint on a heading
      whose section has fewer o200k tokens (setting ``inlayHintMinTokens``, default 50; 0 shows
      all); ``debounce_ms`` — extra delay before analysing
      (0: latest-wins without a fixed delay).
    * ``budgets`` — token budget name → threshold overriding
      :data:`unveil.core.checks.limits.DEFAULT_BUDGETS` (``sessionTokens``, ``listingTokens``,
      ``skillBodyTokens``, ``claudeMdLines``, ``workspaceSessionTokens``; 0 disables one).
    * ``claude_ratio`` — Claude tokens per o200k token for the "≈ Claude" estimate (``None``:
      the price table's ratio, see :func:`unveil.core.cost.claude_ratio`).
    * ``workspace_scan`` — the language server scans the workspace for agent files on start.
    * ``kind_map`` — path glob → kind id (setting ``kinds``), consulted before the bundled
      patterns by :func:`unveil.core.kinds.detect_kind`; e.g. ``{"docs/agents/*.md":
      "claude-agent"}``. Unknown kind ids are dropped and reported in ``problems``.
    * ``rules_paths`` — extra rule files or folders of ``*.toml`` (setting ``rulesPaths``), run by
      the directives engine beside the bundled rules.
    * ``per_file_ignores`` — ``(glob, ids or categories)`` pairs (setting ``perFileIgnores``, a
      table glob → list): findings of those rules are dropped in files the glob matches
      (:func:`unveil.core.kinds.path_matches`).
    * ``allow_codepoints`` (``"U+200B"`` form), ``allow_scripts`` (Unicode script names, e.g.
      ``"Cyrillic"``), ``allow_hosts`` (lower-case host names; subdomains included) — setting
      ``allow = {codepoints = [...], scripts = [...], hosts = [...]}``; see
      :func:`unveil.core.project.allowed`.
    * ``inline_suppressions`` — honour ``<!-- unveil-ignore… -->`` comments (setting
      ``inlineSuppressions``; turn off to audit files you do not trust).
    * ``exclude`` — globs that replace the folder walk's default skip list (``None``: the
      default, :data:`unveil.core.discovery.SKIP_DIRS`); ``extend_exclude`` — globs added to it
      (:class:`unveil.core.discovery.Exclude`). A glob that can never match is a problem.
    * ``documentation`` — what a scan reports in Markdown that is not an agent file:
      ``"info"`` (default: visible risky-directive findings at most info), ``"hidden"``
      (only hidden content, secrets, format and internal findings; visible directives are
      counted, not listed) or ``"full"`` (as in agent files). See docs/discovery.md.
    """

    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    prices: Mapping[str, float] = field(default_factory=dict)
    prices_file: str | None = None
    models: tuple[str, ...] = ()
    inlay_hints: bool = True
    inlay_hint_min_tokens: int = 50
    debounce_ms: int = 0
    budgets: Mapping[str, int] = field(default_factory=dict)
    claude_ratio: float | None = None
    workspace_scan: bool = True
    kind_map: Mapping[str, str] = field(default_factory=dict)
    rules_paths: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    allow_codepoints: frozenset[str] = frozenset()
    allow_scripts: frozenset[str] = frozenset()
    allow_hosts: frozenset[str] = frozenset()
    inline_suppressions: bool = True
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    documentation: str = "info"
    problems: tuple[str, ...] = ()

    def rule_enabled(self, rule_id: str, category: str) -> bool:
        """Whether a rule runs: not ignored (by id or category) and, when ``select`` is set,
        selected by id or category."""
        if rule_id in self.ignore or category in self.ignore:
            return False
        if self.select and rule_id not in self.select and category not in self.select:
            return False
        return True

    def severity_for(self, rule_id: str, category: str, default: Severity) -> Severity:
        """Overridden severity for a rule (id beats category), else ``default``."""
        if rule_id in self.severity:
            return self.severity[rule_id]
        if category in self.severity:
            return self.severity[category]
        return default

    def merged(self, data: Mapping[str, Any] | None) -> "Settings":
        """Return new settings with the camelCase mapping ``data`` laid over these.

        ``data`` may be the ``unveil`` section itself or a mapping that contains it under the
        key ``"unveil"``. ``None`` or a non-mapping leaves the settings unchanged (a client that
        answers ``workspace/configuration`` with null must not reset earlier layers).
        """
        if not isinstance(data, Mapping):
            return self
        if isinstance(data.get("unveil"), Mapping):
            data = data["unveil"]
        problems = list(self.problems)
        changes: dict[str, Any] = {}

        def strings(key: str) -> frozenset[str] | None:
            value = data.get(key)
            if value is None:
                return None
            if isinstance(value, str):
                value = [v for v in value.replace(",", " ").split() if v]
            if not isinstance(value, (list, tuple)):
                problems.append(f"setting {key!r} must be a list of rule ids or categories")
                return None
            return frozenset(str(v) for v in value)

        user_rules = bool(data.get("rulesPaths") or self.rules_paths)
        for key, attr in (("select", "select"), ("ignore", "ignore")):
            value = strings(key)
            if value is not None:
                changes[attr] = _expanded(key, value, user_rules, problems)
        if "severity" in data:
            sev = dict(self.severity)
            raw = data.get("severity") or {}
            if isinstance(raw, Mapping):
                for rule, level in raw.items():
                    try:
                        parsed = Severity.parse(level)
                    except ValueError as exc:
                        problems.append(f"setting severity.{rule}: {exc}")
                        continue
                    for name in _expanded("severity", [str(rule)], user_rules, problems):
                        sev[name] = parsed
            else:
                problems.append("setting 'severity' must map rule ids or categories to severities")
            changes["severity"] = sev
        if "prices" in data:
            raw = data.get("prices")
            if isinstance(raw, str):
                changes["prices_file"] = raw
            elif isinstance(raw, Mapping):
                prices = dict(self.prices)
                for model, price in raw.items():
                    try:
                        prices[str(model)] = float(price)
                    except (TypeError, ValueError):
                        problems.append(f"setting prices.{model}: {price!r} is not a number")
                changes["prices"] = prices
            elif raw is not None:
                problems.append("setting 'prices' must be a table of model → USD per million tokens or a file path")
        if "pricesFile" in data and isinstance(data.get("pricesFile"), str):
            changes["prices_file"] = data["pricesFile"] or None
        if "models" in data:
            models = data.get("models")
            if isinstance(models, str):
                models = [v.strip() for v in models.split(",") if v.strip()]
            if isinstance(models, (list, tuple)):
                changes["models"] = tuple(str(v) for v in models)
            elif models is not None:
                problems.append("setting 'models' must be a list of model names")
        if "inlayHints" in data and data["inlayHints"] is not None:
            changes["inlay_hints"] = bool(data["inlayHints"])
        if "inlayHintMinTokens" in data and data["inlayHintMinTokens"] is not None:
            try:
                changes["inlay_hint_min_tokens"] = max(0, int(data["inlayHintMinTokens"]))
            except (TypeError, ValueError):
                problems.append("setting 'inlayHintMinTokens' must be a number of tokens")
        if "debounceMs" in data and data["debounceMs"] is not None:
            try:
                changes["debounce_ms"] = max(0, int(data["debounceMs"]))
            except (TypeError, ValueError):
                problems.append("setting 'debounceMs' must be a number of milliseconds")
        if "budgets" in data and data["budgets"] is not None:
            raw = data["budgets"]
            if isinstance(raw, Mapping):
                budgets = dict(self.budgets)
                for name, value in raw.items():
                    try:
                        budgets[str(name)] = max(0, int(value))
                    except (TypeError, ValueError):
                        problems.append(f"setting budgets.{name}: {value!r} is not a whole number")
                changes["budgets"] = budgets
            else:
                problems.append("setting 'budgets' must map budget names to numbers")
        if "claudeRatio" in data:
            value = data["claudeRatio"]
            if value is None:
                changes["claude_ratio"] = None
            else:
                try:
                    ratio = float(value)
                    if not 0 < ratio < 100:
                        raise ValueError
                    changes["claude_ratio"] = ratio
                except (TypeError, ValueError):
                    problems.append("setting 'claudeRatio' must be a positive number (Claude tokens per o200k token)")
        if "workspaceScan" in data and data["workspaceScan"] is not None:
            changes["workspace_scan"] = bool(data["workspaceScan"])
        if "kinds" in data and data["kinds"] is not None:
            raw = data["kinds"]
            if isinstance(raw, Mapping):
                from unveil.core.kinds import kind_ids

                known = kind_ids()
                kind_map = dict(self.kind_map)
                for pattern, kind_id in raw.items():
                    if not isinstance(kind_id, str) or kind_id not in known:
                        problems.append(
                            f"setting kinds.{pattern}: unknown kind {kind_id!r} (known: {', '.join(sorted(known))})"
                        )
                    elif not str(pattern).strip("/"):
                        problems.append(f"setting kinds: empty glob for kind {kind_id!r}")
                    else:
                        kind_map[str(pattern)] = kind_id
                changes["kind_map"] = kind_map
            else:
                problems.append("setting 'kinds' must map path globs to kind ids")
        _merge_project_keys(self, data, changes, problems)
        changes["problems"] = tuple(problems)
        return replace(self, **changes)


def _expanded(key: str, names, user_rules: bool, problems: list[str]) -> frozenset[str]:
    """Selectors expanded by :func:`unveil.core.selectors.expand` (id prefixes, names); an
    unknown one is kept as written and, unless user rules (``rulesPaths``) may define it,
    reported with a did-you-mean."""
    from unveil.core.selectors import UnknownSelector, expand

    out: set[str] = set()
    for name in names:
        try:
            out.update(expand(name))
        except UnknownSelector as exc:
            out.add(name)
            if not user_rules:
                problems.append(f"setting {key}: {exc}")
        except Exception:  # noqa: BLE001 - the rule table failed to load: keep the value as is
            out.add(name)
    return frozenset(out)


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [v for v in value.replace(",", " ").split() if v]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [v for v in value if v.strip()]
    return None


def _codepoint_id(value: str) -> str | None:
    """``"U+200B"``, ``"u+200b"``, ``"200B"`` or the character itself → ``"U+200B"``."""
    v = value.strip()
    if len(v) == 1:
        return f"U+{ord(v):04X}"
    if v[:2].upper() == "U+":
        v = v[2:]
    try:
        cp = int(v, 16)
    except ValueError:
        return None
    return f"U+{cp:04X}" if 0 <= cp <= 0x10FFFF else None


def _merge_project_keys(self: Settings, data: Mapping[str, Any], changes: dict, problems: list[str]) -> None:
    """``rulesPaths``, ``perFileIgnores``, ``allow`` and ``inlineSuppressions`` (see :class:`Settings`)."""
    if data.get("rulesPaths") is not None:
        value = _str_list(data["rulesPaths"])
        if value is None:
            problems.append("setting 'rulesPaths' must be a list of rule files or folders")
        else:
            changes["rules_paths"] = tuple(value)
    if data.get("perFileIgnores") is not None:
        raw = data["perFileIgnores"]
        if isinstance(raw, Mapping):
            pfi = dict(self.per_file_ignores)
            for glob, ids in raw.items():
                value = _str_list(ids)
                if value is None or not str(glob).strip():
                    problems.append(f"setting perFileIgnores.{glob}: must be a list of rule ids or categories")
                else:
                    pfi[str(glob)] = _expanded(
                        f"perFileIgnores.{glob}", value, bool(data.get("rulesPaths") or self.rules_paths), problems
                    )
            changes["per_file_ignores"] = tuple(pfi.items())
        else:
            problems.append("setting 'perFileIgnores' must map path globs to lists of rule ids or categories")
    if data.get("allow") is not None:
        raw = data["allow"]
        if not isinstance(raw, Mapping):
            problems.append("setting 'allow' must be a table with 'codepoints', 'scripts' and/or 'hosts'")
            raw = {}
        for key in set(raw) - {"codepoints", "scripts", "hosts"}:
            problems.append(f"setting allow.{key}: unknown key (expected codepoints, scripts, hosts)")
        if raw.get("codepoints") is not None:
            items = _str_list(raw["codepoints"]) if not isinstance(raw["codepoints"], str) else [raw["codepoints"]]
            out = set(self.allow_codepoints)
            for item in items or []:
                cp = _codepoint_id(item)
                if cp is None:
                    problems.append(f'setting allow.codepoints: {item!r} is not a code point (use "U+200B")')
                else:
                    out.add(cp)
            if items is None:
                problems.append('setting allow.codepoints must be a list like ["U+200B"]')
            changes["allow_codepoints"] = frozenset(out)
        if raw.get("scripts") is not None:
            import regex

            items = _str_list(raw["scripts"])
            out = set(self.allow_scripts)
            for item in items or []:
                try:
                    regex.compile(rf"\p{{Script={item}}}")
                    out.add(item)
                except regex.error:
                    problems.append(f'setting allow.scripts: {item!r} is not a Unicode script name (e.g. "Cyrillic")')
            if items is None:
                problems.append("setting allow.scripts must be a list of Unicode script names")
            changes["allow_scripts"] = frozenset(out)
        if raw.get("hosts") is not None:
            items = _str_list(raw["hosts"])
            if items is None:
                problems.append("setting allow.hosts must be a list of host names")
            else:
                changes["allow_hosts"] = frozenset(self.allow_hosts) | {h.strip().lower().strip(".") for h in items}
    if data.get("inlineSuppressions") is not None:
        changes["inline_suppressions"] = bool(data["inlineSuppressions"])
    _merge_discovery_keys(data, changes, problems)


DOCUMENTATION_MODES = ("info", "hidden", "full")


def _merge_discovery_keys(data: Mapping[str, Any], changes: dict, problems: list[str]) -> None:
    """``exclude``, ``extendExclude`` and ``documentation`` (see :class:`Settings`)."""
    from unveil.core.globs import glob_problem

    for key, attr in (("exclude", "exclude"), ("extendExclude", "extend_exclude")):
        if data.get(key) is None:
            continue
        value = _str_list(data[key]) if not isinstance(data[key], str) else [data[key]]
        if value is None:
            problems.append(f"setting {key!r} must be a list of globs")
            continue
        for g in value:
            why = glob_problem(g)
            if why:
                problems.append(f"setting {key}: glob {g!r} cannot match: it {why}")
        changes[attr] = tuple(g for g in value if not glob_problem(g))
    if data.get("documentation") is not None:
        mode = str(data["documentation"]).lower()
        if mode in DOCUMENTATION_MODES:
            changes["documentation"] = mode
        else:
            problems.append(
                f"setting 'documentation' must be one of {', '.join(DOCUMENTATION_MODES)}, "
                f"got {data['documentation']!r}"
            )


DEFAULT_SETTINGS = Settings()
