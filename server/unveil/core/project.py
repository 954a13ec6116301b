"""Project configuration: ``[tool.unveil]`` in ``pyproject.toml`` or a ``.unveil.toml``.

Found by walking up from the scanned file's folder (the CLI's working directory or the LSP
workspace root for buffers without a path); the nearest folder with either file wins, and in
one folder ``.unveil.toml`` wins over ``pyproject.toml`` (a ``pyproject.toml`` without a
``[tool.unveil]`` table is passed over). Keys are those of the editor settings
(:class:`unveil.core.config.Settings`) in camelCase, snake_case or kebab-case, plus:

* ``per-file-ignores`` — table glob → list of rule ids or categories. A glob with a ``/`` is
  relative to the config file's folder; one without matches the file name anywhere below it.
* ``allow`` — ``codepoints`` (``["U+200B"]``), ``scripts`` (``["Cyrillic"]``), ``hosts``
  (``["example.com"]``, subdomains included); see :func:`allowed`.
* ``rules-paths`` — extra rule files or folders, relative to the config file.
* ``inline-suppressions`` — honour ``<!-- unveil-ignore… -->`` comments (default true).

Layers, lowest first: defaults < project file < editor settings (``initializationOptions``,
then ``workspace/configuration``) < command-line flags (:func:`settings_for`). A config file
that cannot be read or parsed, or a bad value in it, yields :attr:`ProjectConfig.errors` naming
the file and the problem; the rest of the file (or, for a syntax error, the defaults) still
applies. Loaded files are cached per ``(path, mtime_ns, size)``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from unveil.core.config import DEFAULT_SETTINGS, Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

log = logging.getLogger(__name__)

CONFIG_NAMES = (".unveil.toml", "pyproject.toml")
KNOWN_KEYS = frozenset(
    {
        "select",
        "ignore",
        "severity",
        "prices",
        "pricesFile",
        "models",
        "inlayHints",
        "inlayHintMinTokens",
        "debounceMs",
        "budgets",
        "claudeRatio",
        "workspaceScan",
        "kinds",
        "rulesPaths",
        "perFileIgnores",
        "allow",
        "inlineSuppressions",
        "exclude",
        "extendExclude",
        "documentation",  # core/discovery.py (ci branch)
    }
)
#: categories whose findings ``allow.hosts`` can drop
HOST_PREFIXES = ("EXF", "SRF", "SUP")


@dataclass(frozen=True)
class ProjectConfig:
    """One config file: ``path``; ``data`` — the camelCase mapping laid over the defaults
    (relative paths already resolved); ``errors`` — one readable line per problem, each
    starting with the file's path."""

    path: Path
    data: Mapping[str, Any] = field(default_factory=dict)
    errors: tuple[str, ...] = ()
    stamp: tuple[int, int] = (0, 0)


def camel(key: str) -> str:
    """``per-file-ignores`` / ``per_file_ignores`` / ``perFileIgnores`` → ``perFileIgnores``."""
    parts = [p for p in re.split(r"[-_]", str(key)) if p]
    if not parts:
        return str(key)
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _stamp(path: str | os.PathLike) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size)


_CACHE: dict[str, tuple[tuple[int, int], ProjectConfig | None]] = {}


def load(path: str | os.PathLike) -> ProjectConfig | None:
    """The config in ``path`` (``.unveil.toml``: top-level keys; ``pyproject.toml``: the
    ``[tool.unveil]`` table, ``None`` when it has none). Never raises; cached per mtime."""
    key = os.fspath(path)
    stamp = _stamp(key)  # a string path: most folders have no config, and a Path per miss costs
    if stamp is None:
        _CACHE.pop(key, None)
        return None
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    cfg = _load(Path(key), stamp)
    _CACHE[key] = (stamp, cfg)
    return cfg


