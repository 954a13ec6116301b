"""CSS hiding judged by a CSS parser (tinycss2), not by string lists.

:func:`hidden_by_declarations` takes the declarations that apply to one element (its ``style``
attribute, plus matching rules of ``<style>`` blocks, see :class:`StyleSheet`) and says whether
they hide the element's text from a reader, and why. The tests (CSS Values 4 / CSS Color 4
syntax, parsed by ``tinycss2.parse_blocks_contents`` and ``tinycss2.color4``):

* ``display: none``; ``visibility: hidden | collapse``;
* ``opacity`` ≤ 0.05 (number or percentage);
* ``color`` with alpha ≤ 0.05 (``rgba()``, ``hsla()``, ``rgb(r g b / a)``, ``#RRGGBBAA``,
  ``#RGBA``, ``transparent``), or equal to the element's own (or an ancestor's, passed in as
  ``background``) ``background``/``background-color`` colour;
* ``font-size`` 0 (any unit) or below 1px / 0.1em; ``height``/``max-height``/``width``/
  ``max-width`` 0 together with ``overflow: hidden`` (or ``clip``);
* off-screen positions: ``left``/``top`` ≤ -1000px (also ``right``/``margin-left``/``margin-top``),
  ``text-indent`` ≤ -999px (units: px, or em/rem at 16px);
* ``clip: rect(…)`` whose box is at most 1px wide or high; ``clip-path`` ``inset(≥50%)``,
  ``circle(0)``, ``ellipse(0 …)`` or a polygon whose points all coincide;
* ``transform: scale(0)`` (also ``scaleX(0)``/``scaleY(0)``).

Later declarations override earlier ones and ``!important`` wins, as in the cascade. Malformed
CSS never raises: tinycss2 reports parse errors as tokens, which are skipped.

Sources: https://www.w3.org/TR/css-color-4/, https://www.w3.org/TR/css-display-3/,
https://www.w3.org/TR/css-masking-1/ (clip, clip-path).
"""

from __future__ import annotations

from dataclasses import dataclass

import tinycss2

try:  # tinycss2 ≥ 1.3 parses CSS Color 4 (rgb(r g b / a), hwb, lab …)
    from tinycss2 import color4 as _color
except ImportError:  # pragma: no cover - older tinycss2
    from tinycss2 import color3 as _color

OPACITY_MAX = 0.05
"""Opacity (0–1) at or below which text counts as invisible."""
OFFSCREEN_PX = -1000.0
"""``left``/``top`` at or below this many CSS pixels put the element off screen."""
TEXT_INDENT_PX = -999.0
"""``text-indent`` at or below this many CSS pixels pushes the text out of its box."""
_PX = {
    "px": 1.0,
    "em": 16.0,
    "rem": 16.0,
    "pt": 4 / 3,
    "pc": 16.0,
    "in": 96.0,
    "cm": 96 / 2.54,
    "mm": 96 / 25.4,
    "q": 96 / 101.6,
    "vw": 10.0,
    "vh": 10.0,
    "ch": 8.0,
    "ex": 8.0,
}


def _tokens(decl) -> list:
    return [t for t in decl.value if t.type not in ("whitespace", "comment")]


def parse_declarations(css: str) -> list[tuple[str, list, bool]]:
    """``(lower-case name, value tokens without whitespace, important)`` for each declaration of
    a declaration list (a ``style`` attribute or a rule's block)."""
    out: list[tuple[str, list, bool]] = []
    try:
        items = tinycss2.parse_blocks_contents(css, skip_whitespace=True, skip_comments=True)
    except Exception:  # noqa: BLE001 - never raise on hostile CSS
        return out
    for d in items:
        if getattr(d, "type", "") == "declaration":
            out.append((d.lower_name, _tokens(d), bool(d.important)))
    return out


def cascade(decls: list[tuple[str, list, bool]]) -> dict[str, list]:
    """The winning value tokens per property name (later wins; ``!important`` beats normal)."""
    won: dict[str, tuple[list, bool]] = {}
    for name, value, important in decls:
        prev = won.get(name)
        if prev is None or important or not prev[1]:
            won[name] = (value, important)
    return {k: v for k, (v, _i) in won.items()}


def _length_px(tok) -> float | None:
    """A length token in CSS pixels (``0`` without unit is 0), else ``None``."""
    if tok.type == "number":
        return float(tok.value) if tok.value == 0 else None
    if tok.type == "dimension":
        f = _PX.get(tok.lower_unit)
        return float(tok.value) * f if f is not None else None
    return None


def _is_zero(tok) -> bool:
    if tok.type in ("number", "dimension", "percentage"):
        return tok.value == 0
    return False


