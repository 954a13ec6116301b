"""Model prices (USD per million input tokens) for the token cost shown to users.

The bundled table is ``unveil/data/prices.toml`` (its header documents the format, following
research note agent-formats.md §4.4). Users adjust it with:

* ``Settings.prices_file`` — a TOML file in the same format, merged over the bundled table
  entry by entry (matched on ``model_id``; only the fields given change; new ids are added).
  A broken file leaves the bundled table in place and adds a message to
  :attr:`PriceTable.errors`.
* ``Settings.prices`` — ``{model: USD per MTok}``; the model is an id, alias or display name
  (case-insensitive) of a known entry, whose input price is replaced, or a new name, which is
  added as a custom model.
* ``Settings.models`` — which models to show (ids, aliases or display names); empty: the
  table's ``shown`` list.

Entries carry ``effective_from`` / ``effective_to`` dates (inclusive); the entry valid on
``today`` is used, so scheduled price changes apply by themselves.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import sys
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

log = logging.getLogger(__name__)

PRICES_FILE = Path(__file__).resolve().parent.parent / "data" / "prices.toml"

_KNOWN = {
    "provider",
    "model_id",
    "aliases",
    "display_name",
    "tokenizer",
    "token_ratio_vs_o200k",
    "input_per_mtok",
    "cached_input_per_mtok",
    "status",
    "source_url",
    "retrieved_at",
    "notes",
    "effective_from",
    "effective_to",
}


@dataclass(frozen=True)
class ModelPrice:
    """One model's price entry.

    * ``input_per_mtok`` / ``cached_input_per_mtok`` — USD per million input tokens (base /
      cache read; the latter may be ``None``).
    * ``tokenizer`` — ``o200k_base``, ``claude-v3``, ``claude-v4.8``, ``unknown`` …;
      ``token_ratio_vs_o200k`` — this model's token count ÷ the o200k count (for "≈" estimates).
    * ``effective_from`` / ``effective_to`` — inclusive validity dates or ``None``.
    * ``extra`` — the remaining fields of the entry (cache writes, long-context tiers …).
    """

    model_id: str
    display_name: str
    input_per_mtok: float
    provider: str = "custom"
    aliases: tuple[str, ...] = ()
    tokenizer: str = "unknown"
    token_ratio_vs_o200k: float = 1.0
    cached_input_per_mtok: float | None = None
    status: str = "current"
    source_url: str = ""
    retrieved_at: str = ""
    notes: str = ""
    effective_from: _dt.date | None = None
    effective_to: _dt.date | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def names(self) -> tuple[str, ...]:
        """Lower-cased id, aliases and display name (what users may type), plus the display name
        without its vendor word ("Claude Sonnet 5.5" → "sonnet 5.5"). Computed once per entry
        (every token report looks models up by name)."""
        got = self.__dict__.get("_names")
        if got is None:
            names = [self.model_id, self.display_name, *self.aliases]
            first, _, rest = self.display_name.partition(" ")
            if rest and first.lower() in ("claude", "openai", "google"):
                names.append(rest)
            got = tuple(n.lower() for n in names)
            object.__setattr__(self, "_names", got)  # (frozen: not a field, outside eq and hash)
        return got

    def valid_on(self, day: _dt.date) -> bool:
        """Whether the entry applies on ``day``."""
        if self.effective_from and day < self.effective_from:
            return False
        if self.effective_to and day > self.effective_to:
            return False
        return True


@dataclass
class PriceTable:
    """The effective price table: ``models`` valid today (one entry per ``model_id``, bundled
    order then added ones), the default ``shown`` ids, and ``errors`` (human messages about a
    broken prices file or unknown model names; never raised)."""

    models: list[ModelPrice]
    errors: list[str] = field(default_factory=list)
    shown: tuple[str, ...] = ()

    def find(self, name: str) -> ModelPrice | None:
        """The model whose id, alias or display name equals ``name`` (case-insensitive)."""
        key = name.strip().lower()
        for m in self.models:
            if key in m.names():
                return m
        return None


def _date(value: Any, where: str, errors: list[str]) -> _dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        return value.date()
    if isinstance(value, _dt.date):
        return value
    try:
        return _dt.date.fromisoformat(str(value))
    except ValueError:
        errors.append(f"{where}: {value!r} is not a date (YYYY-MM-DD)")
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _entry(raw: Mapping[str, Any], where: str, errors: list[str], base: ModelPrice | None = None) -> ModelPrice | None:
    """Build (or, with ``base``, update) a ModelPrice from a TOML table; ``None`` if invalid."""
    mid = raw.get("model_id", base.model_id if base else None)
    if not isinstance(mid, str) or not mid.strip():
        errors.append(f"{where}: model entry without a model_id")
        return None
    changes: dict[str, Any] = {}
    for key in ("input_per_mtok", "cached_input_per_mtok", "token_ratio_vs_o200k"):
        if key in raw:
            num = _number(raw[key])
            if num is None or num < 0:
                errors.append(f"{where} ({mid}): {key} must be a non-negative number, not {raw[key]!r}")
                return None
            changes[key] = num
    for key in ("provider", "display_name", "tokenizer", "status", "source_url", "retrieved_at", "notes"):
        if key in raw and raw[key] is not None:
            changes[key] = str(raw[key])
    if "aliases" in raw:
        al = raw["aliases"]
        changes["aliases"] = (al,) if isinstance(al, str) else tuple(str(a) for a in al or ())
    for key in ("effective_from", "effective_to"):
        if key in raw:
            changes[key] = _date(raw[key], f"{where} ({mid}) {key}", errors)
    extra = {k: v for k, v in raw.items() if k not in _KNOWN}
    if base is not None:
        merged_extra = dict(base.extra)
        merged_extra.update(extra)
        return replace(base, **changes, extra=merged_extra)
    if "input_per_mtok" not in changes:
        errors.append(f"{where} ({mid}): input_per_mtok is required")
        return None
    changes.setdefault("display_name", mid)
    return ModelPrice(model_id=mid, extra=extra, **changes)


def _parse(data: Mapping[str, Any], where: str, errors: list[str]) -> tuple[list[ModelPrice], tuple[str, ...] | None]:
    models = []
    raw_models = data.get("model", [])
    if not isinstance(raw_models, list):
        errors.append(f"{where}: 'model' must be an array of tables ([[model]])")
        raw_models = []
    for i, raw in enumerate(raw_models, 1):
        if not isinstance(raw, Mapping):
            errors.append(f"{where}: model entry {i} is not a table")
            continue
        m = _entry(raw, f"{where} model {i}", errors)
        if m is not None:
            models.append(m)
    shown = data.get("shown")
    return models, (tuple(str(s) for s in shown) if isinstance(shown, list) else None)


def _raw_entries(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = data.get("model", [])
    return [r for r in raw if isinstance(r, Mapping)] if isinstance(raw, list) else []


_bundled_lock = threading.Lock()
_bundled: dict[str, Any] | None = None
_user_cache: dict[str, tuple[float, int, dict | str]] = {}


def _bundled_data() -> dict[str, Any]:
    global _bundled
    with _bundled_lock:
        if _bundled is None:
            from unveil.core import cache

            try:
                _bundled = cache.load_toml(PRICES_FILE)
            except (OSError, tomllib.TOMLDecodeError) as exc:  # pragma: no cover - broken install
                log.error("cannot read %s: %s", PRICES_FILE, exc)
                _bundled = {}
        return _bundled


def _read_user_file(path: str) -> dict | str:
    """The parsed TOML of ``path`` or an error message (cached by mtime and size)."""
    p = os.path.expanduser(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        return f"prices file {path}: cannot read it ({exc.strerror or exc})"
    hit = _user_cache.get(p)
    if hit and hit[0] == st.st_mtime and hit[1] == st.st_size:
        return hit[2]
    from unveil.core import safe_read

    try:
        result: dict | str = tomllib.loads(safe_read.read_config_text(p))
    except tomllib.TOMLDecodeError as exc:
        result = f"prices file {path}: invalid TOML: {exc}"
    except RecursionError:
        result = f"prices file {path}: invalid TOML: nested too deeply"
    except UnicodeDecodeError as exc:
        result = f"prices file {path}: invalid TOML: {exc}"
    except safe_read.RefusedRead as exc:
        result = f"prices file {path}: cannot read it ({exc.reason})"
    except OSError as exc:
        result = f"prices file {path}: cannot read it ({exc.strerror or exc})"
    _user_cache[p] = (st.st_mtime, st.st_size, result)
    return result


def _pick(entries: list[ModelPrice], day: _dt.date) -> list[ModelPrice]:
    """One entry per model_id: the one valid on ``day`` (first in file order), in order of
    first appearance; ids with no valid entry are dropped."""
    out: dict[str, ModelPrice] = {}
    for m in entries:
        if m.model_id not in out and m.valid_on(day):
            out[m.model_id] = m
    order = list(dict.fromkeys(m.model_id for m in entries))
    return [out[i] for i in order if i in out]


@lru_cache(maxsize=4)
def _bundled_table(day: _dt.date) -> tuple[tuple[ModelPrice, ...], tuple[str, ...], tuple[str, ...]]:
    """The bundled entries valid on ``day``, its ``shown`` ids and its problems, parsed once per
    day per process (every token report needs them; :class:`ModelPrice` is immutable)."""
    errors: list[str] = []
    models, shown = _parse(_bundled_data(), "bundled prices.toml", errors)
    return tuple(_pick(models, day)), tuple(shown or ()), tuple(errors)


def load_prices(settings=None, today: _dt.date | None = None) -> PriceTable:
    """The effective :class:`PriceTable` for ``settings`` (a :class:`~unveil.core.config.Settings`
    or ``None``) on ``today`` (default: the local date). Never raises: problems with the user's
    prices file or ``prices`` setting are listed in ``errors`` and the bundled values stay."""
    day = today or _dt.date.today()
    picked, shown_ids, bundled_errors = _bundled_table(day)
    errors: list[str] = list(bundled_errors)
    table = list(picked)

    path = getattr(settings, "prices_file", None)
    if path:
        data = _read_user_file(path)
        if isinstance(data, str):
            errors.append(data + "; using the bundled prices")
        else:
            user_errors: list[str] = []
            by_id = {m.model_id: i for i, m in enumerate(table)}
            added: list[ModelPrice] = []
            for i, raw in enumerate(_raw_entries(data), 1):
                where = f"prices file {path} model {i}"
                mid = raw.get("model_id")
                if isinstance(mid, str) and mid in by_id:
                    # Date-limited user entries only apply inside their dates.
                    probe = _entry(raw, where, user_errors, base=table[by_id[mid]])
                    if probe is not None and probe.valid_on(day):
                        table[by_id[mid]] = probe
                else:
                    m = _entry(raw, where, user_errors)
                    if m is not None:
                        added.append(m)
            if not isinstance(data.get("model", []), list):
                user_errors.append(f"prices file {path}: 'model' must be an array of tables ([[model]])")
            table.extend(_pick(added, day))
            if isinstance(data.get("shown"), list):
                shown_ids = tuple(str(s) for s in data["shown"])
            errors.extend(user_errors)

    overrides = getattr(settings, "prices", None) or {}
    result = PriceTable(models=table, errors=errors, shown=shown_ids)
    for name, price in overrides.items():
        num = _number(price)
        if num is None or num < 0:
            errors.append(f"setting prices.{name}: {price!r} is not a non-negative number")
            continue
        m = result.find(str(name))
        if m is not None:
            idx = result.models.index(m)
            result.models[idx] = replace(
                m, input_per_mtok=num, notes=(m.notes + " Input price set in settings.").strip()
            )
        else:
            result.models.append(
                ModelPrice(
                    model_id=str(name),
                    display_name=str(name),
                    input_per_mtok=num,
                    notes="Set in settings.",
                    extra={"origin": "settings"},
                )
            )
    return result


def shown_models(settings=None, table: PriceTable | None = None, today: _dt.date | None = None) -> list[ModelPrice]:
    """Models to show: ``settings.models`` resolved by id, alias or display name (unknown
    names are skipped and reported in ``table.errors``), else the table's ``shown`` list.
    Models added through ``settings.prices`` are shown too when ``settings.models`` is empty."""
    table = table or load_prices(settings, today)
    wanted = tuple(getattr(settings, "models", ()) or ())
    out: list[ModelPrice] = []
    if wanted:
        for name in wanted:
            m = table.find(name)
            if m is None:
                msg = f"setting models: unknown model {name!r}"
                if msg not in table.errors:
                    table.errors.append(msg)
            elif m not in out:
                out.append(m)
        if out:
            return out
    for mid in table.shown:
        m = table.find(mid)
        if m is not None and m not in out:
            out.append(m)
    for m in table.models:
        if m.extra.get("origin") == "settings" and m not in out:
            out.append(m)
    return out
