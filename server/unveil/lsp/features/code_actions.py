"""Code actions: one quick fix per finding fix, plus "remove all invisible characters".

* For each diagnostic in ``params.context.diagnostics`` that maps to a finding with fixes: one
  ``quickfix`` per :class:`~unveil.core.findings.Fix` (``isPreferred`` for removals, fix kind
  ``"remove-invisible"``).
* "Remove all invisible characters in this file": every ``remove-invisible`` edit of the file in
  one action; offered as a ``quickfix`` next to such a diagnostic.
* ``source.fixAll.unveil``, when the client asks for source actions (``context.only`` containing
  ``source``, ``source.fixAll`` or ``source.fixAll.unveil``, as editors do for fix-on-save): the
  safe fixes of ``unveil check --fix`` (:func:`unveil.core.fixes.safe_edits`: invisible
  characters and frontmatter fixes), titled "Remove all invisible characters in this file"
  when that is all they do, else :data:`FIX_SAFE_TITLE`.

Edits are ``TextDocumentEdit`` with the document version, so a client rejects them if the
document changed meanwhile. Which edits are combined, sorted and kept is decided by
:mod:`unveil.core.fixes`, the same code path as ``unveil check --fix``.
"""

from __future__ import annotations

from lsprotocol import types

from unveil.core import fixes
from unveil.core.analyze import Analysis
from unveil.core.findings import Edit
from unveil.lsp.convert import lsp_range
from unveil.lsp.features.diagnostics import finding_for

REMOVE_INVISIBLE = fixes.REMOVE_INVISIBLE
FIX_ALL_KIND = "source.fixAll.unveil"
FIX_ALL_TITLE = "Remove all invisible characters in this file"
FIX_SAFE_TITLE = "Apply all safe unveil fixes (as unveil check --fix)"


def kind_allowed(kind: str, only) -> bool:
    """Whether ``kind`` passes the client's ``context.only`` filter (hierarchical, dot-separated;
    ``None`` or empty allows everything)."""
    if not only:
        return True
    kind = str(getattr(kind, "value", kind))
    for o in only:
        o = str(getattr(o, "value", o))
        if o == "" or kind == o or kind.startswith(o + "."):
            return True
    return False


def _text_edits(analysis: Analysis, edits, encoding: str) -> list[types.TextEdit]:
    """Sorted, de-duplicated, non-overlapping text edits (:func:`unveil.core.fixes.non_overlapping`)."""
    return [
        types.TextEdit(range=lsp_range(analysis.doc, e.start, e.end, encoding), new_text=e.new_text)
        for e in fixes.non_overlapping(edits)
    ]


def _workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=edits,
            )
        ]
    )


def fix_all_edits(analysis: Analysis) -> list[Edit]:
    """Every edit of every ``remove-invisible`` fix in the file (:func:`unveil.core.fixes.remove_invisible_edits`)."""
    return fixes.remove_invisible_edits(analysis.findings)


def code_actions(
    analysis: Analysis, uri: str, version: int | None, params: types.CodeActionParams, encoding: str
) -> list[types.CodeAction]:
    """Code actions for ``params`` on the current version of the document."""
    only = params.context.only
    actions: list[types.CodeAction] = []
    context_has_removal = False
    if kind_allowed(types.CodeActionKind.QuickFix, only):
        for diag in params.context.diagnostics or ():
            finding = finding_for(diag, analysis, version, encoding)
            if finding is None:
                continue
            for fix in finding.fixes:
                if fix.kind == REMOVE_INVISIBLE:
                    context_has_removal = True
                actions.append(
                    types.CodeAction(
                        title=fix.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diag],
                        edit=_workspace_edit(uri, version, _text_edits(analysis, fix.edits, encoding)),
                        is_preferred=True if fix.kind == REMOVE_INVISIBLE else None,
                    )
                )
    all_edits = fix_all_edits(analysis)
    if all_edits and context_has_removal:
        edit = _workspace_edit(uri, version, _text_edits(analysis, all_edits, encoding))
        actions.append(types.CodeAction(title=FIX_ALL_TITLE, kind=types.CodeActionKind.QuickFix, edit=edit))
    if only and kind_allowed(FIX_ALL_KIND, only):
        chosen = fixes.chosen_fixes(analysis.findings)
        if chosen:
            only_invisible = all(fix.kind == REMOVE_INVISIBLE for _, fix in chosen)
            edits = _text_edits(analysis, [e for _, fix in chosen for e in fix.edits], encoding)
            actions.append(
                types.CodeAction(
                    title=FIX_ALL_TITLE if only_invisible else FIX_SAFE_TITLE,
                    kind=FIX_ALL_KIND,
                    edit=_workspace_edit(uri, version, edits),
                )
            )
    return actions


def register(server) -> None:
    from unveil.lsp.registry import safe

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    @safe(default=[])
    async def on_code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        got = await ls.get_analysis(uri)
        if got is None:
            return []
        analysis, version = got
        return code_actions(analysis, uri, version, params, ls.encoding)