def _ident(tokens) -> str:
    return tokens[0].lower_value if tokens and tokens[0].type == "ident" else ""


def color_of(tokens):
    """A parsed colour (with ``.alpha`` 0–1 and sRGB channels), or ``None``."""
    if not tokens:
        return None
    try:
        return _color.parse_color(tokens[0])
    except Exception:  # noqa: BLE001
        return None


def _rgba(c) -> tuple[float, float, float, float] | None:
    if c is None or isinstance(c, str):  # "currentcolor" comes back as a string
        return None
    try:
        if hasattr(c, "to"):
            s = c.to("srgb")
            r, g, b = (float(x) for x in list(s.coordinates)[:3])
            return (round(r, 3), round(g, 3), round(b, 3), float(s.alpha))
        return (round(c.red, 3), round(c.green, 3), round(c.blue, 3), float(c.alpha))
    except Exception:  # noqa: BLE001
        return None


def _background(values: dict[str, list]):
    for key in ("background-color", "background"):
        v = values.get(key)
        if v:
            for t in v:  # `background: #fff url(x)` — the first token that parses as a colour
                rgba = _rgba(color_of([t]))
                if rgba is not None:
                    return rgba
    return None


def background_of(decls: list[tuple[str, list, bool]]):
    """The element's own background colour as an ``(r, g, b, a)`` tuple, or ``None``."""
    return _background(cascade(decls))


def _clip_rect_hides(fn) -> bool:
    nums = [t for t in fn.arguments if t.type in ("number", "dimension", "percentage")]
    px = [(_length_px(t) if t.type != "percentage" else None) for t in nums]
    known = [p for p in px if p is not None]
    if len(px) != 4 or len(known) != 4:
        return False
    top, right, bottom, left = known
    return (right - left) <= 1 or (bottom - top) <= 1


def _clip_path_hides(fn) -> bool:
    name = fn.lower_name
    args = [t for t in fn.arguments if t.type not in ("whitespace", "comment")]
    if name == "inset":
        vals = [t for t in args if t.type in ("percentage", "number", "dimension")]
        return any(t.type == "percentage" and t.value >= 50 for t in vals[:4])
    if name == "circle":
        return bool(args) and _is_zero(args[0])
    if name == "ellipse":
        return bool(args) and (_is_zero(args[0]) or (len(args) > 1 and _is_zero(args[1])))
    if name == "polygon":
        pts: list[tuple] = []
        cur: list = []
        for t in args:
            if t.type == "literal" and t.value == ",":
                pts.append(tuple(cur))
                cur = []
            elif t.type in ("percentage", "number", "dimension"):
                cur.append((t.value, getattr(t, "lower_unit", t.type)))
        if cur:
            pts.append(tuple(cur))
        return len(pts) >= 1 and len(set(pts)) == 1
    return False


def hidden_by_declarations(decls: list[tuple[str, list, bool]], background=None) -> str | None:
    """Why ``decls`` (in cascade order) hide the element's text, e.g. ``"opacity: 0.01"``, or
    ``None``. ``background`` is the inherited background colour ``(r, g, b, a)`` or ``None``."""
    v = cascade(decls)
    if _ident(v.get("display", [])) == "none":
        return "display: none"
    if _ident(v.get("visibility", [])) in ("hidden", "collapse"):
        return f"visibility: {_ident(v['visibility'])}"
    op = v.get("opacity")
    if op:
        t = op[0]
        val = t.value / 100 if t.type == "percentage" else t.value if t.type == "number" else None
        if val is not None and val <= OPACITY_MAX:
            return f"opacity: {tinycss2.serialize(op).strip()}"
    col = v.get("color")
    if col:
        rgba = _rgba(color_of(col))
        if rgba is not None:
            if rgba[3] <= OPACITY_MAX:
                return f"transparent colour ({tinycss2.serialize(col).strip()})"
            bg = _background(v) or background
            if bg is not None and bg[3] > OPACITY_MAX and rgba[:3] == bg[:3]:
                return f"text colour equals the background ({tinycss2.serialize(col).strip()})"
    fs = v.get("font-size")
    if fs:
        px = _length_px(fs[0]) if fs[0].type != "percentage" else (fs[0].value / 100 * 16)
        if px is not None and px < 1:
            return f"font-size: {tinycss2.serialize(fs).strip()}"
    overflow = " ".join(t.lower_value for t in v.get("overflow", []) if t.type == "ident")
    overflow += " " + " ".join(
        t.lower_value for k in ("overflow-x", "overflow-y") for t in v.get(k, []) if t.type == "ident"
    )
    if "hidden" in overflow or "clip" in overflow:
        for key in ("height", "max-height", "width", "max-width"):
            val = v.get(key)
            if val and (_is_zero(val[0]) or ((_length_px(val[0]) or 1) < 1 and val[0].type != "percentage")):
                return f"{key}: 0 with overflow: hidden"
    for key in ("left", "top", "right", "margin-left", "margin-top"):
        val = v.get(key)
        if val:
            px = _length_px(val[0])
            if px is not None and px <= OFFSCREEN_PX:
                return f"off-screen ({key}: {tinycss2.serialize(val).strip()})"
    ti = v.get("text-indent")
    if ti:
        px = _length_px(ti[0])
        if px is not None and px <= TEXT_INDENT_PX:
            return f"off-screen (text-indent: {tinycss2.serialize(ti).strip()})"
    clip = v.get("clip")
    if clip and clip[0].type == "function" and clip[0].lower_name == "rect" and _clip_rect_hides(clip[0]):
        return f"clip: {tinycss2.serialize(clip).strip()}"
    cp = v.get("clip-path")
    if cp and cp[0].type == "function" and _clip_path_hides(cp[0]):
        return f"clip-path: {tinycss2.serialize(cp).strip()}"
    tr = v.get("transform")
    for t in tr or ():
        if t.type == "function" and t.lower_name in ("scale", "scalex", "scaley"):
            args = [a for a in t.arguments if a.type in ("number", "percentage")]
            if args and args[0].value == 0:
                return f"transform: {tinycss2.serialize(tr).strip()}"
    return None


