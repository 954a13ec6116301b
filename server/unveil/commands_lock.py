"""The ``lock``, ``baseline`` and ``badge`` subcommands (registered by :mod:`unveil.cli`).

Commands::

    unveil lock init [PATH…] [--accept FP|RULE]… [--reason TEXT] [--reviewer WHO]
    unveil lock verify [--base REF] [--format text|json|sarif|github] [-o FILE]
    unveil lock diff PATH [--base REF]
    unveil lock approve PATH… --reason TEXT [--reviewer WHO]
    unveil lock history PATH [--ledger] [--format text|json]
    unveil baseline write FILE [PATH…]
    unveil badge [PATH…] [--svg FILE] [--json FILE] [--check]

Exit status: 0 when everything matches (``verify``), nothing differs (``diff``) or the badge files
are current (``badge --check``); 1 on a change, a new unreviewed or a removed agent file, a refused
``init`` (error-level security findings not accepted), a broken ledger chain or a stale badge;
2 on a usage error or bad input (a lock that does not parse, a path outside the repository, a git
ref that does not exist, no git where git is needed, an unwritable file). Nothing is written when
a command fails; files are written atomically.

The repository root is ``git rev-parse --show-toplevel`` of the working directory, or the working
directory itself when git is missing or it is not a repository (``init``, ``verify`` without
``--base``, ``approve`` with ``--reviewer``, ``baseline`` and ``badge`` work without git).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from unveil.core.lazy import lazy_module

if TYPE_CHECKING:
    from unveil.core import git
    from unveil.core import lock as lk
else:
    # the CLI imports this module for every command, to define ``lock``'s arguments; the lock
    # module (and ``regex``, through the fingerprints) and the git module (and ``subprocess``)
    # load when a lock command first uses them
    git = lazy_module("unveil.core.git")
    lk = lazy_module("unveil.core.lock")

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _err(message: str) -> None:
    from unveil.reporters.common import printable

    print(f"unveil: {printable(message)}", file=sys.stderr)


_CLI: dict = {}
"""What this module uses of :mod:`unveil.cli` (``emit``, ``analyze_paths``), given by
:func:`add_parsers`: the CLI imports this module, never the other way round (no import circle)."""


def _out(text: str, output: str | None = None) -> None:
    if output:
        lk.write_atomic(Path(output), text)
        return
    _CLI["emit"](text, None)


def _p(text: str) -> str:
    from unveil.reporters.common import printable

    return printable(text)


class _Fail(Exception):
    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


def repo_root(need_git: bool = False) -> tuple[Path, bool]:
    """``(root, in_git)``; with ``need_git`` a missing git or repository raises :class:`_Fail`."""
    cwd = Path.cwd()
    try:
        return git.toplevel(cwd).resolve(), True
    except git.GitMissing as exc:
        if need_git:
            raise _Fail(f"{exc}; this command reads the lock's history from git") from None
    except git.GitError as exc:
        if need_git:
            raise _Fail(f"not a git repository ({exc})") from None
    return cwd.resolve(), False


def _reviewer(args, root: Path, in_git: bool) -> str:
    if getattr(args, "reviewer", None):
        return args.reviewer
    if in_git:
        name, email = git.user(root)
        if name or email:
            return f"{name} <{email}>".strip() if email else name
    raise _Fail("no reviewer: set `git config user.name` / `user.email` or pass --reviewer")


def _review(args, root: Path, in_git: bool, reason: str) -> dict:
    return {
        "reviewer": _reviewer(args, root, in_git),
        "date": lk.now_utc(),
        "commit": git.head(root) if in_git else None,
        "reason": reason,
    }


def _lock_path(root: Path) -> Path:
    return root / lk.LOCK_NAME


def _settings():
    from unveil.core.config import DEFAULT_SETTINGS

    return DEFAULT_SETTINGS


# --------------------------------------------------------------------------- lock init / approve


def _accepted(analysis, rel: str, accept: list[str], reason: str | None) -> tuple[dict[str, str], list]:
    """``(accepted fingerprint → reason, blocking findings not accepted)``."""
    from unveil.core.fingerprint import analysis_fingerprints

    ok: dict[str, str] = {}
    refused = []
    for fp, f in zip(analysis_fingerprints(analysis, rel), analysis.findings):
        if not lk.is_blocking(f):
            continue
        if reason and (fp in accept or f.rule in accept or f"{rel}:{f.rule}" in accept):
            ok[fp] = reason
        else:
            refused.append((fp, f))
    return ok, refused


def cmd_lock_init(args) -> int:
    root, in_git = repo_root()
    path = _lock_path(root)
    if path.exists() and not args.force:
        raise _Fail(
            f"{lk.LOCK_NAME} already exists at {path}; use `unveil lock approve PATH --reason …` "
            "(or `lock init --force` to start over)"
        )
    if args.accept and not args.reason:
        raise _Fail("--accept needs --reason (why each accepted finding is acceptable)")
    rels = [lk.relative(root, Path(p).absolute()) for p in (args.paths or ["."])]
    review = _review(args, root, in_git, args.reason or "initial review")
    scanned = lk.scan(root, rels, _settings())
    for e in scanned.errors:
        _err(e)
    if scanned.errors:
        return EXIT_ERROR
    new = lk.Lock(paths=rels, rules=lk.rules_version())
    refused_all = []
    for rel, item in sorted(scanned.files.items()):
        ok, refused = _accepted(item.analysis, rel, args.accept or [], args.reason)
        refused_all += [(rel, fp, f) for fp, f in refused]
        new.files[rel] = lk.file_entry(item.analysis, rel, review, ok, item.data)
    for rel, listing in sorted(scanned.folders.items()):
        new.folders[rel] = lk.folder_entry(listing, review)
    if refused_all:
        for rel, fp, f in refused_all:
            line = item_line(scanned.files[rel].analysis, f)
            print(f"{_p(rel)}:{line}: {f.rule} {_p(f.message)} [{fp}]", file=sys.stderr)
        _err(
            f"refused: {len(refused_all)} error-level security finding(s); review them and accept each with "
            '--accept FINGERPRINT|RULE --reason "…" (nothing written)'
        )
        return EXIT_FINDINGS
    lk.write_atomic(path, new.dumps())
    print(f"wrote {lk.LOCK_NAME}: {len(new.files)} file(s), {len(new.folders)} skill folder(s)")
    return EXIT_OK


def item_line(analysis, f) -> int:
    return analysis.doc.position(f.start).line + 1


def cmd_lock_approve(args) -> int:
    root, in_git = repo_root()
    lock = lk.read_lock(_lock_path(root))
    if not args.reason or not args.reason.strip():
        raise _Fail("--reason is required: approving is a person's act, say why")
    review = _review(args, root, in_git, args.reason.strip())
    rels = []
    for p in args.paths:
        ap = Path(p).absolute()
        lk.check_path(ap)
        rels.append(lk.relative(root, ap))
    changed = 0
    for rel in rels:
        target = root / rel
        if target.is_dir():
            found = lk.scan(root, [rel], _settings(), only=())
            files, folders = list(found.files), dict(found.folders)
        elif target.is_file():
            files, folders = [rel], {}
            parent = Path(rel).parent.as_posix()
            if Path(rel).name == "SKILL.md" and parent != ".":
                folders[parent] = lk.folder_listing(root / parent)
        else:
            if rel in lock.files or rel.rstrip("/") in lock.folders:  # approve a removal
                lock.files.pop(rel, None)
                lock.folders.pop(rel.rstrip("/"), None)
                changed += 1
                continue
            raise _Fail(f"{rel}: no such file or folder")
        for f in files:
            data = (root / f).read_bytes()
            analysis = lk.analyse_bytes(data, str(root / f))
            ok, _refused = _accepted(analysis, f, [x.rule for x in analysis.findings], args.reason)
            lock.files[f] = lk.file_entry(analysis, f, review, ok, data)
            changed += 1
        for folder, listing in folders.items():
            lock.folders[folder] = lk.folder_entry(listing, review)
            changed += 1
        if not any(rel == p or rel.startswith(p.rstrip("/") + "/") or p == "." for p in lock.paths):
            lock.paths.append(rel)
    lock.rules = lk.rules_version()
    lk.write_atomic(_lock_path(root), lock.dumps())
    print(f"approved {changed} entr{'y' if changed == 1 else 'ies'} by {_p(review['reviewer'])}")
    return EXIT_OK


# --------------------------------------------------------------------------- lock verify


def _base_lock(root: Path, ref: str) -> lk.Lock:
    try:
        commit = git.resolve(root, ref)
        raw = git.show(root, commit, lk.LOCK_NAME)
    except git.GitError as exc:
        raise _Fail(str(exc)) from None
    if raw is None:
        raise _Fail(f"no {lk.LOCK_NAME} at {ref} ({commit[:12]})")
    return lk.Lock.loads(raw, f"{lk.LOCK_NAME} at {ref}")


def verify_text(report: lk.VerifyReport) -> str:
    lines = []
    for d in report.deltas:
        tag = {"changed": "CHANGED", "new": "NEW", "removed": "REMOVED", "rules-changed": "RULES"}[d.status]
        lines.append(f"{tag} {_p(d.path)}: {_p(d.summary())}")
        for f in d.added:
            lines.append(f"  + {f.severity} {f.rule} line {f.line}: {_p(f.message)}")
            if f.hidden_text is not None:
                lines.append(f"    hidden text (decoded): {_p(f.hidden_text)}")
        for r in d.removed:
            lines.append(f"  - {r.get('severity')} {r.get('rule')} ({r.get('fingerprint')})")
        if d.grade[0] and d.grade[1] and d.grade[0] != d.grade[1]:
            lines.append(f"  grade: {d.grade[0]} → {d.grade[1]}")
        t0, t1 = d.tokens
        if t0 and t1:
            lines.append(
                f"  tokens: session {t0.get('session')} → {t1.get('session')}, "
                f"invoke {t0.get('invoke')} → {t1.get('invoke')}"
            )
        for key, values in d.capabilities_added.items():
            for v in values:
                lines.append(f"  + {key}: {_p(v)}")
        for key, values in d.capabilities_removed.items():
            for v in values:
                lines.append(f"  - {key}: {_p(v)}")
        for key, values in d.folder_changes.items():
            for v in values:
                lines.append(f"  {key}: {_p(v)}")
    failing = sum(1 for d in report.deltas if d.failing)
    note = " (unveil's rules changed since the lock was written)" if report.rules_changed else ""
    lines.append(f"{lk.LOCK_NAME}: {report.ok} matching, {failing} not as reviewed{note}")
    return "\n".join(lines) + "\n"


def verify_github(report: lk.VerifyReport) -> str:
    from unveil.reporters.github import command

    lines = []
    for d in report.deltas:
        level = "error" if d.failing else "notice"
        path = d.path + "SKILL.md" if d.path.endswith("/") else d.path  # annotate the folder's SKILL.md
        lines.append(command(level, d.summary(), {"file": path, "line": 1, "title": "unveil lock"}))
        for f in d.added:
            msg = f"New since review: {f.rule} {f.message}"
            if f.hidden_text is not None:
                msg += f"\nHidden text (decoded): {f.hidden_text}"
            lines.append(
                command(
                    level if f.severity == "error" else "warning",
                    msg,
                    {"file": path, "line": f.line, "col": f.column, "title": f"unveil {f.rule}"},
                )
            )
    return "\n".join(_p_lines(lines)) + ("\n" if lines else "")


def _p_lines(lines):
    return [_p(x) for x in lines]


def verify_sarif(report: lk.VerifyReport) -> str:
    from unveil import __version__

    rules = [
        {"id": "lock-changed", "shortDescription": {"text": "Agent file changed since review"}},
        {"id": "lock-new", "shortDescription": {"text": "Agent file not in unveil.lock"}},
        {"id": "lock-removed", "shortDescription": {"text": "Reviewed agent file removed"}},
        {"id": "lock-rules-changed", "shortDescription": {"text": "Findings differ because unveil's rules changed"}},
    ]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for d in report.deltas:
        rid = f"lock-{d.status}"
        res = {
            "ruleId": rid,
            "ruleIndex": index[rid],
            "level": "error" if d.failing else "note",
            "message": {"text": _p(d.summary())},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.path.rstrip("/"), "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 1},
                    }
                }
            ],
            "properties": {"delta": json.loads(json.dumps(d.to_dict(), default=str))},
        }
        if d.status == "changed":
            res["relatedLocations"] = [
                {
                    "id": i,
                    "message": {"text": _p(f"new since review: {f.rule} {f.message}")},
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.path, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    },
                }
                for i, f in enumerate(d.added)
            ]
        results.append(res)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "unveil", "version": __version__, "rules": rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    from unveil.reporters.common import no_lone_surrogates

    return no_lone_surrogates(json.dumps(log, ensure_ascii=False, indent=2)) + "\n"


def cmd_lock_verify(args) -> int:
    root, _ = repo_root(need_git=bool(args.base))
    lock = _base_lock(root, args.base) if args.base else lk.read_lock(_lock_path(root))
    report = lk.verify(lock, root, _settings())
    for e in report.errors:
        _err(e)
    if args.format == "json":
        from unveil.reporters.common import no_lone_surrogates

        text = no_lone_surrogates(json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str)) + "\n"
    elif args.format == "sarif":
        text = verify_sarif(report)
    elif args.format == "github":
        text = verify_github(report)
    else:
        text = verify_text(report)
    _out(text, args.output)
    if report.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if report.failing else EXIT_OK


# --------------------------------------------------------------------------- lock diff / history


def reviewed_bytes(root: Path, rel: str, entry: dict) -> tuple[bytes, str]:
    """:func:`unveil.core.lock.reviewed_bytes`, failing with exit 2."""
    try:
        return lk.reviewed_bytes(root, rel, entry)
    except (lk.LockError, git.GitError) as exc:
        raise _Fail(str(exc)) from None


def cmd_lock_diff(args) -> int:
    root, _ = repo_root(need_git=True)
    lock = _base_lock(root, args.base) if args.base else lk.read_lock(_lock_path(root))
    ap = Path(args.path).absolute()
    lk.check_path(ap)
    rel = lk.relative(root, ap)
    entry = lock.files.get(rel)
    if entry is None:
        raise _Fail(f"{rel}: not in {lk.LOCK_NAME}")
    old, commit = reviewed_bytes(root, rel, entry)
    new = ap.read_bytes() if ap.is_file() else b""
    if lk.content_hash(new) == entry.get("hash"):
        print(f"{_p(rel)}: unchanged since review ({commit[:7]})")
        return EXIT_OK
    old_a = lk.analyse_bytes(old, str(ap))
    new_a = lk.analyse_bytes(new, str(ap))
    text = lk.revealed_diff(old_a.text, old_a, new_a.text, new_a, rel, old_label=f"reviewed {commit[:7]}")
    _out(_p_keep_newlines(text))
    return EXIT_FINDINGS


def _p_keep_newlines(text: str) -> str:
    return "\n".join(_p(line) for line in text.split("\n"))


def cmd_lock_history(args) -> int:
    root, in_git = repo_root(need_git=not args.ledger)
    ap = Path(args.path).absolute()
    lk.check_path(ap)
    rel = lk.relative(root, ap)
    rows = []
    if in_git:
        try:
            commits = git.log_commits(root, lk.LOCK_NAME)
            last = None
            for commit, date, _author in reversed(commits):
                raw = git.show(root, commit, lk.LOCK_NAME)
                if raw is None:
                    entry = None
                else:
                    try:
                        entry = lk.Lock.loads(raw, f"{lk.LOCK_NAME} at {commit[:7]}").files.get(rel)
                    except lk.LockError as exc:
                        _err(str(exc))
                        continue
                if entry == last:
                    continue
                last = entry
                rows.append({"lock_commit": commit, "lock_date": date, "entry": entry})
        except git.GitError as exc:
            raise _Fail(str(exc)) from None
    ledger = None
    if args.ledger:
        ledger_path = root / ".unveil" / "history.jsonl"
        if ap.is_file():
            data = ap.read_bytes()
            a = lk.analyse_bytes(data, str(ap))
            rec = {
                "date": lk.now_utc(),
                "path": rel,
                "hash": lk.content_hash(data),
                "grade": a.grade,
                "tokens": {"session": a.tokens.session, "invoke": a.tokens.invoke} if a.tokens else None,
                "findings": len(a.findings),
            }
            lk.ledger_append(ledger_path, rec)
        count, broken = lk.ledger_check(ledger_path)
        ledger = {"path": ".unveil/history.jsonl", "lines": count, "broken_at": broken}
    if args.format == "json":
        _out(json.dumps({"path": rel, "history": rows, "ledger": ledger}, indent=2, ensure_ascii=False) + "\n")
    else:
        lines = [f"history of {_p(rel)} in {lk.LOCK_NAME}:"]
        lines.append(
            "  lock date                  reviewer                 reviewed at  hash          grade  "
            "tok/session  tok/invoke  findings"
        )
        for r in rows:
            e = r["entry"]
            if e is None:
                lines.append(f"  {r['lock_date'][:25]:<26} (not in the lock)")
                continue
            rv = e.get("review") or {}
            tok = e.get("tokens") or {}
            lines.append(
                f"  {r['lock_date'][:25]:<26} {_p(str(rv.get('reviewer', '')))[:24]:<24} "
                f"{str(rv.get('commit') or '-')[:7]:<12} {e.get('hash', '')[7:19]:<13} "
                f"{e.get('grade', '?'):<6} {tok.get('session')!s:>11}  {tok.get('invoke')!s:>10}  "
                f"{len(e.get('findings') or {}):>8}"
            )
            if rv.get("reason"):
                lines.append(f"    reason: {_p(rv['reason'])}")
        if ledger is not None:
            state = "chain intact" if ledger["broken_at"] is None else f"chain BROKEN at line {ledger['broken_at']}"
            lines.append(f"ledger {ledger['path']}: {ledger['lines']} line(s), {state}")
        _out("\n".join(lines) + "\n")
    if ledger is not None and ledger["broken_at"] is not None:
        return EXIT_FINDINGS
    return EXIT_OK


# --------------------------------------------------------------------------- baseline


def cmd_baseline_write(args) -> int:
    analyze_paths = _CLI["analyze_paths"]
    from unveil.core import baseline

    results, errors = analyze_paths(args.paths or ["."], _settings())
    for e in errors:
        _err(e)
    if errors:
        return EXIT_ERROR
    doc = baseline.build(results)
    lk.write_atomic(Path(args.file), baseline.dumps(doc))
    print(f"wrote {_p(args.file)}: {len(doc['findings'])} finding(s)")
    return EXIT_OK


def apply_baseline(path: str, results) -> int | None:
    """For ``check --baseline FILE``: mark known findings; print the counts and stale entries on
    stderr. Returns ``EXIT_ERROR`` when the baseline cannot be used, else ``None``."""
    from unveil.core import baseline

    try:
        doc = baseline.load(path)
    except baseline.BaselineError as exc:
        _err(str(exc))
        return EXIT_ERROR
    applied = baseline.apply(results, doc)
    for fp, entry in applied.stale.items():
        _err(f"baseline: stale entry {fp} ({entry.get('rule')} in {entry.get('path')}): no longer found")
    _err(f"baseline: {applied.known} known (not failing), {applied.new} new, {len(applied.stale)} stale")
    return None


# --------------------------------------------------------------------------- badge


def badge_data(paths) -> object:
    analyze_paths = _CLI["analyze_paths"]
    from unveil.core import badge

    results, errors = analyze_paths(paths, _settings())
    for e in errors:
        _err(e)
    if errors:
        raise _Fail("cannot make a badge: some paths could not be read")
    counts = {"error": 0, "warning": 0, "info": 0, "hint": 0}
    for r in results:
        for f in r.analysis.findings:
            counts[f.severity.label] += 1
    root, _ = repo_root()
    state = "none"
    if _lock_path(root).exists():
        report = lk.verify(lk.read_lock(_lock_path(root)), root, _settings())
        state = "changed" if report.failing or report.errors else "reviewed"
    return badge.BadgeData(
        grade=badge.worst_grade(r.analysis.grade for r in results),
        session=sum(r.analysis.tokens.session for r in results if r.analysis.tokens),
        invoke=sum(r.analysis.tokens.invoke for r in results if r.analysis.tokens),
        files=len(results),
        findings=counts,
        lock=state,
    )


def cmd_badge(args) -> int:
    from unveil.core import badge

    data = badge_data(args.paths or ["."])
    outputs = []
    if args.svg:
        outputs.append((Path(args.svg), badge.svg(data)))
    if args.json:
        outputs.append((Path(args.json), badge.endpoint_json(data)))
    if args.check:
        if not outputs:
            raise _Fail("--check needs --svg FILE and/or --json FILE (the committed badge files)")
        stale = []
        for p, text in outputs:
            try:
                current = p.read_bytes()
            except OSError:
                current = None
            if current != text.encode("utf-8"):
                stale.append(str(p))
        if stale:
            _err(f"badge is stale: {', '.join(stale)} (run `unveil badge` with the same options to update)")
            return EXIT_FINDINGS
        print(f"badge is current: {badge.message(data)}")
        return EXIT_OK
    if not outputs:
        _out(badge.endpoint_json(data))
        return EXIT_OK
    for p, text in outputs:
        lk.write_atomic(p, text)
    print(badge.message(data))
    return EXIT_OK


# --------------------------------------------------------------------------- parser


def add_parsers(sub, *, emit, analyze_paths) -> None:
    """Add ``lock``, ``baseline`` and ``badge`` to the ``unveil`` subparsers. ``emit(text,
    output)`` and ``analyze_paths(paths, settings)`` are the CLI's (see :data:`_CLI`)."""
    _CLI.update(emit=emit, analyze_paths=analyze_paths)
    lock = sub.add_parser("lock", help="review lock: record, verify, diff, approve, history (unveil.lock)")
    lsub = lock.add_subparsers(dest="lock_command", metavar="ACTION")
    init = lsub.add_parser("init", help="record every agent file in unveil.lock")
    init.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the repository root)")
    init.add_argument(
        "--accept",
        action="append",
        metavar="FP|RULE",
        help="accept an error-level finding (fingerprint, rule id, or PATH:RULE); needs --reason",
    )
    init.add_argument("--reason", help="why (recorded in each entry's review)")
    init.add_argument("--reviewer", help="who reviewed (default: git config user.name <user.email>)")
    init.add_argument("--force", action="store_true", help="replace an existing unveil.lock")
    ver = lsub.add_parser("verify", help="exit 1 when an agent file differs from unveil.lock")
    ver.add_argument("--base", metavar="REF", help="read unveil.lock as it is at this git ref (CI: the PR's base)")
    ver.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    ver.add_argument("--output", "-o", metavar="FILE")
    diff = lsub.add_parser("diff", help="what changed since review, invisible characters named")
    diff.add_argument("path", metavar="PATH")
    diff.add_argument("--base", metavar="REF", help="compare with the entry of unveil.lock at this git ref")
    appr = lsub.add_parser("approve", help="record a person's review of PATH… in unveil.lock")
    appr.add_argument("paths", nargs="+", metavar="PATH")
    appr.add_argument("--reason", required=True, help="why the current text is acceptable")
    appr.add_argument("--reviewer", help="who reviewed (default: git config user.name <user.email>)")
    hist = lsub.add_parser("history", help="PATH's entries over the git history of unveil.lock")
    hist.add_argument("path", metavar="PATH")
    hist.add_argument(
        "--ledger",
        action="store_true",
        help="append this scan to .unveil/history.jsonl (hash-chained) and check the chain",
    )
    hist.add_argument("--format", choices=("text", "json"), default="text")

    base = sub.add_parser("baseline", help="record current findings so `check --baseline` fails only on new ones")
    bsub = base.add_subparsers(dest="baseline_command", metavar="ACTION")
    bw = bsub.add_parser("write", help="write the baseline file")
    bw.add_argument("file", metavar="FILE")
    bw.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")

    badge = sub.add_parser("badge", help="a grade and token badge: SVG and shields.io endpoint JSON")
    badge.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    badge.add_argument("--svg", metavar="FILE")
    badge.add_argument("--json", metavar="FILE")
    badge.add_argument("--check", action="store_true", help="exit 1 when the badge files are stale")


def _dispatch(fn):
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except _Fail as exc:
            _err(str(exc))
            return exc.code
        except lk.LockError as exc:
            _err(str(exc))
            return EXIT_ERROR
        except git.GitError as exc:
            _err(str(exc))
            return EXIT_ERROR

    return run


def _lock(args) -> int:
    handler = {
        "init": cmd_lock_init,
        "verify": cmd_lock_verify,
        "diff": cmd_lock_diff,
        "approve": cmd_lock_approve,
        "history": cmd_lock_history,
    }.get(args.lock_command)
    if handler is None:
        raise _Fail("usage: unveil lock {init,verify,diff,approve,history} …")
    return handler(args)


def _baseline(args) -> int:
    if args.baseline_command != "write":
        raise _Fail("usage: unveil baseline write FILE [PATH…]")
    return cmd_baseline_write(args)


HANDLERS = {"lock": _dispatch(_lock), "baseline": _dispatch(_baseline), "badge": _dispatch(cmd_badge)}
"""Subcommand name → handler(args) → exit status, for :func:`unveil.cli.main`."""
