"""Per-document caches that make re-analysing the next version of an edited document cheaper,
with results identical to a fresh :func:`unveil.core.analyze.analyze` of the same text.

The language server keeps one :class:`DocumentCache` per open document and passes it to
``analyze(..., incremental=cache)``; the CLI never does. What is reused between versions, and why
that reuse is exact:

* **markdown-it's block tokens, per top-level block** (:meth:`DocumentCache.tokenize`). A
  top-level block rule started at line ``L`` reads only lines ``>= L`` (markdown-it's block
  rules look forward; the block loop's look-back, ``isEmpty(line - 1)``, only sets
  ``state.tight``, which no top-level rule reads), and its rules, those that fail included, read
  at most up to the first line of the next top-level block, plus the line after it (a table
  interrupting a paragraph checks its delimiter row); the cache allows a block to reach the
  second next block's start plus :data:`_MARGIN` lines. The exception is line 0, where alone the
  ``front_matter`` rule fires, and its failed attempt reads to the closing line or the end of the
  text: a block at line 0 that is not the frontmatter is parsed again when the text starts with
  ``-``, and a block is never moved to or from line 0. So after an edit of lines ``[p, q)``: every block whose reach ends above
  ``p`` (with a margin of :data:`_MARGIN` lines) is reused as it was; parsing restarts at the
  first other block and, once it reaches a block start beyond the edit that was also a block
  start in the previous version (same text from there to the end), the previous version's
  blocks from there on are reused with their line maps shifted. Block rules also write the
  parse environment (reference and footnote definitions, in document order, first one wins): a
  version or a previous version with any of those is parsed in full.
* **markdown-it's inline tokens, per inline token content**: the inline parse of a content
  string is a function of that string and of the parse environment. Lists and sets in the
  environment are write-only accumulators (unveil's entity and used-label records); every other
  value (footnote state) is part of the cache key by its exact ``repr`` (when short). When the
  block phase wrote no definitions, a (content, key) seen in the previous version gets a copy
  of the previous children, and what that parse did to the environment (items appended, values
  set) is replayed in document order. A parse that does anything else to the environment stops
  the reuse for the rest of that version. Records that name the content string by identity
  (unveil's position records: ``pos[2] is content``) are rebound to the new token's string.
* **the markdown layer's facts of an inline token** (:func:`unveil.core.markdown._inline`, through
  :func:`relocatable`): its inline code spans, HTML, links and character references, keyed by
  the token's content, source lines and child list (a reused parse hands the same list on);
  exact because every offset is the token's first line start plus a distance inside those
  lines (tested against a fresh layer after random edits).
* **the frontmatter** (:meth:`DocumentCache.frontmatter`): :func:`unveil.core.frontmatter.parse`
  reads only the frontmatter block; it is reused while the text up to the body start and the
  block's span are unchanged.

* **command judgements** (:attr:`DocumentCache.relocatable`, through :func:`relocatable`): the
  findings of a code block, inline code or hook, and the escalation check's parsed commands,
  keyed by the text, the shape of its offset map and the origin; exact because they depend on
  where the text is only through a shift (tested), so a block moved by an edit above it gets
  its previous results moved.
* **the pattern rules' matches per window** (:attr:`DocumentCache.matches`, and
  ``escalation_matches`` for the escalation check's prose forms): a
  :class:`unveil.core.checks.literal_index.MatchMemo`, exact because a search's result is a
  function of the window widened by the pattern's lookbehind reach (see there).
* **the pattern rules' whole-text matches on the normalised reading**
  (:attr:`DocumentCache.splices`): spliced into the next version's
  (:func:`unveil.core.checks.splice.splice`), exact for a pattern whose searches read a bounded
  stretch (see there).
* **what a check keeps of the last version for the next** (:attr:`DocumentCache.kept`, by a
  key of the check's own): the clause rules' slot-literal occurrences
  (:func:`unveil.core.checks.clauses._occurrences_kept`); each such use documents and tests why
  it is exact.

Everything else (the rest of the markdown layer built from the tokens, every check, the token
report) runs on the whole new version, through memos of pure steps: the checks read cross-block state (duplicate reference definitions,
unused footnotes, imports, token budgets, the grade, normalised readings that join list items
and lines, rule windows, decoded runs), and a per-block cache of their findings could not be
proved identical to a fresh analysis for checks in general — so none is kept (see
``docs/architecture.md``, "Incremental analysis"). The cache objects handed to markdown-it are always
fresh copies, so nothing a later stage mutates leaks into the next version.

Thread safety: one :class:`DocumentCache` may be used from several analysis threads; a second
concurrent use does a plain full parse instead of waiting.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

_MARGIN = 2
"""Extra lines beyond the second next block's first line that a top-level block's parse is
allowed to have read (one block and one line would do; see the module docstring)."""


def _clone(t):
    """A deep copy of a markdown-it ``Token`` (children included); ``meta`` and ``attrs`` are
    copied one level deep (their values are immutable: positions, labels, ids). Fills the slots
    directly: four times faster than the dataclass constructor, which matters at ~1,300 tokens
    per 300 lines."""
    c = _new(_token_class())
    c.type = t.type
    c.tag = t.tag
    c.nesting = t.nesting
    c.attrs = dict(t.attrs) if t.attrs else {}
    m = t.map
    c.map = [m[0], m[1]] if m is not None else None
    c.level = t.level
    ch = t.children
    c.children = [_clone(x) for x in ch] if ch else ([] if ch is not None else None)
    c.content = t.content
    c.markup = t.markup
    c.info = t.info
    c.meta = dict(t.meta) if t.meta else {}
    c.block = t.block
    c.hidden = t.hidden
    return c


def _share(t):
    """``t`` itself when nothing after the block phase changes it, else :func:`_clone` of it.
    After the block phase markdown-it (``commonmark`` preset: the ``inline`` and ``text_join``
    core rules; unveil's inline rules) writes only to ``inline`` tokens (their ``children``)
    and to the tokens it creates; no stage of unveil writes to a token (the module test
    ``test_block_tokens_are_never_written`` checks that a whole analysis leaves the shared
    tokens as they were). The footnote plugin's core rule moves tokens, but a version with
    footnotes is parsed in full. So a block token other than ``inline`` may be shared between
    the cache and every version handed out; so may an ``inline`` token, whose ``children`` each
    version's inline phase sets afresh before anything reads them (:meth:`DocumentCache._inline`)."""
    return t if t.children is None or t.type == "inline" else _clone(t)


_new = object.__new__
_TOKEN: list = []


def _token_class():
    if not _TOKEN:
        from markdown_it.token import Token

        fields = (
            "type", "tag", "nesting", "attrs", "map", "level", "children", "content", "markup", "info", "meta",
            "block", "hidden",
        )  # fmt: skip
        if tuple(getattr(Token, "__slots__", ())) != fields:  # pragma: no cover - markdown-it changed
            raise RuntimeError("markdown-it Token fields changed; update unveil.core.incremental._clone")
        _TOKEN.append(Token)
    return _TOKEN[0]


def _far_reaching_start(blk: _Block, lines: list[str]) -> bool:
    """Whether the block at line 0 may have read beyond its reach: ``front_matter`` is tried
    there first and, when it fails (no closing line), it has read to the end of the text. It
    reads nothing more when it succeeded (the block is the frontmatter) or when the text does
    not start with its marker (``-``)."""
    first = blk.tokens[0].type if blk.tokens else ""
    return first != "front_matter" and lines[0][:1] == "-"


def _shifted(t, delta: int):
    if t.type == "inline":  # its children are set afresh by the inline phase: not copied
        ch, t.children = t.children, []
        try:
            c = _clone(t)
        finally:
            t.children = ch
    else:
        c = _clone(t)
    if c.map is not None and delta:
        c.map = [c.map[0] + delta, c.map[1] + delta]
    return c


@dataclass
class _Block:
    """One top-level block of the previous version: the line its rule started at and the
    block-phase tokens it produced (pristine copies, never handed out)."""

    start: int
    tokens: list


@dataclass
class _Parsed:
    lines: list[str]
    blocks: list[_Block]
    env_clean: bool  # the block phase wrote nothing into the environment
    inline: dict = field(default_factory=dict)  # content -> (pristine children, env delta) | None
    marks: tuple | None = None  # the block state's line markers before parsing (_line_marks)


@dataclass
class Stats:
    """What the last :meth:`DocumentCache.tokenize` reused (for tests and profiles)."""

    full: bool = True
    blocks_reused: int = 0
    blocks_parsed: int = 0
    inline_reused: int = 0
    inline_parsed: int = 0


def _line_marks(bstate) -> tuple:
    """A copy of the line markers markdown-it's block state computed from its source, before any
    rule changed them (blockquotes and lists rewrite some while they parse): ``(bMarks, eMarks,
    tShift, sCount, bsCount)`` without the final stand-in entry, and the source's length."""
    n = bstate.lineMax
    return (
        bstate.bMarks[:n],
        bstate.eMarks[:n],
        bstate.tShift[:n],
        bstate.sCount[:n],
        bstate.bsCount[:n],
        len(bstate.src),
    )


def _line_delta(a: list[str], b: list[str]) -> tuple[int, int]:
    """``(p, s)``: ``a[:p] == b[:p]`` and the last ``s`` lines of both are equal,
    ``p + s <= min(len(a), len(b))`` (the lines two versions share at their start and end)."""
    n_old, n_new = len(a), len(b)
    m = min(n_old, n_new)
    p = 0
    while p < m and a[p] == b[p]:
        p += 1
    s = 0
    while s < m - p and a[n_old - 1 - s] == b[n_new - 1 - s]:
        s += 1
    return p, s


def _state_block(md, src: str, env: dict, out: list, lines: list[str], old: _Parsed, shared: tuple[int, int]):
    """``StateBlock(src, md, env, out)``, its line markers taken from the previous version's
    (``old.marks``) for the lines the two versions share at their start and end, and computed
    (by a ``StateBlock`` of those lines alone) for the lines between. Exact: markdown-it gives
    each line markers from that line's text alone (its start and end offsets, the width of its
    leading white space; a last line of white space without a line break gets none), so a line
    of the common prefix that is not the last line of either version has the same markers, one
    of the common suffix the same shifted by the change in length, and a line between the
    markers of the same text as a source of its own (given its line break when it has one).
    Saves the per-line pass over the whole source on every edit (2.5 ms for the 294 KB corpus
    file). ``lines``: ``src.split("\n")``; ``shared``: :func:`_line_delta` of ``old.lines`` and
    ``lines``. Falls back to the full constructor when ``old`` has no markers or the pieces do
    not add up."""
    from markdown_it.rules_block.state_block import StateBlock

    marks = old.marks
    n_old, n_new = len(old.lines), len(lines)
    if marks is None or n_old < 2 or n_new < 2:
        return StateBlock(src, md, env, out)
    p, s = shared
    pre = min(p, n_old - 1, n_new - 1)  # never a last line: it alone may have no markers
    suf = min(s, n_old - pre, n_new - pre)
    bm, em, ts, sc, bs, old_len = marks
    n_old_marked = len(bm)
    if pre > n_old_marked:
        return StateBlock(src, md, env, out)
    start = len("\n".join(lines[:pre])) + 1 if pre else 0
    sstart = len(src) - len("\n".join(lines[n_new - suf :])) if suf else len(src)
    if start > sstart:
        return StateBlock(src, md, env, out)
    mid = StateBlock(src[start:sstart], md, env, []) if sstart > start else None
    n_mid = mid.lineMax if mid is not None else 0
    if suf and n_mid != n_new - suf - pre:  # every line between has its line break: one marker each
        return StateBlock(src, md, env, out)
    d = len(src) - old_len
    lo = n_old - suf  # the first old line of the common suffix
    bstate = StateBlock("", md, env, out)
    bstate.src = src
    bstate.bMarks = bm[:pre] + ([x + start for x in mid.bMarks[:n_mid]] if mid else []) + [x + d for x in bm[lo:]]
    bstate.eMarks = em[:pre] + ([x + start for x in mid.eMarks[:n_mid]] if mid else []) + [x + d for x in em[lo:]]
    bstate.tShift = ts[:pre] + (mid.tShift[:n_mid] if mid else []) + ts[lo:]
    bstate.sCount = sc[:pre] + (mid.sCount[:n_mid] if mid else []) + sc[lo:]
    bstate.bsCount = bs[:pre] + (mid.bsCount[:n_mid] if mid else []) + bs[lo:]
    n = len(bstate.bMarks)
    for arr, v in (
        (bstate.bMarks, len(src)),
        (bstate.eMarks, len(src)),
        (bstate.tShift, 0),
        (bstate.sCount, 0),
        (bstate.bsCount, 0),
    ):
        arr.append(v)
    bstate.lineMax = n
    return bstate


class DocumentCache:
    """Reusable results of one document's previous version (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parsed: _Parsed | None = None
        self._fm: tuple | None = None  # (span, prefix, Frontmatter)
        self.stats = Stats()
        from unveil.core.checks.literal_index import MatchMemo

        self.matches = MatchMemo()  # the directive patterns' matches per window (exact: see MatchMemo)
        self.escalation_matches = MatchMemo()  # the same for the escalation check's prose forms
        self.relocatable = MatchMemo(max_entries=20_000)  # see relocatable(); advanced once per version
        from unveil.core.checks.splice import SpliceLog

        self.splices = SpliceLog()  # the pattern rules' matches in the last version, spliced into the next
        self.kept: dict = {}  # what a check keeps of the last version for the next (each check's own, exact)
        self.memos: dict = {}  # per-unit memos of this document (unveil.core.scope.memo)

    def next_version(self) -> None:
        """Called once at the start of each version's analysis: the per-version memos that no
        check advances itself (:attr:`relocatable`) keep what the last version used."""
        self.relocatable.next_version()

    # -- frontmatter -------------------------------------------------------------------
    def frontmatter(self, text: str):
        """:func:`unveil.core.frontmatter.parse` of ``text``, reused while the frontmatter block
        (the text up to the body start, and its span) is unchanged."""
        from unveil.core import frontmatter

        try:
            span = frontmatter.find_span(text)
        except Exception:  # noqa: BLE001 - parse() reports it
            span = None
        if span is None:
            return frontmatter.parse(text)
        prefix = text[: span.body_start]
        got = self._fm
        if got is not None and got[0] == span and got[1] == prefix:
            return got[2]
        fm = frontmatter.parse(text)
        self._fm = (span, prefix, fm)
        return fm

    # -- markdown-it -------------------------------------------------------------------
    def tokenize(self, md, text: str, env: dict) -> list:
        """``md.parse(text, env)``, reusing the previous version's blocks and inline parses where
        that is exact (module docstring). ``md`` is the configured ``MarkdownIt`` instance."""
        if not self._lock.acquire(blocking=False):
            return md.parse(text, env)
        try:
            return self._tokenize(md, text, env)
        finally:
            self._lock.release()

    def _tokenize(self, md, text: str, env: dict) -> list:
        from markdown_it.rules_core.state_core import StateCore

        state = StateCore(text, md, env)
        stats = Stats()
        rules = [(r.name, r.fn) for r in md.core.ruler.__rules__ if r.enabled]
        parsed: _Parsed | None = None
        fresh: list = []  # (inline token, cache key) of the inline parses of this version
        joins: list = []  # the inline tokens text_join has to see
        for name, fn in rules:
            if name == "block" and not state.inlineMode:
                parsed = self._block(md, state, stats)
            elif name == "inline" and parsed is not None:
                fresh, joins = self._inline(md, state, parsed, stats)
            elif name == "footnote_tail" and _no_footnotes(state.env):
                continue  # (it would only copy the token list: see _no_footnotes)
            elif name == "text_join" and parsed is not None:
                # the previous version's inline parses were joined already (text_join changes
                # nothing when run on its own output): only this version's own parses are joined
                fn(_TokenList(joins))
            else:
                fn(state)
        if parsed is not None:
            # what the next version reuses is each inline token's children as the whole core
            # chain left them (text_join rebuilds the list; run again on it, it changes nothing)
            for token, key in fresh:
                children, delta, src = parsed.inline[key]
                parsed.inline[key] = (token.children, delta, src)
        self.stats = stats
        if parsed is not None:
            self._parsed = parsed
        return state.tokens

    def _block(self, md, state, stats: Stats) -> _Parsed:
        """The block phase into ``state.tokens``; returns what the next version may reuse."""
        from markdown_it.rules_block.state_block import StateBlock

        src = state.src
        lines = src.split("\n")
        old = self._parsed
        if not src:
            return _Parsed(lines, [], not state.env)
        if old is not None and old.env_clean and not state.env:
            env_before = dict(state.env)
            out: list = []
            shared = _line_delta(old.lines, lines)
            bstate = _state_block(md, src, state.env, out, lines, old, shared)
            marks = _line_marks(bstate)
            blocks = self._reparse(md, bstate, old, lines, stats, shared)
            if blocks is not None and not state.env:
                state.tokens.extend(out)
                return _Parsed(lines, blocks, True, marks=marks)
            state.env.clear()  # a definition appeared: parse the whole version afresh
            state.env.update(env_before)
        stats.full = True
        stats.blocks_reused = stats.blocks_parsed = 0
        out = []
        bstate = StateBlock(src, md, state.env, out)
        marks = _line_marks(bstate)
        blocks = []
        self._loop(md, bstate, bstate.line, bstate.lineMax, blocks, None)
        stats.blocks_parsed = len(blocks)
        state.tokens.extend(out)
        return _Parsed(
            lines, [_Block(b.start, [_share(t) for t in b.tokens]) for b in blocks], not state.env, marks=marks
        )

    def _reparse(
        self, md, bstate, old: _Parsed, lines: list[str], stats: Stats, shared: tuple[int, int]
    ) -> list[_Block] | None:
        """Block phase of the new version from the previous one (``shared``: :func:`_line_delta`
        of their lines); ``None`` to parse in full."""
        n_old, n_new = len(old.lines), len(lines)
        p, s = shared
        delta = n_new - n_old
        suffix_old = n_old - s  # old lines >= this are unchanged (new: + delta)
        blocks = old.blocks
        keep = 0
        for i, blk in enumerate(blocks):
            if blk.start == 0 and _far_reaching_start(blk, lines):
                break
            reach = blocks[i + 2].start + _MARGIN if i + 2 < len(blocks) else n_old + _MARGIN
            if reach >= p:
                break
            keep = i + 1
        starts = {blk.start: i for i, blk in enumerate(blocks) if blk.start >= suffix_old}
        out_tokens = bstate.tokens
        new_blocks: list[_Block] = []
        for blk in blocks[:keep]:
            out_tokens.extend(_share(t) for t in blk.tokens)
            new_blocks.append(blk)
        if keep == len(blocks) and blocks:  # unreachable with the margin, but never guess
            return None
        resume = blocks[keep].start if keep else 0  # lines before the first block may have changed

        def resync(line: int) -> int | None:
            # line 0 is special (the front_matter rule fires only there): never resync at it
            if line <= 0 or line - delta <= 0 or line - delta < suffix_old:
                return None
            return starts.get(line - delta)

        parsed: list[_Block] = []
        hit = self._loop(md, bstate, resume, bstate.lineMax, parsed, resync)
        stats.full = False
        stats.blocks_reused = keep
        stats.blocks_parsed = len(parsed)
        new_blocks.extend(_Block(x.start, [_share(t) for t in x.tokens]) for x in parsed)
        if hit is not None:
            for blk in blocks[hit:]:
                kept = blk if not delta else _Block(blk.start + delta, [_shifted(t, delta) for t in blk.tokens])
                out_tokens.extend(_share(t) for t in kept.tokens)
                new_blocks.append(kept)
                stats.blocks_reused += 1
        return new_blocks

    @staticmethod
    def _loop(md, state, start: int, end: int, blocks: list, resync) -> int | None:
        """:func:`top_level_blocks`, recording each top-level block and its tokens in ``blocks``."""
        return top_level_blocks(
            md, state, start, end, lambda line, n0: blocks.append(_Block(line, state.tokens[n0:])), resync
        )

    def _inline(self, md, state, parsed: _Parsed, stats: Stats) -> tuple[list, list]:
        """markdown-it's core ``inline`` rule, reusing the previous version's parse of an
        unchanged content string when the block phase wrote no definitions. Returns the
        ``(token, key)`` of each content parsed afresh and kept (:meth:`_tokenize` keeps its
        final children), and the inline tokens whose children ``text_join`` has not joined yet
        (the others hold the previous version's, joined already).

        A reused parse hands out the previous version's child tokens themselves, not copies:
        after the core chain nothing writes to an inline token's children (the module test
        ``test_inline_children_are_never_written``), and a version is done with its tokens when
        its markdown layer is built (the layer keeps none). A second use of one parse within a
        version gets copies (each token's position records name its own content string). The
        environment's snapshot (:func:`_snapshot`, part of each key) is taken again only after a
        parse or a replayed parse changed the environment (most change nothing)."""
        old = self._parsed.inline if (self._parsed is not None and parsed.env_clean) else {}
        reuse = parsed.env_clean
        env = state.env
        new_cache: dict = {}
        given: set[int] = set()  # id() of the children lists handed out in this version
        fresh: list = []
        joins: list = []  # inline tokens whose children text_join has not seen yet
        snap = None  # the environment's snapshot, while no parse or replay has changed it
        for token in state.tokens:
            if token.type != "inline":
                continue
            token.children = []  # (an inline token may be shared with the previous version: _share)
            content = token.content
            if reuse and snap is None:
                snap = _snapshot(env)
            before = snap if reuse else None
            if before is None:
                reuse = False
            key = (content, before[0]) if before is not None else None
            got_old = old.get(key) if key is not None else None
            got = got_old or (new_cache.get(key) if key is not None else None)
            if got is not None:
                if got_old is None:
                    joins.append(token)  # a copy of this version's own parse, before text_join
                children, delta, src = got
                if id(children) in given:
                    handed = [_clone(c) for c in children]
                else:
                    given.add(id(children))
                    handed = children
                if src is not content:
                    _rebind_children(handed, src, content)
                    delta = _rebind_delta(delta, src, content)
                token.children = handed
                _replay(env, delta)
                if delta:
                    snap = None
                if key not in new_cache:
                    new_cache[key] = (handed, delta, content) if handed is children else got
                stats.inline_reused += 1
                continue
            md.inline.parse(content, md, env, token.children)
            joins.append(token)
            stats.inline_parsed += 1
            snap = None
            if key is not None:
                delta = _delta(env, before)
                if delta == []:  # (the environment as it was: its snapshot still holds)
                    snap = before
                if delta is None:
                    reuse = False
                elif key not in new_cache:
                    # a copy for a second use in this version (the live list is rebuilt by text_join)
                    new_cache[key] = ([_clone(c) for c in token.children], delta, content)
                    fresh.append((token, key))
        parsed.inline = new_cache
        return fresh, joins


def _no_footnotes(env: Mapping) -> bool:
    """Whether mdit-py-plugins' core rule ``footnote_tail`` would leave the token stream as it
    is (``mdit_py_plugins/footnote/index.py``): nothing recorded a footnote definition (their
    block rule adds a ``refs`` entry and is the only maker of the ``footnote_reference_open``
    tokens the rule takes out) and no inline footnote or reference filled ``list`` (from which
    it appends the footnote block). Its inline rules record an empty ``footnotes`` entry at the
    first ``[`` or ``^`` they look at, after which the rule, run anyway, walked and copied the
    whole token list at every keystroke."""
    notes = env.get("footnotes")
    return notes is None or (isinstance(notes, dict) and not notes.get("refs") and not notes.get("list"))


def top_level_blocks(md, state, start: int, end: int, on_block, resync=None) -> int | None:
    """markdown-it's ``ParserBlock.tokenize`` (``parser_block.py``) at the top level, same steps,
    over ``state`` (a ``StateBlock``) from line ``start`` to ``end``: after each top-level block,
    ``on_block(first line, number of tokens before the block)``. Stops at a line where
    ``resync(line)`` gives a value and returns it (else ``None``). Used by
    :class:`DocumentCache` (which records the blocks) and by the command line's streamed markdown
    layer (:func:`unveil.core.markdown._fill_streaming`, which reads each block's tokens and
    drops them). Raises ``RuntimeError`` as markdown-it does when no rule advances."""
    rules = md.block.ruler.getRules("")
    max_nesting = md.options.maxNesting
    line = start
    has_empty = False
    while line < end:
        state.line = line = state.skipEmptyLines(line)
        if line >= end:
            break
        if resync is not None:
            hit = resync(line)
            if hit is not None:
                return hit
        if state.sCount[line] < state.blkIndent:
            break
        if state.level >= max_nesting:
            state.line = end
            break
        n0 = len(state.tokens)
        ok = False
        for rule in rules:
            ok = rule(state, line, end, False)
            if ok:
                if state.line <= line:
                    raise RuntimeError("block rule didn't increment state.line")
                break
        if not ok:
            raise RuntimeError("none of the block rules matched")
        on_block(line, n0)
        state.tight = not has_empty
        line = state.line
        if (line - 1) < end and state.isEmpty(line - 1):
            has_empty = True
        if line < end and state.isEmpty(line):
            has_empty = True
            line += 1
            state.line = line
    return None


class _TokenList:
    """What a markdown-it core rule reads of its state: ``tokens``."""

    def __init__(self, tokens: list) -> None:
        self.tokens = tokens


_SMALL = 256
"""Longest ``repr`` of an environment value other than a list or set that the inline reuse keys on."""


def relocatable(kind: str, key: tuple, base: int, compute, shift):
    """``compute()`` (a list of results that carry offsets into the document, all equal to
    ``base`` plus something that does not depend on ``base``), memoised in the open document's
    :class:`DocumentCache` (:func:`unveil.core.scope.document_cache`) by ``(kind, key)``; a
    result computed when the same ``key`` was at another base is returned moved:
    ``shift(item, base - old_base)`` of each item. ``key`` must hold every input of
    ``compute`` other than ``base`` (the text judged, its offset map's shape from
    :meth:`unveil.core.shell.OffsetMap.relative`, the origin). So after an edit, a code block
    that did not change is not judged again, whether it is above the edit (same base) or below
    it (same text and shape, a new base: the old results, moved). Exact when ``compute`` reads
    nothing but ``key`` and ``base`` and its offsets move with ``base`` (tested over corpus code
    blocks and generated commands). Without a document cache (the CLI), ``compute()``. Returns a
    new list each time."""
    from unveil.core import scope

    cache = scope.document_cache()
    if cache is None:
        return compute()
    k = (kind, key)
    got = cache.relocatable.get(k)
    if got is None:
        items = compute()
        cache.relocatable.put(k, (base, tuple(items)))
        return list(items)
    old_base, items = got
    d = base - old_base
    return [shift(x, d) for x in items] if d else list(items)


def _snapshot(env: dict) -> tuple | None:
    """``(key, sizes)`` of the environment before one inline parse: ``key`` holds the exact
    ``repr`` of every value that is not a list or a set (what the parse may read; ``None`` when
    one is longer than :data:`_SMALL`), ``sizes`` the lists' lengths and copies of the sets."""
    key = []
    sizes: dict[str, tuple] = {}
    for k, v in env.items():
        if isinstance(v, list):
            sizes[k] = ("l", len(v))
        elif isinstance(v, set):
            sizes[k] = ("s", set(v))
        else:
            r = repr(v)
            if len(r) > _SMALL:
                return None
            key.append((k, r))
            sizes[k] = ("v", r)
    return tuple(key), sizes


def _delta(env: dict, before: tuple | None) -> list | None:
    """What one inline parse did to the environment: ``[(key, kind, items)]`` with kind ``"l"``
    (items appended to a list), ``"s"`` (added to a set) or ``"v"`` (a small value set to a new
    one, kept as a copy); ``None`` when it did anything else (removed a key, shrank a list,
    changed a value's type, left a large value)."""
    import copy

    if before is None:
        return None
    sizes = before[1]
    out: list[tuple] = []
    if any(k not in env for k in sizes):
        return None
    for k, v in env.items():
        was = sizes.get(k)
        if isinstance(v, list):
            if was is not None and was[0] != "l":
                return None
            n = 0 if was is None else was[1]
            if len(v) < n:
                return None
            if len(v) > n:
                out.append((k, "l", list(v[n:])))
        elif isinstance(v, set):
            if was is not None and was[0] != "s":
                return None
            prev = set() if was is None else was[1]
            if not prev <= v:
                return None
            if len(v) != len(prev):
                out.append((k, "s", set(v - prev)))
        else:
            if was is not None and was[0] != "v":
                return None
            r = repr(v)
            if len(r) > _SMALL:
                return None
            if was is None or was[1] != r:
                out.append((k, "v", copy.deepcopy(v)))
    return out


def _rebind(value, src: str, content: str):
    """``value`` with every element of a tuple that *is* ``src`` replaced by ``content``: the
    markdown layer matches an inline parse's records to their token by the identity of the
    content string (``pos[2] is content``), and a reused parse recorded the old string."""
    if isinstance(value, tuple) and any(e is src for e in value):
        return tuple(content if e is src else e for e in value)
    return value


def _rebind_children(children: list, src: str, content: str) -> None:
    for c in children:
        if c.meta:
            c.meta = {k: _rebind(v, src, content) for k, v in c.meta.items()}
        if c.children:
            _rebind_children(c.children, src, content)


def _rebind_delta(delta: list, src: str, content: str) -> list:
    return [
        (k, kind, [_rebind(v, src, content) for v in items]) if kind == "l" else (k, kind, items)
        for k, kind, items in delta
    ]


def _replay(env: dict, delta: list) -> None:
    import copy

    for k, kind, items in delta:
        if kind == "l":
            env.setdefault(k, []).extend(items)
        elif kind == "s":
            env.setdefault(k, set()).update(items)
        else:
            env[k] = copy.deepcopy(items)