def _load(path: Path, stamp: tuple[int, int]) -> ProjectConfig | None:
    from unveil.core import safe_read

    text = ""
    try:
        text = safe_read.read_config_text(path)
        raw = tomllib.loads(text)
    except safe_read.RefusedRead as exc:
        return ProjectConfig(path, {}, (f"{path}: cannot read config: {exc.reason}",), stamp)
    except (OSError, UnicodeDecodeError) as exc:
        return ProjectConfig(path, {}, (f"{path}: cannot read config: {exc}",), stamp)
    except RecursionError:
        return ProjectConfig(path, {}, (f"{path}: invalid TOML, using the defaults: nested too deeply",), stamp)
    except tomllib.TOMLDecodeError as exc:
        if path.name == "pyproject.toml" and "unveil" not in text:
            return None  # someone else's broken pyproject: not ours to report
        return ProjectConfig(path, {}, (f"{path}: invalid TOML, using the defaults: {exc}",), stamp)
    if path.name == "pyproject.toml":
        tool = raw.get("tool")
        if not isinstance(tool, dict) or "unveil" not in tool:
            return None
        raw = tool["unveil"]
        if not isinstance(raw, dict):
            return ProjectConfig(path, {}, (f"{path}: [tool.unveil] must be a table",), stamp)
    data, errors = normalise(raw, path.parent)
    return ProjectConfig(path, data, tuple(f"{path}: {e}" for e in errors), stamp)


def normalise(raw: Mapping[str, Any], base: Path) -> tuple[dict[str, Any], list[str]]:
    """camelCase keys, paths resolved against ``base`` (the config file's folder), unknown keys
    reported. Returns ``(data, problems)``."""
    data: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        k = camel(key)
        if k not in KNOWN_KEYS:
            problems.append(f"unknown key {key!r} (ignored)")
            continue
        data[k] = value
    if isinstance(data.get("rulesPaths"), str):
        data["rulesPaths"] = [data["rulesPaths"]]
    if isinstance(data.get("rulesPaths"), list):
        data["rulesPaths"] = [str((base / p).resolve()) if isinstance(p, str) else p for p in data["rulesPaths"]]
    for key in ("pricesFile", "prices"):
        if isinstance(data.get(key), str) and data[key]:
            data[key] = str((base / data[key]).resolve())
    pfi = data.get("perFileIgnores")
    if isinstance(pfi, Mapping):
        data["perFileIgnores"] = {_anchor(str(g), base): v for g, v in pfi.items()}
    return data, problems


def _anchor(glob: str, base: Path) -> str:
    """A glob containing ``/`` is relative to ``base``; a bare name glob matches anywhere."""
    g = glob.replace("\\", "/")
    if "/" not in g.strip("/"):
        return g.strip("/")
    if g.startswith("./"):
        g = g[2:]
    if g.startswith("/") or re.match(r"[A-Za-z]:/", g):
        return g
    return base.as_posix().rstrip("/") + "/" + g


def ancestors(folder: Path) -> Iterator[Path]:
    """``folder``, its parent, …, up to the root, made one at a time (``(p, *p.parents)`` builds
    them all, which costs more than the lookups a memo saves)."""
    while True:
        yield folder
        parent = folder.parent
        if parent == folder:
            return
        folder = parent


@dataclass
class SearchMemo:
    """What one CLI run has already looked up, assuming no configuration file changes while it
    runs (the LSP never passes one: a config can appear between two keystrokes).

    ``nearest``: folder (absolute, as a string) → its nearest :class:`ProjectConfig` or ``None``
    (every folder walked through on the way up is recorded, so a sibling folder stops at their
    common parent); ``settings``: ``(config path or None, repr of the layers)`` → the merged
    ``(Settings, ProjectConfig)`` :func:`settings_for` returns; ``listed``: folder (absolute,
    normalised string) → the :data:`CONFIG_NAMES` its folder listing showed
    (:attr:`unveil.core.discovery.Collected.listed`): such a folder is known to be a folder and
    only the configuration files it holds are opened, with no ``stat`` of the names it lacks.
    ``layers_repr``: the last ``(base, layers, repr)`` :func:`settings_for` computed, reused
    while the same objects come again (a run's layers are not changed while it runs)."""

    nearest: dict[str, "ProjectConfig | None"] = field(default_factory=dict)
    settings: dict[tuple[Path | None, str], tuple[Settings, "ProjectConfig | None"]] = field(default_factory=dict)
    listed: dict[str, frozenset[str]] = field(default_factory=dict)
    layers_repr: tuple | None = None

    def layers_key(self, base: Settings, layers: list) -> str:
        """``repr((base, layers))``, computed again only when ``base`` or an element of
        ``layers`` is another object than last time."""
        last = self.layers_repr
        if (
            last is not None
            and last[0] is base
            and len(last[1]) == len(layers)
            and all(a is b for a, b in zip(last[1], layers))
        ):
            return last[2]
        text = repr((base, layers))
        self.layers_repr = (base, list(layers), text)
        return text


