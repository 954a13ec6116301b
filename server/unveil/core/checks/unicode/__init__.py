"""Character-level hidden-content checks: rules HID001–HID013 (see ``rules/hidden-content.toml``).

Pipeline (research notes ``hiding-techniques.md`` §5):

1. **Fast path** — pure-ASCII text without C0 controls (other than TAB/LF/CRLF) returns nothing.
2. **Candidates** — one compiled ``regex`` class (Unicode 17 data: Default_Ignorable, Bidi_Control,
   Co, Cn, Cs, Cc, Zl/Zp, a few blank look-alikes) finds runs of suspicious code points. For speed
   it runs only over the non-ASCII stretches of the text; ASCII controls come from a separate
   ``re`` scan.
3. **Buckets and context** — each run is split by technique (tags, zero-width, bidi, …); each
   piece is judged in context (emoji sequences, scripts, right-to-left text, code, frontmatter)
   and becomes at most one :class:`Finding` covering exactly its code points.
4. **Confusables** — words mixing Latin letters with Cyrillic/Greek/Armenian/Cherokee look-alikes
   whose skeleton is ASCII.

All offsets are code-point offsets into ``ctx.doc.text``. Every finding carries
``data["codepoints"]`` (distinct ``"U+XXXX"`` strings in order of appearance).

Modules, by rule family: :mod:`.invisible` (HID001, HID002, HID006, HID007), :mod:`.bidi`
(HID003, HID004), :mod:`.variation` (HID005), :mod:`.blanks` (HID008), :mod:`.unassigned`
(HID009, HID010), :mod:`.controls` (HID011, HID012), :mod:`.confusables` (HID013); shared:
:mod:`.pipeline` (:func:`~.pipeline.check`, the caps), :mod:`.scan` (per-document state and
context), :mod:`.candidates` (code-point classes), :mod:`.decode` (hidden-data decoders),
:mod:`.messages` (message text and fixes).
"""

from unveil.core.checks.unicode.pipeline import check

__all__ = ["check"]
