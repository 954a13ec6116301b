"""The ``unveil`` command (also ``python -m unveil``).

Commands::

    unveil serve [--stdio]                 language server over stdio (unveil.lsp.server.run)
    unveil check PATH... [options]         scan files and folders; text, JSON or SARIF 2.1.0
    unveil cost PATH... [options]          tokens per session / once invoked and price per model
    unveil rules [--format text|json]      the bundled rules
    unveil explain RULE                    one rule's documentation and examples
    unveil --version

Exit status of ``check``: 0 when no finding is at or above ``--fail-on`` (default ``error``),
1 when one is, 2 on a usage error or when a path could not be read (the other paths are still
scanned and reported). ``cost``, ``rules`` and ``explain`` exit 0, or 2 on usage and I/O errors.
Any command exits 3 when unveil itself fails (an internal error: one line on stderr).

Files are read as bytes and decoded as strict UTF-8; a file with invalid UTF-8 is decoded with
``surrogateescape`` so no byte is lost (each bad byte becomes one code point U+DC80..U+DCFF,
which the Unicode check reports). Folders are walked recursively for every regular file
:func:`unveil.core.kinds.is_agent_file` accepts (any ``.md``/``.mdc``/``.markdown`` file and the
rule files of known kinds such as ``.cursorrules``), skipping ``.git``, ``node_modules``,
``.venv`` and other tool caches; named pipes, sockets and devices are never opened (one named
on the command line is an error, exit 2).

A broken price table (unknown ``--models`` name, unreadable or invalid ``--prices-file``, or
the same in the project configuration) is reported on stderr and exits 2 in ``cost`` and
``check``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from unveil import __version__
from unveil.core import kinds
from unveil.core.config import DEFAULT_SETTINGS, Settings
from unveil.core.discovery import SKIP_DIRS, Collected, collect, display_path, is_agent_file, read_text  # noqa: F401
from unveil.core.findings import Severity
from unveil.reporters.common import FileResult, config_lines, config_summary, kind_label, printable

log = logging.getLogger("unveil.cli")

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 3
"""unveil itself failed (a bug): one line on stderr, distinct from findings (1) and usage/I/O errors (2)."""

FAIL_ON = ("error", "warning", "info", "hint", "never")


def project_settings(path: str | None, layer: dict | None, seen: set[str], *, isolated: bool = False,
                     config_file: str | None = None, out: dict | None = None) -> Settings:
    """Settings for one file: defaults < nearest ``.unveil.toml`` / ``pyproject.toml``
    ``[tool.unveil]`` (:mod:`unveil.core.project`; searched from the file, else the working
    directory; none with ``isolated``, ``config_file`` instead of the search) < the command-line
    ``layer``. Config and rule-file problems are printed on stderr once each (``seen``) and never
    change the exit status. ``out["config"]`` receives the :class:`~unveil.core.project.ProjectConfig` used."""
    from unveil.core import project
    from unveil.core.checks.directives import load_pattern_rules

    settings, cfg = project.settings_for(path, [layer or {}], fallback_dir=Path.cwd(), isolated=isolated,
                                         config_file=config_file)
    if out is not None:
        out["config"] = cfg
    problems = list(cfg.errors) if cfg is not None else []
    if settings.rules_paths:
        problems += [f"rule file error: {e}" for e in load_pattern_rules(tuple(settings.rules_paths)).errors]
    for problem in problems:
        if problem not in seen:
            seen.add(problem)
            _error(problem)
    return settings


def _config_info(cfg, path: str, isolated: bool) -> tuple[dict, list]:
    """``analysis.extra["config"]`` for a file governed by ``cfg`` and the ``UNV021`` finding when
    ``cfg`` is a nested configuration that weakens security categories."""
    from unveil.core import project
    from unveil.core.findings import Finding

    if isolated or cfg is None:
        return {"isolated": isolated, "path": None, "effects": []}, []
    shown = display_path(Path(cfg.path).absolute(), Path.cwd().resolve())
    info = {"isolated": False, "path": shown, "effects": project.effects(cfg)}
    nested = project.nested_weakening(cfg)
    if nested is None:
        return info, []
    root, cats = nested
    msg = (f"Project configuration {shown}, below the repository root, turns off or lowers security rules "
           f"({', '.join(cats)}) for the files in its folder, this one included: "
           + "; ".join(info["effects"]) + ". Run with --isolated to scan without it")
    return info, [Finding(NESTED_CONFIG_RULE, Severity.WARNING, 0, 0, msg, category="internal")]


NESTED_CONFIG_RULE = "UNV021"


def analyze_paths(paths: Sequence[str], settings: Settings,
                  layer: dict | None = None, *, isolated: bool = False,
                  config_file: str | None = None) -> tuple[list[FileResult], list[str]]:
    """Read and analyse every file ``paths`` expand to. Returns the results and the error
    messages (each also logged to stderr by the caller). With ``layer`` (the command-line
    settings as a camelCase mapping), each file's settings come from
    :func:`project_settings` instead of ``settings``."""
    from unveil.core.analyze import analyze

    seen: set[str] = set()
    collected = collect(paths, kind_map=settings.kind_map)
    results: list[FileResult] = []
    errors = list(collected.errors)
    for shown, absolute in collected.files:
        try:
            text = read_text(absolute)
        except OSError as exc:
            errors.append(f"{shown}: cannot read: {exc.strerror or exc}")
            continue
        try:
            used: dict = {}
            file_settings = settings if layer is None else project_settings(
                str(absolute), layer, seen, isolated=isolated, config_file=config_file, out=used)
            analysis = analyze(text, str(absolute), file_settings)
            if layer is not None:
                info, extra = _config_info(used.get("config"), str(absolute), isolated)
                analysis.extra["config"] = info
                if extra:
                    from unveil.core.analyze import add_findings

                    add_findings(analysis, extra)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - analyze() should never raise; one file never stops the rest
            log.exception("analysis of %s failed", shown)
            errors.append(f"{shown}: analysis failed: {type(exc).__name__}: {exc}")
            continue
        results.append(FileResult(shown, analysis))
    if collected.outside:
        from unveil.core.analyze import refused

        for shown, absolute, target in collected.outside:
            file_settings = settings if layer is None else project_settings(
                str(absolute), layer, seen, isolated=isolated, config_file=config_file)
            try:
                shown_target = os.readlink(absolute)
            except OSError:
                shown_target = str(target)
            results.append(FileResult(shown, refused(str(absolute), printable(shown_target), file_settings)))
        results.sort(key=lambda r: r.path)
    return results, errors


# --------------------------------------------------------------------------- settings


def _split(values: Iterable[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or ():
        out.extend(x for x in v.replace(",", " ").split() if x)
    return out


class UsageError(Exception):
    """A bad command-line value (exit 2)."""


def price_errors(settings: Settings) -> list[str]:
    """Problems with the price table ``settings`` select: an unreadable or invalid prices file
    or entry, a bad ``prices`` value, an unknown name in ``models``
    (:attr:`unveil.core.prices.PriceTable.errors`). Empty when the price module is missing."""
    try:
        from unveil.core import prices
    except ImportError:
        return []
    table = prices.load_prices(settings)
    prices.shown_models(settings, table)
    return list(table.errors)


def _file_price_errors(results: Sequence[FileResult], settings: Settings) -> list[str]:
    """:func:`price_errors` of each file's settings (project configuration laid under the
    command line) not already in ``settings``' errors, each message once."""
    checked: set = set()
    out: list[str] = []
    known = set(price_errors(settings))
    for r in results:
        s = getattr(r.analysis, "settings", None) or settings
        key = (s.prices_file, tuple(s.models), tuple(sorted((str(k), str(v)) for k, v in (s.prices or {}).items())))
        if key in checked:
            continue
        checked.add(key)
        for e in price_errors(s):
            if e not in known and e not in out:
                out.append(e)
    return out


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from ``--select``, ``--ignore``, ``--severity``, ``--models``,
    ``--prices-file`` and ``--kind GLOB=KIND``. Raises :class:`UsageError` for an unknown rule
    id or category, a bad severity or an unknown kind id."""
    from unveil.core.rules import bundled_rules

    data: dict = {}
    known = {r.id for r in bundled_rules()} | {r.category for r in bundled_rules()} | {"UNV001", "internal"}
    known_upper = {k.upper(): k for k in known}

    def norm(name: str) -> str:
        if name in known:
            return name
        if name.upper() in known_upper:
            return known_upper[name.upper()]
        raise UsageError(f"unknown rule or category {name!r} (see `unveil rules`)")

    for key in ("select", "ignore"):
        values = _split(getattr(args, key, None))
        if values:
            data[key] = [norm(v) for v in values]
    sev = {}
    for item in _split(getattr(args, "severity", None)):
        name, sep, level = item.partition("=")
        if not sep:
            raise UsageError(f"--severity expects RULE=LEVEL, got {item!r}")
        try:
            Severity.parse(level)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        sev[norm(name)] = level
    if sev:
        data["severity"] = sev
    # model names may contain spaces ("Opus 5.5"): split on commas only
    models = [m.strip() for v in (getattr(args, "models", None) or ()) for m in v.split(",") if m.strip()]
    if models:
        data["models"] = models
    if getattr(args, "prices_file", None):
        data["pricesFile"] = args.prices_file
    kind_map = {}
    for item in getattr(args, "kind", None) or ():
        glob, sep, kind_id = item.rpartition("=")
        if not sep or not glob.strip() or not kind_id.strip():
            raise UsageError(f"--kind expects GLOB=KIND, got {item!r}")
        kind_map[glob.strip()] = kind_id.strip()
    if kind_map:
        data["kinds"] = kind_map
    if getattr(args, "no_inline_suppressions", False):
        data["inlineSuppressions"] = False
    settings = DEFAULT_SETTINGS.merged(data) if data else DEFAULT_SETTINGS
    for problem in settings.problems:
        raise UsageError(problem)
    args.cli_layer = data  # laid over each file's project config (project_settings)
    return settings


# --------------------------------------------------------------------------- output


def _use_colour(choice: str, stream) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _emit(text: str, output: str | None) -> None:
    """Write a report to ``output`` (a file, UTF-8) or stdout. Raises ``OSError``."""
    if output:
        with open(output, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh:
            fh.write(text)
        return
    out = sys.stdout
    try:
        try:
            out.write(text)
        except UnicodeEncodeError:
            buffer = getattr(out, "buffer", None)
            if buffer is None:
                raise
            out.flush()
            buffer.write(text.encode(out.encoding or "utf-8", "backslashreplace"))
        out.flush()
    except BrokenPipeError:  # `unveil check . | head`: the reader left; keep the exit status
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())  # silence the flush at interpreter exit
        except (OSError, AttributeError, ValueError):
            pass


def _error(message: str) -> None:
    print(f"unveil: {printable(message)}", file=sys.stderr)


# --------------------------------------------------------------------------- commands


def cmd_check(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    results, errors = analyze_paths(args.paths, settings, getattr(args, "cli_layer", {}),
                                    isolated=args.isolated, config_file=args.config)
    bad_prices = _file_price_errors(results, DEFAULT_SETTINGS)
    for e in errors + bad_prices:
        _error(e)
    if args.format == "json":
        from unveil.reporters import json as reporter

        report = reporter.render(results)
    elif args.format == "sarif":
        from unveil.reporters import sarif as reporter

        report = reporter.render(results, notifications=errors + bad_prices)
    else:
        from unveil.reporters import text as reporter

        colour = False if args.output else _use_colour(args.color, sys.stdout)
        report = reporter.render(results, colour=colour, errors=len(errors))
    try:
        _emit(report, args.output)
    except OSError as exc:
        _error(f"{args.output}: cannot write: {exc.strerror or exc}")
        return EXIT_ERROR
    if errors or bad_prices:
        return EXIT_ERROR
    if args.fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(args.fail_on)
    failing = any(f.severity <= threshold for r in results for f in r.analysis.findings)
    return EXIT_FINDINGS if failing else EXIT_OK


def price_rows(report, settings: Settings):
    """Price rows for a token report from :func:`unveil.core.cost.price_rows` and the models
    :func:`unveil.core.prices.shown_models` selects; ``None`` if prices are unavailable."""
    try:
        from unveil.core import cost, prices

        models = prices.shown_models(settings)
        return list(cost.price_rows(report, models))
    except (ImportError, AttributeError) as exc:
        log.debug("prices unavailable: %s", exc)
        return None


def format_usd(value: float) -> str:
    """USD amount as :func:`unveil.core.cost.format_usd` writes it (fallback: ``$0.0000``)."""
    try:
        from unveil.core.cost import format_usd as fmt

        return fmt(value)
    except (ImportError, AttributeError):
        return f"${value:,.4f}"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    """``"1 file"``, ``"2 files"`` (thousands separated)."""
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _model_name(model) -> str:
    for attr in ("name", "label", "id"):
        v = getattr(model, attr, None)
        if isinstance(v, str):
            return v
    return str(model)


def _shown(row) -> tuple[float, float, float, bool]:
    """``(per session, once invoked, per 1,000 sessions, estimated)`` to print for a row: the
    "≈" estimate for models with a tokenizer ratio (:func:`unveil.core.cost.shown_usd`)."""
    approx = getattr(row, "approx_usd_per_session", None)
    if approx is None:
        return row.usd_per_session, row.usd_per_invoke, row.usd_per_1000_sessions, False
    invoke = getattr(row, "approx_usd_per_invoke", None)
    return approx, row.usd_per_invoke if invoke is None else invoke, approx * 1000, True


def _estimate_note(rows) -> str | None:
    try:
        from unveil.core.cost import estimate_note

        return estimate_note(rows)
    except (ImportError, AttributeError):
        return None


def _price_table(rows, indent: str = "  ") -> list[str]:
    """The price rows as an aligned table; estimated figures are prefixed "≈" and explained
    in a footnote line after the table."""
    header = ("model", "per session", "once invoked", "per 1,000 sessions")
    body = []
    for r in rows:
        session, invoke, per_1000, approx = _shown(r)
        def usd(x: float) -> str:
            return ("≈" if approx and x else "") + format_usd(x)  # "$0" is exact whatever the tokenizer

        body.append((printable(_model_name(r.model)), usd(session), usd(invoke), usd(per_1000)))
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(4)]
    lines = []
    for row in [header, *body]:
        cells = [row[0].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in range(1, 4)]
        lines.append(indent + "  ".join(cells).rstrip())
    note = _estimate_note(rows)
    if note:
        lines.append(indent + note)
    return lines


@dataclass
class _Total:
    model: str
    usd_per_session: float = 0.0
    usd_per_invoke: float = 0.0
    usd_per_1000_sessions: float = 0.0
    token_ratio: float | None = None
    approx_usd_per_session: float | None = None
    approx_usd_per_invoke: float | None = None


def _sum_rows(all_rows: list[list]) -> list[_Total]:
    totals: dict[str, _Total] = {}
    for rows in all_rows:
        for r in rows:
            name = _model_name(r.model)
            t = totals.setdefault(name, _Total(name))
            t.usd_per_session += r.usd_per_session
            t.usd_per_invoke += r.usd_per_invoke
            t.usd_per_1000_sessions += r.usd_per_1000_sessions
            if getattr(r, "approx_usd_per_session", None) is not None:
                t.token_ratio = getattr(r, "token_ratio", None)
                t.approx_usd_per_session = (t.approx_usd_per_session or 0.0) + r.approx_usd_per_session
                t.approx_usd_per_invoke = (t.approx_usd_per_invoke or 0.0) + (r.approx_usd_per_invoke or 0.0)
    return list(totals.values())


def _row_dict(row) -> dict:
    """One price row for ``cost --format json``: the exact o200k-based USD (``usd_*``) and, for
    models with a tokenizer ratio, the estimate (``approx_usd_*``, ``token_ratio``; else
    ``null``) with ``estimated`` true."""
    approx = getattr(row, "approx_usd_per_session", None)
    return {
        "model": _model_name(row.model),
        "usd_per_session": row.usd_per_session,
        "usd_per_invoke": row.usd_per_invoke,
        "usd_per_1000_sessions": row.usd_per_1000_sessions,
        "estimated": approx is not None,
        "token_ratio": getattr(row, "token_ratio", None) if approx is not None else None,
        "approx_usd_per_session": approx,
        "approx_usd_per_invoke": getattr(row, "approx_usd_per_invoke", None) if approx is not None else None,
        "approx_usd_per_1000_sessions": approx * 1000 if approx is not None else None,
    }


def cmd_cost(args: argparse.Namespace) -> int:
    import json

    try:
        settings = settings_from_args(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    bad_prices = price_errors(settings)
    if bad_prices:  # unknown --models name, unreadable or invalid --prices-file: nothing to price
        for e in bad_prices:
            _error(e.removesuffix("; using the bundled prices"))
        return EXIT_ERROR
    results, errors = analyze_paths(args.paths, settings, getattr(args, "cli_layer", {}),
                                    isolated=args.isolated, config_file=args.config)
    errors += _file_price_errors(results, settings)
    for e in errors:
        _error(e)
    files = []
    for r in results:
        report = r.analysis.tokens
        file_settings = getattr(r.analysis, "settings", None) or settings
        rows = price_rows(report, file_settings) if report is not None else None
        files.append((r, report, rows))
    total_session = sum(rep.session for _, rep, _ in files if rep is not None)
    total_invoke = sum(rep.invoke for _, rep, _ in files if rep is not None)
    total_rows = _sum_rows([rows for _, _, rows in files if rows])
    from unveil.core import workspace as ws

    summary = ws.summarize(
        [ws.file_entry(r.analysis, r.path, Path(r.analysis.path).absolute().as_uri() if r.analysis.path else "")
         for r in results],
        Path.cwd().absolute().as_uri(), settings,
    )
    folder_given = any(Path(p).is_dir() for p in args.paths)
    if args.format == "json":
        all_rows = [x for _, _, rows in files for x in rows or ()]
        data = {
            "files": [
                {
                    "path": r.path,
                    "kind": r.analysis.kind,
                    "kind_label": kind_label(r.analysis),
                    "tokens": {
                        "session": rep.session if rep else None,
                        "invoke": rep.invoke if rep else None,
                    },
                    "basis": rep.basis if rep else None,
                    "sections": [
                        {"line": s.line + 1, "level": s.level, "title": s.title, "tokens": s.tokens}
                        for s in (rep.sections if rep else ())
                    ],
                    "prices": [_row_dict(x) for x in rows] if rows is not None else None,
                }
                for r, rep, rows in files
            ],
            "total": {
                "files": len(files),
                "tokens": {"session": total_session, "invoke": total_invoke},
                "prices": [_row_dict(t) for t in total_rows],
            },
            "price_note": _estimate_note(all_rows),
            "workspace": summary.to_dict(),
            "config": config_summary(results),
        }
        from unveil.reporters.common import no_lone_surrogates

        text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
        text = no_lone_surrogates(text)
    elif (folder_given or len(files) > 1) and files:
        # a folder or several files: one table, a row per file, subtotals per kind and totals;
        # file names are escaped as `check` does (a name may hold ANSI escapes or bidi controls)
        shown = ws.summarize(
            [ws.file_entry(r.analysis, printable(r.path),
                           Path(r.analysis.path).absolute().as_uri() if r.analysis.path else "") for r in results],
            Path.cwd().absolute().as_uri(), settings,
        )
        lines = ws.format_table(shown)
        total_rows = _sum_rows([rows for r, _, rows in files if rows and r.analysis.kind != ws.UNKNOWN_KIND])
        if total_rows:
            lines.append("")
            lines.append(f"Price of the {_plural(summary.total.files, 'agent file')} (every session / once invoked):")
            lines.extend(_price_table(total_rows))
        text = "\n".join(lines).rstrip("\n") + "\n"
    else:
        # one file: the detailed block (basis, notes, a price row per model)
        lines: list[str] = []
        for r, rep, rows in files:
            lines.append(f"{printable(r.path)} — {printable(kind_label(r.analysis))}")
            if rep is None:
                lines.append("  tokens: not counted (tokenizer unavailable)")
            else:
                lines.append(f"  tokens every session: {rep.session:,}")
                lines.append(f"  tokens once invoked:  {rep.invoke:,}")
                if rep.basis:
                    lines.append(f"  basis: {printable(rep.basis)}")
                for note in getattr(rep, "notes", ()) or ():
                    lines.append(f"  note: {printable(note)}")
            if rows:
                lines.extend(_price_table(rows))
            elif rep is not None:
                lines.append("  prices: not available")
            lines.append("")
        if not files:
            lines.append("No files to measure.")
        text = "\n".join(lines).rstrip("\n") + "\n"
    if args.format != "json":
        extra = config_lines(config_summary(results))
        if extra:
            text += "\n".join(extra) + "\n"
    try:
        _emit(text, getattr(args, "output", None))
    except OSError as exc:
        _error(f"{args.output}: cannot write: {exc.strerror or exc}")
        return EXIT_ERROR
    return EXIT_ERROR if errors else EXIT_OK


def _known_rules():
    """The bundled rules plus the user rules that load from the working directory's project
    configuration (``rules-paths``). Load errors are printed once, on stderr, by
    :func:`project_settings`; a user pattern rule that did not compile is not listed."""
    from unveil.core.checks.directives import CHECK_NAME, load_pattern_rules
    from unveil.core.rules import RuleSet, bundled_rules, load_rule_files

    base = bundled_rules()
    settings = project_settings(None, {}, set())
    if not settings.rules_paths:
        return base
    paths = tuple(settings.rules_paths)
    user = load_rule_files([Path(p) for p in paths], into=RuleSet(rules=dict(base.rules)))
    compiled = {r.id for r in load_pattern_rules(paths).rules}
    for rid, rule in list(user.rules.items()):
        if rid not in base.rules and rule.check == CHECK_NAME and rid not in compiled:
            del user.rules[rid]
    return user


def cmd_rules(args: argparse.Namespace) -> int:
    import json

    rules = list(_known_rules())
    if args.format == "json":
        data = [
            {"id": r.id, "name": r.name, "category": r.category, "severity": r.severity.label,
             "summary": r.summary, "url": r.doc_url}
            for r in rules
        ]
        _emit(json.dumps(data, ensure_ascii=False, indent=2) + "\n", None)
        return EXIT_OK
    header = ("ID", "CATEGORY", "SEVERITY", "NAME")
    rows = [(r.id, r.category, r.severity.label, r.name) for r in rules]
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3] for row in [header, *rows]]
    _emit("\n".join(lines) + "\n", None)
    return EXIT_OK


def _show_example(text: str) -> list[str]:
    return ["    " + printable(line) for line in (text.rstrip("\n").split("\n") or [""])]


def cmd_explain(args: argparse.Namespace) -> int:
    rules = _known_rules()
    rule = rules.get(args.rule) or rules.get(args.rule.upper())
    if rule is None:
        by_name = {r.name: r for r in rules}
        rule = by_name.get(args.rule.lower())
    if rule is None:
        _error(f"unknown rule {args.rule!r} (see `unveil rules`)")
        return EXIT_ERROR
    lines = [
        f"{rule.id} {rule.name}",
        f"category: {rule.category} · default severity: {rule.severity.label}",
        "",
        rule.summary,
    ]
    if rule.description.strip():
        lines += ["", rule.description.strip()]
    if rule.references:
        lines += ["", "References:"] + [f"  - {ref}" for ref in rule.references]
    for title, examples in (("Fires on", rule.bad), ("Stays quiet on", rule.good)):
        for i, ex in enumerate(examples):
            where = f" (line {ex.line})" if ex.line else ""
            lines += ["", f"{title}{where}:"] + _show_example(ex.text)
    lines += ["", f"Docs: {rule.doc_url}"]
    _emit("\n".join(lines) + "\n", None)
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="unveil",
        description="Reveal hidden instructions in AI agent markdown files and show their token cost.",
    )
    parser.add_argument("--version", action="version", version=f"unveil {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server over stdio")
    serve.add_argument("--stdio", action="store_true", help="use stdio (the default and only transport)")

    def rule_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--select", action="append", metavar="RULES",
                       help="only these rule ids or categories (comma-separated, repeatable)")
        p.add_argument("--ignore", action="append", metavar="RULES",
                       help="skip these rule ids or categories (comma-separated, repeatable)")
        p.add_argument("--severity", action="append", metavar="RULE=LEVEL",
                       help="override a rule's or category's severity, e.g. HID020=error")
        p.add_argument("--no-inline-suppressions", action="store_true",
                       help="ignore <!-- unveil-ignore… --> comments (audit files you do not trust)")

    def config_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--isolated", action="store_true",
                       help="ignore all project configuration (.unveil.toml, [tool.unveil]): scan a repository "
                            "you do not trust with the defaults")
        p.add_argument("--config", metavar="FILE",
                       help="use this configuration file instead of searching for .unveil.toml / pyproject.toml")

    def kind_option(p: argparse.ArgumentParser) -> None:
        p.add_argument("--kind", action="append", metavar="GLOB=KIND",
                       help="treat files matching GLOB as kind KIND, e.g. 'docs/agents/*.md=claude-agent' "
                            "(repeatable; checked before the built-in patterns)")

    check = sub.add_parser("check", help="scan files and folders for hidden content")
    check.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders to scan for agent files")
    check.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    check.add_argument("--fail-on", choices=FAIL_ON, default="error",
                       help="exit 1 when a finding is at or above this severity (default: error)")
    rule_options(check)
    kind_option(check)
    config_options(check)
    check.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                       help="colour the text format (auto: only on a terminal, unless NO_COLOR is set)")

    cost = sub.add_parser("cost", help="tokens every session / once invoked and price per model")
    cost.add_argument("paths", nargs="+", metavar="PATH")
    cost.add_argument("--format", choices=("text", "json"), default="text")
    cost.add_argument("--models", action="append", metavar="A,B",
                      help="models to price, by id or display name (comma-separated)")
    cost.add_argument("--prices-file", metavar="FILE", help="TOML price table overriding the bundled one")
    kind_option(cost)
    config_options(cost)
    cost.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")

    rules = sub.add_parser("rules", help="list the bundled rules")
    rules.add_argument("--format", choices=("text", "json"), default="text")

    explain = sub.add_parser("explain", help="show a rule's documentation and examples")
    explain.add_argument("rule", metavar="RULE", help="rule id (e.g. HID001) or name")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "serve" and not ({"-h", "--help"} & set(argv[1:])):
        from unveil.lsp.server import run

        return run(argv[1:])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="unveil: %(levelname)s: %(message)s")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return int(exc.code or 0)
    handlers = {"check": cmd_check, "cost": cmd_cost, "rules": cmd_rules, "explain": cmd_explain}
    handler = handlers.get(args.command)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - an internal failure is not "findings found"
        log.debug("internal error", exc_info=True)
        detail = " ".join(str(exc).split())[:300]
        _error(f"internal error: {type(exc).__name__}: {detail} (this is a bug in unveil; "
               "rerun with UNVEIL_DEBUG=1 for the traceback)")
        if os.environ.get("UNVEIL_DEBUG"):
            import traceback

            traceback.print_exc()
        return EXIT_INTERNAL