def find(start: str | os.PathLike | None, memo: SearchMemo | None = None) -> ProjectConfig | None:
    """The nearest config at or above ``start`` (a folder, or a file whose folder is used).
    With ``memo``, folders already searched in this run are not searched again, and a folder
    whose listing the memo holds (:attr:`SearchMemo.listed`) costs no ``stat``."""
    if start is None:
        return None
    p = Path(start)
    try:
        p = p.absolute()
    except OSError:
        return None
    listed = memo.listed if memo is not None else {}
    if os.fspath(p) not in listed and not p.is_dir():
        p = p.parent
    walked: list[str] = []
    found: ProjectConfig | None = None
    for folder in ancestors(p):
        here = str(folder)
        if memo is not None and here in memo.nearest:
            found = memo.nearest[here]
            break
        walked.append(here)
        names = listed.get(here)
        found = next(
            (
                c
                for c in (load(os.path.join(here, n)) for n in CONFIG_NAMES if names is None or n in names)
                if c is not None
            ),
            None,
        )
        if found is not None:
            break
    if memo is not None:
        for here in walked:
            memo.nearest[here] = found
    return found


def editor_layer(data: Any) -> Any:
    """An editor settings section without its empty values (``[]``, ``{}``, ``""``, ``null``):
    clients such as VS Code send every setting with its default, which must not wipe the
    project file's values."""
    if not isinstance(data, Mapping):
        return data
    if isinstance(data.get("unveil"), Mapping):
        data = data["unveil"]
    return {k: v for k, v in data.items() if v not in (None, "", [], {})}


def settings_for(
    path: str | os.PathLike | None,
    layers: Iterable[Any] = (),
    *,
    fallback_dir: str | os.PathLike | None = None,
    base: Settings = DEFAULT_SETTINGS,
    isolated: bool = False,
    config_file: str | os.PathLike | None = None,
    memo: SearchMemo | None = None,
) -> tuple[Settings, ProjectConfig | None]:
    """Effective settings for the file at ``path``: ``base`` < nearest project config (searched
    from ``path``'s folder, else ``fallback_dir``) < each of ``layers`` (editor sections are
    passed through :func:`editor_layer`; CLI flags as a camelCase mapping). Problems of the
    project layer go to the returned config's ``errors``, not to ``Settings.problems``.

    ``isolated`` (``unveil check --isolated``, an untrusted VS Code workspace): no project
    configuration at all. ``config_file`` (``--config FILE``): that file instead of the search
    (a missing or unreadable one is an error in the returned config's ``errors``). ``memo`` (one
    CLI run): the search and the merge are done once per folder and once per configuration, and
    equal calls return the same objects."""
    if isolated:
        cfg = None
    elif config_file is not None:
        cfg = load(Path(config_file)) or ProjectConfig(
            Path(config_file), {}, (f"{config_file}: no unveil configuration found in this file",)
        )
    else:
        cfg = find(path if path else fallback_dir, memo) if (path or fallback_dir) else None
    layers = list(layers)
    memo_key = (cfg.path if cfg is not None else None, memo.layers_key(base, layers) if memo is not None else "")
    if memo is not None:
        hit = memo.settings.get(memo_key)
        if hit is not None:
            return hit
    settings = base
    if cfg is not None and cfg.data:
        merged = base.merged(cfg.data)
        extra = merged.problems[len(base.problems) :]
        if extra:
            cfg = replace(cfg, errors=cfg.errors + tuple(f"{cfg.path}: {e}" for e in extra))
        settings = replace(merged, problems=base.problems)
    for layer in layers:
        settings = settings.merged(editor_layer(layer))
    if memo is not None:
        memo.settings[memo_key] = (settings, cfg)
    return settings, cfg


