"""The pipeline: text → document → markdown layer → checks → findings, token report and grade.

:func:`analyze` is computed once per document version by the adapters (LSP and CLI), which
then only format its result.
"""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field, replace
from typing import overload

from unveil.core import cost, frontmatter, heap, kinds, markdown, scope, tokens
from unveil.core import grade as grading
from unveil.core.checks import Context, all_checks
from unveil.core.config import DEFAULT_SETTINGS, Settings
from unveil.core.document import Document
from unveil.core.findings import Finding, Severity
from unveil.core.rules import RuleSet, bundled_rules

log = logging.getLogger(__name__)

INTERNAL_RULE = "UNV001"
BIG_TEXT = 1_000_000
"""Code points from which :func:`analyze` has glibc map large blocks on their own for the rest of
the process (:func:`unveil.core.heap.map_large_blocks`)."""


class Cancelled(Exception):
    """Raised by :func:`analyze` between checks when its ``cancelled()`` callback says the result
    is no longer wanted (the language server: the document changed again)."""


@dataclass
class Analysis:
    """Everything the adapters show for one version of one document.

    ``findings`` are sorted by position; ``tokens`` is ``None`` while the tokenizer is still
    loading (the LSP layer fills it in later with :func:`with_tokens`).
    """

    doc: Document
    path: str | None
    kind: str
    markdown: markdown.MarkdownLayer
    findings: list[Finding]
    settings: Settings
    tokens: cost.TokenReport | None = None
    grade: str = "A"
    extra: dict = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.doc.text


def _apply_metadata(
    found: list[Finding], rules: RuleSet, settings: Settings, path: str | None = None, doc: Document | None = None
) -> list[Finding]:
    """Enabled rules, per-file ignores, allow-lists (:mod:`unveil.core.project`) and severity
    overrides; sorted by position."""
    from unveil.core import project

    off = project.file_ignores(path, settings)
    allow = bool(settings.allow_codepoints or settings.allow_scripts or settings.allow_hosts) and doc is not None
    out = []
    for f in found:
        rule = rules.get(f.rule)
        category = rule.category if rule else f.category
        if not settings.rule_enabled(f.rule, category):
            continue
        if off and (f.rule in off or category in off):
            continue
        if allow and doc is not None and project.allowed(f, doc.text, doc, settings):
            continue
        sev = settings.severity_for(f.rule, category, f.severity)
        if sev != f.severity or category != f.category:
            f = replace(f, severity=sev, category=category)
        out.append(f)
    out.sort(key=lambda f: (f.start, f.end, f.rule))
    return out


def _check_name(check: object) -> str:
    """The check a check function belongs to, as ``rules/*.toml`` names it (``check = "…"``): the
    module under ``unveil.core.checks`` (the package, for a check split into a package)."""
    module = str(getattr(check, "__module__", ""))
    prefix = "unveil.core.checks."
    return module[len(prefix) :].split(".", 1)[0] if module.startswith(prefix) else module.rsplit(".", 1)[-1]


def analyze(
    text: str,
    path: str | None = None,
    settings: Settings = DEFAULT_SETTINGS,
    *,
    rules: RuleSet | None = None,
    count_tokens: bool = True,
    reader=None,
    resolve_imports: bool = True,
    cancelled=None,
    incremental=None,
    pause=None,
    document: Document | None = None,
) -> Analysis:
    """Analyse ``text`` (the file at ``path``, if known; it selects the file kind).

    ``count_tokens=False`` skips the token report when the tokenizer is not loaded yet instead
    of waiting for it. ``reader(path) -> str | None`` reads files that CLAUDE.md / GEMINI.md
    ``@imports`` name (default: the file system, :func:`unveil.core.imports.disk_reader`). Never raises for any input text: a failing check is logged and reported
    as an ``UNV001`` error finding so nothing is left unscanned silently.
    ``incremental``: the document's :class:`unveil.core.incremental.DocumentCache` (the language
    server keeps one per open document), reused between versions; the result is the same.
    What the checks share (model view, document state, decoded payloads) lives for this call
    only (:mod:`unveil.core.scope`). ``pause()``: called between checks and inside the long ones
    (:func:`unveil.core.scope.checkpoint`: between pattern rules, between sentences); it may
    wait (the language server's background analyses wait there for open documents) and its
    return value and exceptions are ignored, so it changes no result. ``document``: the
    :class:`~unveil.core.document.Document` of ``text`` when the caller has one (the language
    server's copy of an open document keeps it up to date at each edit); used only when its
    ``text`` is ``text`` itself, else the text is indexed here.
    """
    if len(text) >= BIG_TEXT:
        heap.map_large_blocks()
    doc = document if document is not None and document.text is text else Document(text)
    with scope.analysis(incremental, pause):
        return _analyze(doc, path, settings, rules, count_tokens, reader, resolve_imports, cancelled, incremental)