@dataclass(frozen=True)
class _Selector:
    tag: str | None
    ids: frozenset[str]
    classes: frozenset[str]
    attrs: frozenset[str]


@dataclass
class StyleSheet:
    """Rules of ``<style>`` blocks, matched by their last compound selector (type, ``#id``,
    ``.class``, ``[attr]``; combinators and pseudo-classes before it are ignored, so a rule may
    match more elements than a browser would — the safe direction for a hidden-text check)."""

    rules: list[tuple[_Selector, list[tuple[str, list, bool]]]]

    @classmethod
    def parse(cls, css: str) -> "StyleSheet":
        out = []
        try:
            items = tinycss2.parse_stylesheet(css, skip_whitespace=True, skip_comments=True)
        except Exception:  # noqa: BLE001
            return cls([])
        for r in items:
            if getattr(r, "type", "") != "qualified-rule":
                continue
            decls = parse_declarations(tinycss2.serialize(r.content))
            if not decls:
                continue
            for sel in _split_selectors(r.prelude):
                out.append((sel, decls))
        return cls(out)

    def declarations_for(self, tag: str, attrs: dict[str, str]) -> list[tuple[str, list, bool]]:
        """Declarations of every rule whose selector matches the element, in source order."""
        if not self.rules:
            return []
        ids = frozenset((attrs.get("id") or "").split())
        classes = frozenset((attrs.get("class") or "").split())
        out: list[tuple[str, list, bool]] = []
        for sel, decls in self.rules:
            if sel.tag not in (None, "*", tag):
                continue
            if not sel.ids <= ids or not sel.classes <= classes or not all(a in attrs for a in sel.attrs):
                continue
            out.extend(decls)
        return out

    def extend(self, other: "StyleSheet") -> None:
        self.rules.extend(other.rules)


def _split_selectors(prelude) -> list[_Selector]:
    groups: list[list] = [[]]
    for t in prelude:
        if t.type == "literal" and t.value == ",":
            groups.append([])
        else:
            groups[-1].append(t)
    out = []
    for g in groups:
        # last compound selector: tokens after the last whitespace / combinator
        last: list = []
        while g and g[-1].type == "whitespace":
            g.pop()
        for t in g:
            if t.type == "whitespace" or (t.type == "literal" and t.value in (">", "+", "~")):
                last = []
            else:
                last.append(t)
        tag = None
        ids, classes, attrs = set(), set(), set()
        i = 0
        while i < len(last):
            t = last[i]
            if t.type == "ident" and i == 0:
                tag = t.lower_value
            elif t.type == "literal" and t.value == "*" and i == 0:
                tag = "*"
            elif t.type == "hash":
                ids.add(t.value)
            elif t.type == "literal" and t.value == "." and i + 1 < len(last) and last[i + 1].type == "ident":
                classes.add(last[i + 1].value)
                i += 1
            elif t.type == "[] block":
                names = [a for a in t.content if a.type == "ident"]
                if names:
                    attrs.add(names[0].lower_value)
            elif t.type == "literal" and t.value == ":":
                break  # pseudo-class / element: ignore the rest (match broadly)
            i += 1
        if tag is None and not ids and not classes and not attrs:
            continue
        out.append(_Selector(tag, frozenset(ids), frozenset(classes), frozenset(attrs)))
    return out