# -- applying per-file ignores and allow-lists ---------------------------------------------------


def file_ignores(path: str | None, settings: Settings) -> frozenset[str]:
    """Rule ids and categories ``per_file_ignores`` switches off for ``path``."""
    if not path or not settings.per_file_ignores:
        return frozenset()
    from unveil.core.kinds import path_matches

    out: set[str] = set()
    p = Path(path).as_posix()
    for glob, ids in settings.per_file_ignores:
        try:
            if path_matches(p, glob):
                out |= ids
        except Exception as exc:  # noqa: BLE001 - a bad glob never breaks analysis
            log.warning("per-file-ignores glob %r failed: %s", glob, exc)
    return frozenset(out)


_URL_HOST = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://(?:[^\s/@]*@)?(\[[0-9a-f:.]+\]|[^\s/:?#'\"<>()\[\]`]+)")


def hosts_in(text: str) -> list[str]:
    """Host names of the URLs in ``text`` (lower case, without port or trailing dot)."""
    return [m.group(1).lower().rstrip(".").strip("[]") for m in _URL_HOST.finditer(text)]


def host_allowed(host: str, allowed: frozenset[str]) -> bool:
    """``host`` equals an allowed host or is a subdomain of one."""
    return any(host == a or host.endswith("." + a) for a in allowed)


def _script_of(cp_id: str, scripts: frozenset[str]) -> bool:
    import regex

    try:
        ch = chr(int(cp_id[2:], 16))
    except ValueError:
        return False
    return any(regex.match(rf"\p{{Script={s}}}", ch) for s in scripts)


def allowed(finding, text: str, doc, settings: Settings) -> bool:
    """Whether an allow-list silences ``finding`` (``text`` is the document text, ``doc`` its
    :class:`~unveil.core.document.Document`):

    * ``allow_codepoints`` — a hidden-content finding (``HID``) whose ``data["codepoints"]`` are
      all allowed;
    * ``allow_scripts`` — an ``HID013`` (confusable) finding whose look-alike code points all
      belong to allowed scripts;
    * ``allow_hosts`` — an ``EXF``/``SRF``/``SUP`` finding whose matched text (or, when that
      holds no URL, its line) names URLs whose hosts are all allowed.
    """
    rule = finding.rule
    data = finding.data or {}
    cps = data.get("codepoints")
    if settings.allow_codepoints and rule.startswith("HID") and cps:
        if all(c in settings.allow_codepoints for c in cps):
            return True
    if settings.allow_scripts and rule == "HID013" and cps:
        if all(_script_of(c, settings.allow_scripts) for c in cps):
            return True
    if settings.allow_hosts and rule[:3] in HOST_PREFIXES:
        hosts = hosts_in(text[finding.start : finding.end])
        if not hosts and doc is not None:
            first, last = doc.line_of(finding.start), doc.line_of(max(finding.start, finding.end - 1))
            hosts = hosts_in(text[doc.line_span(first)[0] : doc.line_span(last)[1]])
        if hosts and all(host_allowed(h, settings.allow_hosts) for h in hosts):
            return True
    return False


# -- what a project configuration turns off ----------------------------------------------------

#: categories that are not about security: a configuration that turns them off is not blinding
NON_SECURITY = frozenset({"cost", "format"})