def _analyze(doc, path, settings, rules, count_tokens, reader, resolve_imports, cancelled, incremental) -> Analysis:
    text = doc.text
    if count_tokens:
        tokens.prepare(text)  # token budgets (TOK rules) need counts: available before the checks run
    scope.checkpoint()
    if incremental is not None:
        incremental.next_version()
        md = markdown.parse(doc, incremental.tokenize)
        fm = incremental.frontmatter(text)
    else:
        md = markdown.parse(doc)
        fm = frontmatter.parse(text)
    scope.checkpoint()
    kind = kinds.detect_kind(path, fm.mapping, settings.kind_map)
    tree = _resolve_imports(text, path, kind, md, reader) if resolve_imports else None
    ctx = Context(
        doc=doc,
        markdown=md,
        kind=kind,
        settings=settings,
        path=path,
        imports=tree,
        frontmatter=fm,
        incremental=incremental,
    )
    found: list[Finding] = []
    for check in all_checks():
        scope.checkpoint()
        if cancelled is not None and cancelled():
            raise Cancelled("a newer version of the document exists")
        try:
            found.extend(check(ctx))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - isolation is the point (pyo3 panics are BaseException)
            log.error("check %s failed on %s: %s\n%s", check.__module__, path, exc, traceback.format_exc())
            found.append(
                Finding(
                    INTERNAL_RULE,
                    Severity.ERROR,
                    0,
                    0,
                    f"unveil's {_check_name(check)} check failed ({type(exc).__name__}: {exc}); "
                    "this file was not fully scanned",
                    category="internal",
                )
            )
    from unveil.core.checks.commands.supersede import supersede  # parsed command rules replace overlapping regex hits

    found = supersede(found, rules or bundled_rules())
    if tree is not None:
        found.extend(_imported_findings(tree, settings, rules))
    findings = _redact_secrets(_apply_metadata(found, rules or bundled_rules(), settings, path, doc), text)
    suppressed: list[Finding] = []
    try:
        from unveil.core import suppress

        findings, suppressed, reports = suppress.apply(ctx, findings)
        findings = findings + _apply_metadata(reports, rules or bundled_rules(), settings, path, doc)
        findings.sort(key=lambda f: (f.start, f.end, f.rule))
    except Exception as exc:  # noqa: BLE001 - suppression never stops an analysis
        log.error("inline suppressions failed on %s: %s\n%s", path, exc, traceback.format_exc())
    result = Analysis(doc=doc, path=path, kind=kind, markdown=md, findings=findings, settings=settings)
    result.extra["suppressed"] = suppressed
    result.extra["imports"] = ctx.imports
    result.extra["frontmatter"] = fm
    result.grade = grading.grade(findings)
    if count_tokens or tokens.ready():
        try:
            result = with_tokens(result, ctx.token_report)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a tokenizer failure leaves the findings intact
            log.error("token report failed on %s: %s\n%s", path, exc, traceback.format_exc())
            result.findings = sorted(
                result.findings
                + [
                    Finding(
                        INTERNAL_RULE,
                        Severity.ERROR,
                        0,
                        0,
                        f"unveil could not count this file's tokens ({type(exc).__name__}: {exc}); "
                        "token budgets were not checked",
                        category="internal",
                    )
                ],
                key=lambda f: (f.start, f.end, f.rule),
            )
            result.grade = grading.grade(result.findings)
    return result


SYMLINK_RULE = "UNV020"


def refused(path: str, target: str, settings: Settings = DEFAULT_SETTINGS, *, rules: RuleSet | None = None) -> Analysis:
    """The analysis of a file that is a symlink leaving the scanned root: its content is never
    read (an empty document stands in); one ``UNV020`` error finding names the target."""
    doc = Document("")
    md = markdown.parse(doc)
    kind = kinds.detect_kind(path, {}, settings.kind_map)
    f = Finding(
        SYMLINK_RULE,
        Severity.ERROR,
        0,
        0,
        f"this file is a symbolic link to {target}, outside the scanned folder: not read. An agent "
        "loading it would read that file instead",
        category="internal",
    )
    findings = _apply_metadata([f], rules or bundled_rules(), settings, path, doc)
    result = Analysis(doc=doc, path=path, kind=kind, markdown=md, findings=findings, settings=settings)
    result.grade = grading.grade(findings)
    result.extra["suppressed"] = []
    return result


