"""Rule selectors: what ``--select``, ``--ignore``, ``--severity`` and the ``select`` /
``ignore`` / ``severity`` settings accept, and did-you-mean for the rest.

A selector is a rule id (``HID001``), a category (``hidden-content``), ``UNV001`` /
``internal``, or an id prefix (``HID``, ``HID02``: every rule whose id starts with it), matched
case-insensitively. :func:`expand` turns one into the ids and categories
:class:`unveil.core.config.Settings` stores; an unknown selector raises :class:`UnknownSelector`
whose message suggests the closest ids, categories or rule names (``difflib``).
"""

from __future__ import annotations

import difflib
from typing import Iterable

EXTRA = ("UNV001", "internal")


class UnknownSelector(ValueError):
    """An unknown rule id, prefix or category; ``suggestions`` holds the closest known ones."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown rule or category {name!r}{hint} (see `unveil rules`)")


def _known(rules=None) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """``(ids, categories, names)``: upper-/lower-case key → canonical value."""
    if rules is None:
        from unveil.core.rules import bundled_rules

        rules = bundled_rules()
    ids = {r.id.upper(): r.id for r in rules}
    ids["UNV001"] = "UNV001"
    cats = {r.category.lower(): r.category for r in rules}
    cats["internal"] = "internal"
    names = {r.name.lower(): r.id for r in rules if r.name}
    return ids, cats, names


def expand(name: str, rules=None) -> list[str]:
    """The ids or categories selector ``name`` stands for (see the module docstring): one
    canonical id or category, the sorted ids a prefix covers, or the id of a rule name
    (``tag-characters``). Raises :class:`UnknownSelector`."""
    ids, cats, names = _known(rules)
    key = name.strip()
    if key.upper() in ids:
        return [ids[key.upper()]]
    if key.lower() in cats:
        return [cats[key.lower()]]
    if key.lower() in names:
        return [names[key.lower()]]
    if key and key[0].isalpha():
        covered = sorted(v for k, v in ids.items() if k.startswith(key.upper()))
        if covered:
            return covered
    raise UnknownSelector(name, suggest(name, rules))


def suggest(name: str, rules=None, n: int = 2) -> list[str]:
    """Up to ``n`` known ids, categories or names close to ``name``."""
    ids, cats, names = _known(rules)
    prefixes = sorted({i.rstrip("0123456789") for i in ids.values()})  # "HID", "PIN": id families
    pool = prefixes + list(ids.values()) + list(cats.values()) + list(names)
    lowered = {p.lower(): p for p in pool}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)
    return [lowered[h] for h in hits]


def expand_all(names: Iterable[str], rules=None) -> tuple[list[str], list[str]]:
    """``(expanded selectors, problems)`` for many selectors; each unknown one gives one
    problem message and is left out."""
    out: list[str] = []
    problems: list[str] = []
    for n in names:
        try:
            out.extend(x for x in expand(str(n), rules) if x not in out)
        except UnknownSelector as exc:
            problems.append(str(exc))
    return out, problems