def effects(cfg: ProjectConfig | None, rules=None) -> list[str]:
    """What the project configuration ``cfg`` turns off or lowers compared with the defaults,
    one readable phrase per effect, e.g. ``"ignore: HID, secrets"``, ``"severity lowered: HID001
    error → hint"``, ``"per-file-ignores: skills/** → HID001"``, ``"select: only TOK001 (every
    other rule off)"``, ``"inline-suppressions: false"`` is not a weakening and is not listed.
    Empty for ``None`` or a configuration that only adds rules or changes prices."""
    if cfg is None or not cfg.data:
        return []
    from unveil.core.rules import bundled_rules

    rules = rules or bundled_rules()
    try:
        s = DEFAULT_SETTINGS.merged(cfg.data)
    except Exception:  # noqa: BLE001 - a broken config is reported elsewhere
        return []
    out: list[str] = []
    if s.select:
        off = sorted({r.category for r in rules if not s.rule_enabled(r.id, r.category)})
        out.append(f"select: only {', '.join(sorted(s.select))} (turns off {', '.join(off) or 'nothing'})")
    if s.ignore:
        out.append(f"ignore: {', '.join(sorted(s.ignore))}")
    by_id = {r.id: r for r in rules}
    cats: dict[str, list] = {}
    for r in rules:
        cats.setdefault(r.category, []).append(r)
    for key, sev in sorted(s.severity.items()):
        targets = [by_id[key]] if key in by_id else cats.get(key, [])
        if any(sev > r.severity for r in targets):
            base = by_id[key].severity.label if key in by_id else "default"
            out.append(f"severity lowered: {key} {base} → {sev.label}")
    for glob, ids in s.per_file_ignores:
        out.append(f"per-file-ignores: {glob} → {', '.join(sorted(ids))}")
    if s.allow_codepoints:
        out.append(f"allow codepoints: {', '.join(sorted(s.allow_codepoints))}")
    if s.allow_scripts:
        out.append(f"allow scripts: {', '.join(sorted(s.allow_scripts))}")
    if s.allow_hosts:
        out.append(f"allow hosts: {', '.join(sorted(s.allow_hosts))}")
    if s.kind_map:
        out.append(f"kinds remapped: {', '.join(f'{g}={k}' for g, k in sorted(s.kind_map.items()))}")
    if s.budgets:
        out.append(f"token budgets: {', '.join(f'{k}={v}' for k, v in sorted(s.budgets.items()))}")
    documentation = getattr(s, "documentation", "info")
    if documentation == "hidden":
        out.append(
            "documentation = hidden (risky-directive findings in visible text of non-agent Markdown not reported)"
        )
    excludes = list(cfg.data.get("exclude") or ()) + list(cfg.data.get("extendExclude") or ())
    if excludes:
        out.append(f"exclude: {', '.join(map(str, excludes))} (files not scanned)")
    return out


def weakens_security(cfg: ProjectConfig | None, rules=None) -> list[str]:
    """The security categories (all but :data:`NON_SECURITY`) that ``cfg`` turns off wholly or in
    part, or lowers the severity of, anywhere (including per-file ignores and allow-lists)."""
    if cfg is None or not cfg.data:
        return []
    from unveil.core.rules import bundled_rules

    rules = rules or bundled_rules()
    try:
        s = DEFAULT_SETTINGS.merged(cfg.data)
    except Exception:  # noqa: BLE001
        return []
    hit: set[str] = set()
    pfi: set[str] = set()
    for _glob, ids in s.per_file_ignores:
        pfi |= ids
    for r in rules:
        if r.category in NON_SECURITY:
            continue
        if not s.rule_enabled(r.id, r.category) or r.id in pfi or r.category in pfi:
            hit.add(r.category)
        elif s.severity_for(r.id, r.category, r.severity) > r.severity:
            hit.add(r.category)
    if s.allow_codepoints or s.allow_scripts:
        hit.add("hidden-content")
    if s.allow_hosts:
        hit.add("data-exfiltration")
    return sorted(hit)


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git``, or ``None``."""
    for f in (folder, *folder.parents):
        if (f / ".git").exists():
            return f
    return None


def nested_weakening(cfg: ProjectConfig | None, rules=None) -> tuple[Path, list[str]] | None:
    """``(repository root, weakened categories)`` when ``cfg`` lies in a subfolder below its
    repository root and weakens security categories (:func:`weakens_security`); else ``None``.
    A root configuration is reviewed with the repository; one inside ``skills/x/`` hides only
    that folder's files from the scan, which is how a single poisoned skill would blind it."""
    if cfg is None:
        return None
    folder = Path(cfg.path).absolute().parent
    root = repository_root(folder)
    if root is None or root == folder:
        return None
    cats = weakens_security(cfg, rules)
    return (root, cats) if cats else None