def add_findings(result: Analysis, extra: list[Finding]) -> Analysis:
    """Add findings computed outside :func:`analyze` (e.g. a nested project configuration that
    weakens the scan, which that configuration itself must not be able to silence): sorted in,
    grade recomputed. Returns ``result`` (modified in place)."""
    result.findings = sorted(result.findings + list(extra), key=lambda f: (f.start, f.end, f.rule))
    result.grade = grading.grade(result.findings)
    return result


def _redact_secrets(findings: list[Finding], text: str) -> list[Finding]:
    """Every secret a ``secrets`` finding located is shown redacted (:func:`unveil.core.redact.redact`)
    in every finding's message and ``hidden_text``, e.g. a comment revealing ``<!-- ghp_… -->``."""
    from unveil.core.redact import redact

    secrets = {text[f.start : f.end] for f in findings if f.category == "secrets" and f.end - f.start >= 8}
    if not secrets:
        return findings
    order = sorted(secrets, key=len, reverse=True)

    @overload
    def clean(s: str) -> str: ...
    @overload
    def clean(s: str | None) -> str | None: ...

    def clean(s: str | None) -> str | None:
        if not s:
            return s
        for secret in order:
            if secret in s:
                s = s.replace(secret, redact(secret))
        return s

    return [replace(f, message=clean(f.message), hidden_text=clean(f.hidden_text)) for f in findings]


def context_of(result: Analysis) -> Context:
    """A check :class:`~unveil.core.checks.Context` with the inputs ``result`` was computed from
    (text, markdown layer, kind, settings, path, imports, frontmatter)."""
    return Context(
        doc=result.doc,
        markdown=result.markdown,
        kind=result.kind,
        settings=result.settings,
        path=result.path,
        imports=result.extra.get("imports"),
        frontmatter=result.extra.get("frontmatter"),
    )


def with_tokens(result: Analysis, report=None) -> Analysis:
    """Fill in the token report (waits for the tokenizer if it is still loading). ``report``:
    the :class:`~unveil.core.cost.TokenReport` a check already computed for this analysis's
    context (the same inputs: text, kind, path, markdown, frontmatter, imports), used as is."""
    result.tokens = report if report is not None else cost.token_report(context_of(result))
    # Tokens of each hidden span, so hover can say what a hidden instruction costs.
    text = result.doc.text
    result.findings = [
        f if f.hidden_text is None or f.tokens is not None else replace(f, tokens=tokens.count(text[f.start : f.end]))
        for f in result.findings
    ]
    return result


_IMPORTED_CACHE: dict[tuple[str, str, str], list] = {}
_IMPORTED_CACHE_MAX = 256


def _imported_findings(tree, settings: Settings, rules: RuleSet | None) -> list[Finding]:
    """:func:`unveil.core.imports.import_findings` with every imported file analysed by every rule
    (its own imports are not resolved again: the root's tree already holds them). Analyses are
    cached per (path, text, settings) so an editor re-analysing the root per keystroke does not
    re-analyse unchanged imported files."""
    from unveil.core import imports

    key_settings = repr(settings)

    def analyse(p: str, body: str) -> list:
        key = (p, body, key_settings)
        hit = _IMPORTED_CACHE.get(key)
        if hit is None:
            sub = analyze(body, p, settings, rules=rules, count_tokens=False, resolve_imports=False)
            hit = [(f, sub.doc) for f in sub.findings]
            if len(_IMPORTED_CACHE) >= _IMPORTED_CACHE_MAX:
                _IMPORTED_CACHE.clear()
            _IMPORTED_CACHE[key] = hit
        return hit

    try:
        return imports.import_findings(tree, analyse)
    except Exception as exc:  # noqa: BLE001 - never lose the root's own findings
        log.error("imported-file findings failed: %s\n%s", exc, traceback.format_exc())
        return [
            Finding(
                INTERNAL_RULE,
                Severity.ERROR,
                0,
                0,
                f"unveil could not analyse this file's imports ({type(exc).__name__}: {exc})",
                category="internal",
            )
        ]


def _resolve_imports(text, path, kind, md, reader):
    """The :class:`~unveil.core.imports.ImportTree` of a CLAUDE.md / GEMINI.md file, else ``None``."""
    from unveil.core import imports

    if kind not in imports.IMPORT_HOSTS or not path:
        return None
    try:
        return imports.resolve(
            text, path, kind, reader or imports.disk_reader(), in_code=md.in_code, skip_before=md.body_start
        )
    except Exception as exc:  # noqa: BLE001 - imports never stop an analysis
        log.error("import resolution failed on %s: %s", path, exc)
        return None
