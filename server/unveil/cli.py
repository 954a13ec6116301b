"""The ``unveil`` command (also ``python -m unveil``).

Commands::

    unveil serve [--stdio]                 language server over stdio (unveil.lsp.server.run)
    unveil check PATH... [options]         scan files and folders ('-': stdin); text, JSON, SARIF 2.1.0,
                                           GitHub annotations, GitLab Code Quality or a Markdown summary;
                                           --fix/--diff apply or show the safe fixes (core/fixes.py)
    unveil cost PATH... [options]          tokens per session / once invoked and price per model
    unveil rules [--format text|json]      the bundled rules
    unveil explain RULE                    one rule's documentation and examples
    unveil lock|baseline|badge …           review lock, baselines, badge (unveil.commands_lock)
    unveil --version

Exit status of ``check``: 0 when no finding is at or above ``--fail-on`` (default ``error``),
1 when one is, 2 on a usage error or when a path could not be read (the other paths are still
scanned and reported). With ``--diff``: 1 when there is a fix to show, else 0. ``cost``, ``rules`` and ``explain`` exit 0, or 2 on usage and I/O errors.
Any command exits 3 when unveil itself fails (an internal error: one line on stderr).

Files are read as bytes and decoded as strict UTF-8; a file with invalid UTF-8 is decoded with
``surrogateescape`` so no byte is lost (each bad byte becomes one code point U+DC80..U+DCFF,
which the Unicode check reports). Folders are walked recursively for every regular file
:func:`unveil.core.kinds.is_agent_file` accepts (any ``.md``/``.mdc``/``.markdown`` file and the
rule files of known kinds such as ``.cursorrules``), skipping ``.git``, ``node_modules``,
``.venv`` and other tool caches, what ``.gitignore`` / ``.git/info/exclude`` ignore and the
``exclude`` / ``extend-exclude`` globs (:mod:`unveil.core.discovery`, docs/discovery.md); named
pipes, sockets and devices are never opened (one named on the command line is an error, exit 2).

A broken price table (unknown ``--models`` name, unreadable or invalid ``--prices-file``, or
the same in the project configuration) is reported on stderr and exits 2 in ``cost`` and
``check``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Iterator, Mapping, NamedTuple, Sequence

from unveil import __version__
from unveil.core import scope
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


_NO_LAYER: Mapping = MappingProxyType({})
"""The command-line layer when there is none (one object: a run's :class:`SearchMemo` key is
computed once for it)."""


def project_settings(
    path: str | None,
    layer: dict | None,
    seen: set[str],
    *,
    isolated: bool = False,
    config_file: str | None = None,
    out: dict | None = None,
    memo=None,
) -> Settings:
    """Settings for one file: defaults < nearest ``.unveil.toml`` / ``pyproject.toml``
    ``[tool.unveil]`` (:mod:`unveil.core.project`; searched from the file, else the working
    directory; none with ``isolated``, ``config_file`` instead of the search) < the command-line
    ``layer``. Config and rule-file problems are printed on stderr once each (``seen``) and never
    change the exit status. ``out["config"]`` receives the :class:`~unveil.core.project.ProjectConfig` used.
    ``memo``: a :class:`~unveil.core.project.SearchMemo` shared by the files of one run."""
    from unveil.core import project

    settings, cfg = project.settings_for(
        path,
        [layer or _NO_LAYER],
        fallback_dir=None if path else Path.cwd(),
        isolated=isolated,
        config_file=config_file,
        memo=memo,
    )
    if out is not None:
        out["config"] = cfg
    problems = list(cfg.errors) if cfg is not None else []
    if settings.rules_paths:
        from unveil.core.checks.directives import load_pattern_rules  # only then: it compiles rules

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
    msg = (
        f"Project configuration {shown}, below the repository root, turns off or lowers security rules "
        f"({', '.join(cats)}) for the files in its folder, this one included: "
        + "; ".join(info["effects"])
        + ". Run with --isolated to scan without it"
    )
    return info, [Finding(NESTED_CONFIG_RULE, Severity.WARNING, 0, 0, msg, category="internal")]


NESTED_CONFIG_RULE = "UNV021"


def analyze_paths(
    paths: Sequence[str],
    settings: Settings,
    layer: dict | None = None,
    collected: Collected | None = None,
    progress=None,
    *,
    isolated: bool = False,
    config_file: str | None = None,
    jobs: int | None = None,
    use_cache: bool = False,
    memo=None,
) -> tuple[list[FileResult], list[str]]:
    """Read and analyse every file ``paths`` expand to (or the files of ``collected``).
    Returns the results and the error messages (each also logged to stderr by the caller).
    With ``layer`` (the command-line settings as a camelCase mapping), each file's settings
    come from :func:`project_settings` instead of ``settings`` (none with ``isolated``; only
    ``config_file`` with it given), found once per folder. ``progress(shown)`` is called after
    each file.

    Each result's ``analysis`` is a :class:`unveil.core.results.FileReport` (what the reporters
    print, without the markdown layer). With ``use_cache`` (``unveil check`` without
    ``--no-cache``), a report is reused from the file cache (:mod:`unveil.core.cache`) when
    the file, the files its ``@imports`` read, the rules, the settings and unveil are
    unchanged, and new reports are stored. The others are analysed in a pool of ``jobs``
    processes (:func:`_jobs`: by default one per CPU, at most 8, when at least
    :data:`POOL_MIN_FILES` files are to be analysed; ``1``: in this process), largest file
    first; results and errors keep the order of the files. The project configuration summary
    and ``UNV021`` (:func:`_config_info`) are added here, after the cache, every run. ``memo``:
    the run's :class:`~unveil.core.project.SearchMemo` (a new one by default): each folder's
    configuration is searched for once, and each configuration merged and hashed once.

    The files are read :data:`READAHEAD_WINDOW` at a time; from :data:`READAHEAD_MIN_FILES`
    files on, once a window's reads have waited on the disk (:data:`READ_WAIT_PER_FILE`), the
    kernel is asked to read the next window's files and each window's cache entries ahead
    (:func:`unveil.core.safe_read.will_need`): a warm run whose files have left the page cache
    then waits once for many reads, not once per file, and one whose files are in the page
    cache pays nothing for it."""
    from unveil.core import cache, project
    from unveil.core import results as res

    keys: dict[int, tuple[Settings, str]] = {}  # id(settings) -> (settings, its cache key part)

    seen: set[str] = set()
    collected = collected if collected is not None else collect(paths, kind_map=settings.kind_map)
    memo = memo if memo is not None else project.SearchMemo(listed=collected.listed)
    errors = list(collected.errors)
    use_cache = use_cache and cache.enabled()
    slots: list = []  # per file: FileReport, an error message, or None (to analyse)
    configs: list = []  # per file: the ProjectConfig used (layer given)
    shown_of: list[str] = []
    todo: list[tuple] = []
    by_folder: dict[str, tuple | str] = {}  # folder -> (settings, config, settings key) or an error message
    jobs_: list[tuple] = []  # per file: (index, shown, absolute, its folder's entry or an error message)
    for shown, absolute in collected.files:
        index = len(slots)
        shown_of.append(shown)
        configs.append(None)
        slots.append(None)
        folder = os.path.dirname(str(absolute))
        entry = by_folder.get(folder)
        if entry is None:
            try:
                used: dict = {}
                file_settings = (  # searched from the folder: the same result, and no stat of the file
                    settings
                    if layer is None
                    else project_settings(
                        folder, layer, seen, isolated=isolated, config_file=config_file, out=used, memo=memo
                    )
                )
                if use_cache and id(file_settings) not in keys:
                    keys[id(file_settings)] = (file_settings, res.settings_key(file_settings))
                entry = (file_settings, used.get("config"), keys[id(file_settings)][1] if use_cache else "")
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # noqa: BLE001 - one file never stops the rest
                log.exception("settings of %s failed", shown)
                entry = f"analysis failed: {type(exc).__name__}: {exc}"
            by_folder[folder] = entry
        jobs_.append((index, shown, absolute, entry))

    def fetch(job: tuple) -> tuple:
        """``(job, bytes or the OSError of reading them, cache key)``."""
        absolute, entry = job[2], job[3]
        try:
            data = safe_read.read_bytes(absolute, checked=True)  # collect() took regular files only
        except OSError as exc:
            return job, exc, ""
        if not use_cache or isinstance(entry, str):
            return job, data, ""
        return job, data, res.file_key(str(absolute), data, entry[2])

    import time

    from unveil.core import safe_read

    if use_cache:
        res.code_hash()  # (once per process: not to be timed as a read below)
    step = READAHEAD_WINDOW
    ahead = False  # set once a window's reads have waited on the disk
    with _collector_paused():  # what is loaded here lives until the report is written
        for w0 in range(0, len(jobs_), step):
            if ahead:  # the next window's files, while this one is read
                safe_read.will_need([str(job[2]) for job in jobs_[w0 + step : w0 + 2 * step]])
            began = time.perf_counter()
            fetched = [fetch(job) for job in jobs_[w0 : w0 + step]]
            if not ahead and len(jobs_) >= READAHEAD_MIN_FILES:
                size = sum(len(f[1]) for f in fetched if isinstance(f[1], bytes))
                if time.perf_counter() - began > len(fetched) * READ_WAIT_PER_FILE + size / READ_BYTES_PER_SECOND:
                    ahead = True
                    safe_read.will_need([str(job[2]) for job in jobs_[w0 + step : w0 + 2 * step]])
            if ahead and use_cache:
                safe_read.will_need([p for p in (cache.entry_path("files", key) for _, _, key in fetched if key) if p])
            for (index, shown, absolute, entry), data, key in fetched:
                if isinstance(data, OSError):
                    slots[index] = f"{shown}: cannot read: {data.strerror or data}"
                    if progress is not None:
                        progress(shown)
                    continue
                if isinstance(entry, str):
                    slots[index] = f"{shown}: {entry}"
                    continue
                file_settings, configs[index], _part = entry
                hit = res.load_report(key, data)
                if hit is not None:
                    hit.settings = file_settings
                    slots[index] = hit
                    if progress is not None:
                        progress(shown)
                    continue
                todo.append((index, shown, str(absolute), data, file_settings, key, _part))
        fetched = data = None  # (the last window's bytes: not to be inherited by the pool)
        _settle()  # (before the collector is back on: its first pass would traverse them all)
    if todo:
        _compiled_patterns()  # before the analysis modules are imported (and the pool forks)
    n_jobs = _jobs(jobs, len(todo))
    if n_jobs > 1:  # each worker reads its files again: no process holds every file's bytes
        todo = [(*t[:3], _ToRead(len(t[3]), t[6]), *t[4:6]) for t in todo]
    else:
        todo = [t[:6] for t in todo]
    outcomes = _pool_map(todo, n_jobs) if n_jobs > 1 else (_analyze_task(t) for t in todo)
    settings_of = {t[0]: t[4] for t in todo}
    for index, shown, outcome in outcomes:
        if progress is not None:
            progress(shown)
        if isinstance(outcome, res.FileReport):
            outcome.settings = settings_of[index]  # not pickled: a pool worker's report comes without
        slots[index] = outcome
    results: list[FileResult] = []
    info_of: dict[int, tuple] = {}
    for index, outcome in enumerate(slots):
        if isinstance(outcome, str):
            errors.append(outcome)
            continue
        if outcome is None:  # not reached: every file has a report or an error
            continue
        if layer is not None:
            cfg = configs[index]
            got = info_of.get(id(cfg))
            if got is None:
                got = info_of[id(cfg)] = _config_info(cfg, outcome.path or "", isolated)
            info, extra = got
            outcome.extra["config"] = info
            if extra:
                from unveil.core.analyze import add_findings

                add_findings(outcome, extra)
        results.append(FileResult(shown_of[index], outcome))
    if collected.outside:
        from unveil.core.analyze import refused

        for shown, absolute, target in collected.outside:
            file_settings = (
                settings
                if layer is None
                else project_settings(str(absolute), layer, seen, isolated=isolated, config_file=config_file, memo=memo)
            )
            try:
                shown_target = os.readlink(absolute)
            except OSError:
                shown_target = str(target)
            results.append(FileResult(shown, refused(str(absolute), printable(shown_target), file_settings)))
        results.sort(key=lambda r: r.path)
    _settle()
    return results, errors


POOL_MIN_FILES = 8
"""Fewer files to analyse than this are analysed in the calling process (a pool costs more than it gains)."""

READAHEAD_MIN_FILES = 16
"""From this many files on, :func:`analyze_paths` may ask the kernel to read the files and their
cache entries ahead (:func:`unveil.core.safe_read.will_need`)."""

READAHEAD_WINDOW = 64
"""Files :func:`analyze_paths` reads in turn while the kernel reads the next as many ahead."""

READ_WAIT_PER_FILE = 25e-6
READ_BYTES_PER_SECOND = 400e6
"""A window of files that took longer to read and hash than :data:`READ_WAIT_PER_FILE` seconds
a file plus its bytes at :data:`READ_BYTES_PER_SECOND` has waited on the disk: from then on the
reads are advised ahead. Measured on this project's machine: 4–9 µs a small file from the page
cache, 80–100 µs from the disk (``benchmarks/profile.md``, issue 10, session 11)."""

POOL_MAX_JOBS = 8


def _jobs(requested: int | None, n_files: int) -> int:
    """How many processes analyse ``n_files`` files: ``requested`` (at most one per file), else
    one per CPU this process may run on, at most :data:`POOL_MAX_JOBS`, and 1 below
    :data:`POOL_MIN_FILES` files or on one CPU."""
    if requested is not None and requested > 0:
        return max(1, min(requested, n_files))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if n_files < POOL_MIN_FILES or cpus < 2:
        return 1
    return min(cpus, POOL_MAX_JOBS, n_files)


class _ToRead(NamedTuple):
    """In a task of :func:`analyze_paths` for the pool, in place of the file's bytes: the worker
    reads the file again (:func:`_analyze_task`). ``size``: the bytes the first read gave (the
    largest file goes first); ``part``: the settings' part of the cache key
    (:func:`unveil.core.results.file_key`), ``""`` without the cache."""

    size: int
    part: str


def _analyze_task(task) -> tuple[int, str, object]:
    """Analyse one file (a task of :func:`analyze_paths`): ``(index, shown, FileReport)`` or
    ``(index, shown, error message)``. Stores the report in the file cache under its key (when
    it has one), with the SHA-256 of every file its ``@imports`` read
    (:func:`unveil.core.results.analyse_file`).

    ``task``: ``(index, shown, absolute path, bytes, settings, cache key)``, or with a
    :class:`_ToRead` for the bytes (a pool worker's task): the file is read here, and its key
    made from the bytes read (a file changed since the first read is analysed and stored as
    it is now)."""
    from unveil.core import results as res

    index, shown, absolute, data, file_settings, key = task
    if isinstance(data, _ToRead):
        from unveil.core import safe_read

        part = data.part
        try:
            data = safe_read.read_bytes(absolute)
        except OSError as exc:
            return index, shown, f"{shown}: cannot read: {exc.strerror or exc}"
        if key:
            key = res.file_key(absolute, data, part)
    try:
        report = res.analyse_file(absolute, data, file_settings, key)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - analyze() should never raise; one file never stops the rest
        log.exception("analysis of %s failed", shown)
        return index, shown, f"{shown}: analysis failed: {type(exc).__name__}: {exc}"
    return index, shown, report


def _pool_map(todo: list, n_jobs: int):
    """:func:`_analyze_task` over ``todo`` in ``n_jobs`` forked processes, largest file first;
    yields outcomes as they finish (the caller puts them back in file order). The tokenizer and
    the bundled rules are loaded first, so every worker inherits them. A worker that dies (e.g.
    killed for memory) turns each file it had not finished into an error outcome (exit status
    2), never a hang or a silent gap. Without ``fork`` (Windows, macOS' default is not used):
    one process."""
    import multiprocessing

    from unveil.core import tokens
    from unveil.core.checks.directives import load_pattern_rules

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # no fork: one process
        yield from (_analyze_task(t) for t in todo)
        return
    tokens.wait()
    load_pattern_rules(())
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from unveil.core import heap

    heap.trim()  # what the parent freed (the files' bytes, the tokenizer's load) is not the workers' to inherit

    order = sorted(todo, key=lambda t: -(t[3].size if isinstance(t[3], _ToRead) else len(t[3])))
    with ProcessPoolExecutor(n_jobs, mp_context=ctx) as pool:
        futures = {pool.submit(_analyze_task, t): t for t in order}
        for fut in as_completed(futures):
            index, shown = futures[fut][0], futures[fut][1]
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker that died (BrokenProcessPool) loses no file silently
                yield index, shown, f"{shown}: analysis failed: {type(exc).__name__}: {exc}"


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
    from unveil.core.selectors import UnknownSelector, expand

    data: dict = {}

    def norms(name: str) -> list[str]:
        try:
            return expand(name)  # ids, categories, id prefixes (HID), rule names
        except UnknownSelector as exc:
            raise UsageError(str(exc)) from None

    for key in ("select", "ignore"):
        values = _split(getattr(args, key, None))
        if values:
            data[key] = [x for v in values for x in norms(v)]
    sev = {}
    for item in _split(getattr(args, "severity", None)):
        name, sep, level = item.partition("=")
        if not sep:
            raise UsageError(f"--severity expects RULE=LEVEL, got {item!r}")
        try:
            Severity.parse(level)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for rid in norms(name):
            sev[rid] = level
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
    if getattr(args, "documentation", None):
        data["documentation"] = args.documentation
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
    scan = _scan(args, settings)  # stdin, discovery filters, --diff-base, progress, documentation policy
    if isinstance(scan, int):
        return scan
    results, errors = scan.results, scan.errors
    if getattr(args, "baseline", None):
        from unveil.commands_lock import apply_baseline

        if apply_baseline(args.baseline, results) is not None:
            return EXIT_ERROR
    bad_prices = _file_price_errors(results, DEFAULT_SETTINGS)
    for e in errors + bad_prices:
        _error(e)
    fixed = None
    if args.fix or args.diff:
        fixed = _apply_fixes(args, scan)
        if isinstance(fixed, int):
            return fixed
        results = scan.results
    if args.diff:
        report = fixed
    elif args.fix and scan.stdin is not None:
        report = ""  # the fixed text went to stdout
    elif args.statistics:
        from unveil.reporters import text as reporter

        report = reporter.statistics(results)
    elif args.format == "json":
        from unveil.reporters import json as reporter

        report = reporter.render(results)
    elif args.format == "sarif":
        from unveil.reporters import sarif as reporter

        report = reporter.render(results, notifications=errors + bad_prices)
    elif args.format == "github":
        from unveil.reporters import annotations as reporter

        report = reporter.render(results, errors + bad_prices)
    elif args.format == "gitlab":
        from unveil.reporters import gitlab as reporter

        report = reporter.render(results)
    elif args.format == "markdown":
        from unveil.reporters import summary as reporter

        report = reporter.render(results, notes=scan.notes())
    else:
        from unveil.reporters import text as reporter

        colour = False if args.output else _use_colour(args.color, sys.stdout)
        report = reporter.render(results, colour=colour, errors=len(errors), quiet=args.quiet, notes=scan.notes())
    try:
        _emit(report, args.output)
    except OSError as exc:
        _error(f"{args.output}: cannot write: {exc.strerror or exc}")
        return EXIT_ERROR
    if errors or bad_prices:
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if report else EXIT_OK
    if args.fail_on == "never":
        return EXIT_OK
    threshold = Severity.parse(args.fail_on)
    failing = any(
        f.severity <= threshold and f.data.get("baselineState") != "unchanged"
        for r in results
        for f in r.analysis.findings
    )
    return EXIT_FINDINGS if failing else EXIT_OK


# --------------------------------------------------------------------------- check: discovery, stdin, fixes


@dataclass
class _Scan:
    """One ``check`` run's inputs and results: ``results``/``errors`` as from
    :func:`analyze_paths`, ``collected`` (files, ignored counts, configs applied), the ``stdin``
    text when ``-`` was given, and the per-file settings used (for re-analysis after fixes)."""

    results: list[FileResult]
    errors: list[str]
    collected: Collected
    stdin: str | None = None
    stdin_result: FileResult | None = None
    configs: list[str] = field(default_factory=list)
    changed_since: str | None = None

    def notes(self) -> list[str]:
        """What shaped the scan besides the paths (text format footer): configuration files
        applied, files left out by ignore files and excludes, the documentation policy."""
        out = []
        # the project configuration applied (and what it turns off) is said by the reporters'
        # config summary (unveil.reporters.common.config_lines), once
        ign = self.collected.ignored
        if ign.get("gitignore"):
            out.append(
                f"Left out by .gitignore / .git/info/exclude: {_plural(ign['gitignore'], 'file or folder', 'files or folders')}"
            )
        if ign.get("exclude"):
            out.append(f"Left out by exclude globs: {_plural(ign['exclude'], 'file or folder', 'files or folders')}")
        if self.changed_since:
            out.append(f"Only files changed since {self.changed_since} (git)")
        lowered = dropped = docs = 0
        modes = set()
        for r in self.results:
            d = r.analysis.extra.get("documentation")
            if d:
                modes.add(d["mode"])
                lowered += d["lowered"]
                dropped += d["dropped"]
                docs += 1 if (d["lowered"] or d["dropped"]) else 0
        if lowered:
            out.append(
                f"Documentation (Markdown that is not an agent file): {_plural(lowered, 'risky-directive finding')} "
                f'in visible text lowered to info in {_plural(docs, "file")} (setting documentation = "info"; '
                f"see docs/discovery.md)"
            )
        if dropped:
            out.append(
                f"Documentation (Markdown that is not an agent file): {_plural(dropped, 'finding')} of risky-directive "
                f'phrases in visible text and token budgets not reported (setting documentation = "hidden"; '
                f"--documentation full shows them)"
            )
        return out


def _split_globs(values: Iterable[str] | None) -> list[str]:
    """``--exclude`` values split on commas outside ``{…}`` (``{a,b}/**`` stays one glob)."""
    out: list[str] = []
    for v in values or ():
        depth, cur = 0, ""
        for ch in v:
            depth += (ch == "{") - (ch == "}")
            if ch == "," and depth <= 0:
                out.append(cur)
                cur = ""
            else:
                cur += ch
        out.append(cur)
    return [g.strip() for g in out if g.strip()]


def _read_stdin() -> str:
    data = (
        sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8", "surrogateescape")
    )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def _git_changed(ref: str, cwd: Path) -> set[Path] | str:
    """Absolute paths of files changed between ``ref`` and the working tree (``git diff
    --name-only``, deletions left out) plus untracked files not ignored; or an error message.
    Git runs with ``core.fsmonitor`` off and without external diff or textconv drivers, so a
    repository's own configuration runs no program."""
    import subprocess

    git = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false"]
    try:
        top = subprocess.run(
            git + ["rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, text=True, check=False
        )
        if top.returncode != 0:
            return f"--diff-base: not in a git repository ({top.stderr.strip() or 'git rev-parse failed'})"
        root = Path(top.stdout.strip())
        diff = subprocess.run(
            git + ["diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv", "--diff-filter=d", ref, "--"],
            cwd=root,
            capture_output=True,
            check=False,
        )
        if diff.returncode != 0:
            return f"--diff-base {ref}: {diff.stderr.decode('utf-8', 'replace').strip() or 'git diff failed'}"
        new = subprocess.run(
            git + ["ls-files", "--others", "--exclude-standard", "-z"], cwd=root, capture_output=True, check=False
        )
    except OSError as exc:
        return f"--diff-base: cannot run git: {exc.strerror or exc}"
    names = [n for n in (diff.stdout + b"\0" + new.stdout).split(b"\0") if n]
    return {(root / os.fsdecode(n)).absolute() for n in names}


def _progress(total: int):
    """A tqdm progress bar on stderr when stderr is a terminal and there are 20+ files, else
    ``(None, None)``. Returns ``(callback, close)``."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty or total < 20:
        return None, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(total=total, file=sys.stderr, unit="file", leave=False, desc="unveil")
    return (lambda shown: bar.update(1)), bar.close


_DISPLAY_KEYS = frozenset(
    {"prices", "pricesFile", "models", "inlayHints", "debounceMs", "claudeRatio", "workspaceScan"}
)
"""Configuration keys that change only how prices and hints are shown, not the findings."""


def _scan(args: argparse.Namespace, settings: Settings) -> _Scan | int:
    """Collect (stdin, files, folders with the discovery filters, ``--diff-base``), analyse
    with a progress bar, and apply each file's ``documentation`` policy."""
    from unveil.core import project
    from unveil.core.discovery import Filters, documentation_policy

    layer = getattr(args, "cli_layer", {})
    paths = list(args.paths)
    stdin_text = None
    if "-" in paths:
        if paths.count("-") > 1 or (args.fix and len(paths) > 1):
            _error("'-' (stdin) can be given once" + (", and alone with --fix" if args.fix else ""))
            return EXIT_ERROR
        paths.remove("-")
        stdin_text = _read_stdin()
    elif args.stdin_filename:
        _error("--stdin-filename needs '-' among the paths")
        return EXIT_ERROR
    cwd = Path.cwd()
    for bad in _split_globs(args.exclude) + _split_globs(args.extend_exclude):
        from unveil.core.discovery import glob_problem

        why = glob_problem(bad)
        if why:
            _error(f"exclude glob {bad!r} cannot match: it {why}")
            return EXIT_ERROR

    def filters(folder: Path) -> Filters:
        return Filters.for_root(
            folder,
            exclude=_split_globs(args.exclude) if args.exclude else None,
            extend_exclude=_split_globs(args.extend_exclude),
            cwd=cwd,
            gitignore=not args.no_gitignore,
            use_config=not getattr(args, "isolated", False),
        )  # --isolated: no project excludes

    collected = collect(paths, kind_map=settings.kind_map, filters=filters)
    changed_since = args.diff_base or args.changed_since
    if changed_since:
        changed = _git_changed(changed_since, cwd)
        if isinstance(changed, str):
            _error(changed)
            return EXIT_ERROR
        collected.files = [(shown, p) for shown, p in collected.files if p.absolute() in changed]
    tick, close = _progress(len(collected.files))
    memo = project.SearchMemo(listed=collected.listed)
    try:
        results, errors = analyze_paths(
            paths,
            settings,
            layer,
            collected=collected,
            progress=tick,
            isolated=getattr(args, "isolated", False),
            config_file=getattr(args, "config", None),
            jobs=getattr(args, "jobs", None),
            use_cache=not getattr(args, "no_cache", False),
            memo=memo,
        )
    finally:
        if close:
            close()
    scan = _Scan(results, errors, collected, changed_since=changed_since)
    if stdin_text is not None:
        _compiled_patterns()
        from unveil.core.analyze import analyze

        name = args.stdin_filename
        absolute = str((cwd / name).absolute()) if name else None
        file_settings = project_settings(absolute, layer, set()) if absolute else settings
        analysis = analyze(stdin_text, absolute, file_settings)
        scan.stdin = stdin_text
        scan.stdin_result = FileResult(name or "-", analysis)
        scan.results.insert(0, scan.stdin_result)
    seen_cfg: list[str] = [display_path(c, cwd.resolve()) for c in collected.configs]
    found: dict[str, object] = {}  # folder -> its nearest project configuration (searched once)
    for r in scan.results:
        a = r.analysis
        folder = os.path.dirname(os.path.abspath(a.path)) if a.path else None
        if folder is not None and folder not in found:
            found[folder] = project.find(folder, memo)
        cfg = found[folder] if folder is not None else None
        if cfg is not None and set(cfg.data) - _DISPLAY_KEYS:  # it changes what is scanned or reported
            shown = display_path(cfg.path, cwd.resolve())
            if shown not in seen_cfg:
                seen_cfg.append(shown)
        documentation_policy(a, getattr(a.settings, "documentation", "info"))
    scan.configs = seen_cfg
    return scan


def _write_fixed(target: Path, before: str, after: str) -> str | None:
    """Write ``after`` to ``target`` as UTF-8 with undecodable bytes restored
    (``surrogateescape``), unless the file no longer holds ``before``. Returns an error
    message or ``None``."""
    try:
        if target.read_bytes() != before.encode("utf-8", "surrogateescape"):
            return "changed while unveil was fixing it; not written"
        target.write_bytes(after.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None


def _apply_fixes(args: argparse.Namespace, scan: _Scan) -> str | int:
    """``--fix`` / ``--diff`` on every scanned file (and stdin): run :func:`unveil.core.fixes.fix_text`
    with each file's own settings; ``--diff`` returns the unified diffs (nothing is written);
    ``--fix`` writes each changed file back byte for byte (UTF-8, undecodable bytes restored),
    writes fixed stdin to stdout, re-analyses what it changed and returns ``""``. Summary on
    stderr. Returns an exit status on a write error."""
    _compiled_patterns()
    from unveil.core import fixes
    from unveil.core.analyze import analyze
    from unveil.core.discovery import documentation_policy

    unsafe = args.unsafe_fixes
    diffs: list[str] = []
    n_fixed = n_files = 0
    write_errors = []
    for i, r in enumerate(scan.results):
        a = r.analysis
        is_stdin = r is scan.stdin_result

        def findings_of(text: str, a=a):
            return analyze(text, a.path, a.settings).findings

        before = scan.stdin if is_stdin else a.text
        result = fixes.fix_text(before, findings_of, unsafe)
        if is_stdin and args.fix and not args.diff:
            _emit(result.text, None)
        if not result.changed:
            continue
        n_fixed += len(result.applied)
        n_files += 1
        if args.diff:
            diffs.append(fixes.unified_diff(r.path, before, result.text, escape=printable))
            continue
        if not is_stdin:
            error = _write_fixed(Path(a.path), before, result.text)
            if error:
                write_errors.append(f"{r.path}: {error}")
                continue
        new = analyze(result.text, a.path, a.settings)
        documentation_policy(new, getattr(new.settings, "documentation", "info"))
        scan.results[i] = FileResult(r.path, new)
    for e in write_errors:
        _error(e)
    left = (
        0
        if unsafe
        else sum(
            1
            for r in scan.results
            for f in r.analysis.findings
            if f.fixes and not any(fixes.is_safe(fix, f) for fix in f.fixes)
        )
    )
    verb = "would fix" if args.diff else "fixed"
    more = f"; {_plural(left, 'more fix', 'more fixes')} with --unsafe-fixes" if left else ""
    print(f"unveil: {verb} {_plural(n_fixed, 'finding')} in {_plural(n_files, 'file')}{more}", file=sys.stderr)
    if write_errors:
        return EXIT_ERROR
    return "".join(diffs)


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
            return ("≈" if approx and x else "") + format_usd(x)  # noqa: B023 - used in this iteration only

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
    results, errors = analyze_paths(
        args.paths, settings, getattr(args, "cli_layer", {}), isolated=args.isolated, config_file=args.config
    )
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
        [
            ws.file_entry(r.analysis, r.path, Path(r.analysis.path).absolute().as_uri() if r.analysis.path else "")
            for r in results
        ],
        Path.cwd().absolute().as_uri(),
        settings,
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
            [
                ws.file_entry(
                    r.analysis, printable(r.path), Path(r.analysis.path).absolute().as_uri() if r.analysis.path else ""
                )
                for r in results
            ],
            Path.cwd().absolute().as_uri(),
            settings,
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
    from unveil.core.rules import RuleSet, bundled_rules, load_rule_files

    base = bundled_rules()
    settings = project_settings(None, {}, set())
    if not settings.rules_paths:
        return base
    from unveil.core.checks.directives import CHECK_NAME, load_pattern_rules  # compiles: only for user rules

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
            {
                "id": r.id,
                "name": r.name,
                "category": r.category,
                "severity": r.severity.label,
                "summary": r.summary,
                "url": r.doc_url,
            }
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
        for ex in examples:
            where = f" (line {ex.line})" if ex.line else ""
            lines += ["", f"{title}{where}:"] + _show_example(ex.text)
    lines += ["", f"Docs: {rule.doc_url}"]
    _emit("\n".join(lines) + "\n", None)
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, got {value!r}")
    return n


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
        p.add_argument(
            "--select",
            action="append",
            metavar="RULES",
            help="only these rule ids, id prefixes (HID) or categories (comma-separated, repeatable)",
        )
        p.add_argument(
            "--ignore",
            action="append",
            metavar="RULES",
            help="skip these rule ids, id prefixes or categories (comma-separated, repeatable)",
        )
        p.add_argument(
            "--severity",
            action="append",
            metavar="RULE=LEVEL",
            help="override a rule's or category's severity, e.g. HID020=error",
        )
        p.add_argument(
            "--no-inline-suppressions",
            action="store_true",
            help="ignore <!-- unveil-ignore… --> comments (audit files you do not trust)",
        )

    def config_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--isolated",
            action="store_true",
            help="ignore all project configuration (.unveil.toml, [tool.unveil]): scan a repository "
            "you do not trust with the defaults",
        )
        p.add_argument(
            "--config",
            metavar="FILE",
            help="use this configuration file instead of searching for .unveil.toml / pyproject.toml",
        )

    def kind_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--kind",
            action="append",
            metavar="GLOB=KIND",
            help="treat files matching GLOB as kind KIND, e.g. 'docs/agents/*.md=claude-agent' "
            "(repeatable; checked before the built-in patterns)",
        )

    check = sub.add_parser("check", help="scan files and folders for hidden content")
    check.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, or folders to scan for agent files; '-' reads stdin"
    )
    check.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github", "gitlab", "markdown"),
        default="text",
        help="text (default), json, sarif (2.1.0), github (workflow-command annotations), "
        "gitlab (Code Quality JSON), markdown (a job summary: grade and tokens per file)",
    )
    check.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="error",
        help="exit 1 when a finding is at or above this severity (default: error)",
    )
    rule_options(check)
    kind_option(check)
    config_options(check)
    check.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text format (auto: only on a terminal, unless NO_COLOR is set)",
    )
    # ci branch: fixes, discovery, stdin and output options (see docs/discovery.md)
    check.add_argument(
        "--fix",
        action="store_true",
        help="apply the safe fixes (remove invisible characters, frontmatter fixes) in place",
    )
    check.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff instead of writing them (exit 1 if any)"
    )
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix/--diff, also apply fixes that change visible text or drop hidden content",
    )
    check.add_argument("--diff-base", metavar="REF", help="scan only files changed since the git ref REF")
    check.add_argument("--changed-since", metavar="REF", help="the same as --diff-base")
    check.add_argument(
        "--stdin-filename", metavar="NAME", help="the path stdin ('-') stands for: selects its kind and configuration"
    )
    check.add_argument("--quiet", "-q", action="store_true", help="print the findings only (text format)")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    check.add_argument(
        "--exclude",
        action="append",
        metavar="GLOBS",
        help="globs to leave out of folder scans, replacing the default skip list and "
        "the configuration's exclude (comma-separated, repeatable)",
    )
    check.add_argument(
        "--extend-exclude",
        action="append",
        metavar="GLOBS",
        help="globs to leave out of folder scans in addition (comma-separated, repeatable)",
    )
    check.add_argument(
        "--no-gitignore", action="store_true", help="do not honour .gitignore and .git/info/exclude in folder scans"
    )
    check.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help=f"analyse in N processes (default: one per CPU, up to {POOL_MAX_JOBS}, "
        f"when {POOL_MIN_FILES} or more files are to be analysed)",
    )
    check.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write unveil's cache (results per file, tokenizer, rules) in "
        "$UNVEIL_CACHE_DIR or the user cache directory",
    )
    check.add_argument(
        "--documentation",
        choices=("info", "hidden", "full"),
        help="what to report in Markdown that is not an agent file (default: info; see docs/discovery.md)",
    )

    cost = sub.add_parser("cost", help="tokens every session / once invoked and price per model")
    cost.add_argument("paths", nargs="+", metavar="PATH")
    cost.add_argument("--format", choices=("text", "json"), default="text")
    cost.add_argument(
        "--models", action="append", metavar="A,B", help="models to price, by id or display name (comma-separated)"
    )
    cost.add_argument("--prices-file", metavar="FILE", help="TOML price table overriding the bundled one")
    kind_option(cost)
    config_options(cost)
    cost.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")

    rules = sub.add_parser("rules", help="list the bundled rules")
    rules.add_argument("--format", choices=("text", "json"), default="text")

    explain = sub.add_parser("explain", help="show a rule's documentation and examples")
    explain.add_argument("rule", metavar="RULE", help="rule id (e.g. HID001) or name")
    check.add_argument("--baseline", metavar="FILE", help="findings in this baseline are known and do not fail")
    from unveil import commands_lock

    commands_lock.add_parsers(sub, emit=_emit, analyze_paths=analyze_paths)  # lock, baseline, badge
    return parser


GC_THRESHOLD = scope.GC_THRESHOLD
"""The collector's thresholds for a command-line run (:data:`unveil.core.scope.GC_THRESHOLD`)."""


def _compiled_patterns() -> None:
    """The compiled patterns of the user cache in place (:func:`unveil.core.rxcache.install`,
    idempotent; a no-op when the cache is off): called before this process first imports the
    analysis modules, whose patterns then load instead of compiling. ``unveil check`` calls it
    only once it has a file to analyse: a run the result cache answers whole never imports
    ``regex`` nor reads the table (20 ms of a warm run of the corpus, session 18)."""
    from unveil.core import rxcache

    rxcache.install()


_ONE_SHOT = False
"""Whether this process runs one command and exits (set by :func:`console_main`)."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (back on after it, if it was on). For the
    loading of cached reports: thousands of objects that stay alive until the report is
    written, no garbage cycles among them, and every collection meanwhile traverses all of them
    again (a warm ``unveil check`` of the corpus's 3,349 files: 9 collections, 10 ms).
    Reference counting still frees everything else."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _settle() -> None:
    """In a process that runs one command and exits (:data:`_ONE_SHOT`), move every object alive
    now to the collector's permanent generation (``gc.freeze``): the reports a scan loaded or
    made live until the process exits, and a collection while the report is written traversed
    them all (one of 39 ms in a warm ``unveil check --format json`` of the corpus,
    ``benchmarks/profile.md``, issue 10, session 18). Elsewhere (tests, a caller of
    :func:`main` in a longer-lived process) nothing: frozen objects are never freed."""
    if _ONE_SHOT:
        import gc

        gc.freeze()


def console_main() -> int:
    """The ``unveil`` command and ``python -m unveil`` (through :func:`unveil.__main__.main`, which
    imports this module with the collector off): :func:`main` in a process of its own, with
    fewer collections (the objects made by the imports are frozen, never scanned again, the
    first generation holds :data:`GC_THRESHOLD` objects, and the collector is on). Not for callers that run
    :func:`main` inside a longer-lived process (tests): frozen objects are never freed. The
    language server (``serve``) sets the same thresholds itself when it starts
    (:func:`unveil.lsp.memory.fewer_collections`), and collects in full when idle."""
    import gc

    global _ONE_SHOT
    argv = sys.argv[1:]
    if not (argv and argv[0] == "serve"):
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLD)
        gc.enable()  # (the entry point, unveil/__main__.py, imported this module with it off)
        _ONE_SHOT = True
    return main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "serve" and not ({"-h", "--help"} & set(argv[1:])):
        from unveil.lsp import memory

        memory.pause_collections()  # until the first diagnostics are out (lsp/memory.py)
        from unveil.core import rxcache

        rxcache.install()  # before the server imports the checks: their patterns load, not compile
        from unveil.core import codecache

        codecache.install(
            codecache.SERVER_MODULES
        )  # before pygls imports lsprotocol: its generated methods load, not compile
        from unveil.lsp.server import run

        return run(argv[1:])
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="unveil: %(levelname)s: %(message)s")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help/--version
        return int(exc.code or 0)
    handlers = {"check": cmd_check, "cost": cmd_cost, "rules": cmd_rules, "explain": cmd_explain}
    from unveil.commands_lock import HANDLERS

    handlers.update(HANDLERS)
    handler = handlers.get(args.command)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    no_cache = getattr(args, "no_cache", False)
    saved = os.environ.get("UNVEIL_NO_CACHE")
    if no_cache:  # unveil.core.cache reads it; pool workers inherit it
        os.environ["UNVEIL_NO_CACHE"] = "1"
    else:
        from unveil.core import codecache

        codecache.install(codecache.CLI_MODULES)  # the analysis' dataclass methods: loaded, not compiled
        if args.command != "check":  # (check loads them once it has a file to analyse)
            _compiled_patterns()
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - an internal failure is not "findings found"
        log.debug("internal error", exc_info=True)
        detail = " ".join(str(exc).split())[:300]
        _error(
            f"internal error: {type(exc).__name__}: {detail} (this is a bug in unveil; "
            "rerun with UNVEIL_DEBUG=1 for the traceback)"
        )
        if os.environ.get("UNVEIL_DEBUG"):
            import traceback

            traceback.print_exc()
        return EXIT_INTERNAL
    finally:
        if no_cache:
            if saved is None:
                os.environ.pop("UNVEIL_NO_CACHE", None)
            else:
                os.environ["UNVEIL_NO_CACHE"] = saved
