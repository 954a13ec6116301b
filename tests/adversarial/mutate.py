#!/usr/bin/env python3
"""Adversarial mutation suite (issue 8, "Proof"): every labelled positive, transformed by every
class of evasion, must still be reported at warning or error on the payload's line.

Positives (payloads), each a one-line text with the unveil category that must find it:

* ``synthetic/LABELS.tsv`` risky-directive rows of ``../shared/corpus`` (the labelled line);
* ``tests/data/malicious-labels.tsv`` risky rows (the labelled line of the malicious file);
* the ``bad`` examples of every pattern rule (``check = "directives"``) of a security category
  (the example's line).

Hidden-content labels are not payloads here: they are carriers already (their mutations are the
carrier classes below applied to risky text). Markdown markers (list bullets, headings, quotes,
an enclosing HTML comment) are stripped from the payload line.

Each payload is placed in a carrier document (a skill: frontmatter, a heading, an intro
paragraph, the payload block, a closing line; analysed as ``.claude/skills/helper/SKILL.md``).
Class ``plain`` puts it there unchanged; a payload not found in ``plain`` depends on surroundings
the carrier does not give it (a frontmatter-only key, a settings file…) and is left out of every
class (counted as ``excluded``). The mutation classes (:data:`CLASSES`) are those of issue 8:
frontmatter value, YAML comment, alt text, link title, duplicate reference definition, collapsed
``<details>``, emphasis, split across lines, split across list items, HTML character references,
percent escapes, ``\\uXXXX`` escapes, confusable letters, base64, base32, hex, rot13, a
prohibition elsewhere in the paragraph, "for example" elsewhere in the paragraph, and translation
(``translations.toml``; prompt-injection, concealment, system-prompt-leakage and anti-refusal
payloads only).

A case is *found* when a finding of the payload's category, at warning or error, starts on one of
the payload's lines (1-based) of the mutated document.

:func:`benign_mutations` applies the same structural classes to the first prose line of benign
files (no payload) and reports every error the mutation creates (an error rule/count the original
file did not have).

Usage::

    python tests/adversarial/mutate.py              # per-class recall table (Markdown)
    python tests/adversarial/mutate.py --benign 50  # plus the benign check on 50 files
    python tests/adversarial/mutate.py --misses CLASS  # list the missed cases of one class
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from corpus_labels import MALICIOUS_LABELS, RISKY_LABEL_CATEGORY, read_tsv

from unveil.core.suppress import SECURITY_CATEGORIES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = Path(os.environ.get("UNVEIL_CORPUS", ROOT.parent / "shared" / "corpus"))
FLOORS = HERE / "floors.toml"
TRANSLATIONS = HERE / "translations.toml"
CARRIER_PATH = ".claude/skills/helper/SKILL.md"

RISKY = SECURITY_CATEGORIES - {"hidden-content"}  # the risky-directive categories (unveil.core.suppress)
FAMILY_OF = {"concealment": ["conceal"], "system-prompt-leakage": ["reveal"], "anti-refusal": ["refuse"]}
PERSONA = re.compile(r"\b(?:you\s+are\s+now|mode|persona|DAN|jailbreak|pretend|act\s+as|role)\b", re.I)


@dataclass
class Payload:
    text: str
    category: str
    source: str  # where it comes from: "synthetic/FILE:LINE", "malicious/FILE:LINE", "rule RULE bad[N]"


@dataclass
class Case:
    cls: str
    payload: Payload
    doc: str
    lines: tuple[int, ...]  # 1-based lines where the payload sits
    found: bool = False
    got: list = field(default_factory=list)


# ----------------------------------------------------------------------------- payloads

_MARKERS = re.compile(r"^\s*(?:(?:[-*+]|\d{1,3}[.)])\s+|#{1,6}\s+|>\s*)*")


def clean(line: str) -> str:
    """The payload text of a labelled line: markdown markers and an enclosing comment removed."""
    s = _MARKERS.sub("", line.rstrip("\r\n"))
    m = re.fullmatch(r"\s*<!--\s*(.*?)\s*-->\s*", s)
    if m:
        s = m.group(1)
    return s.strip()


def _line(path: Path, n: int) -> str:
    lines = path.read_bytes().decode("utf-8", "surrogateescape").splitlines()
    return lines[n - 1] if 0 < n <= len(lines) else ""


def payloads(corpus: Path = CORPUS) -> list[Payload]:
    """Every positive, de-duplicated by (text, category); corpus rows only when the corpus exists."""
    out: list[Payload] = []
    if (corpus / "synthetic" / "LABELS.tsv").is_file():
        for row in read_tsv(corpus / "synthetic" / "LABELS.tsv"):
            cat = RISKY_LABEL_CATEGORY.get(row["expected_category"])
            if cat is None:
                continue
            n = int(row["expected_line"])
            out.append(
                Payload(clean(_line(corpus / "synthetic" / row["file"], n)), cat, f"synthetic/{row['file']}:{n}")
            )
    if MALICIOUS_LABELS.is_file() and (corpus / "malicious").is_dir():
        for row in read_tsv(MALICIOUS_LABELS):
            if row["category"] not in RISKY:
                continue
            n = int(row["line"])
            p = corpus / "malicious" / row["file"]
            if p.is_file():
                out.append(Payload(clean(_line(p, n)), row["category"], f"malicious/{row['file']}:{n}"))
    from unveil.core.rules import bundled_rules

    for r in bundled_rules():
        if r.check != "directives" or r.category not in RISKY:
            continue
        for i, ex in enumerate(r.bad):
            lines = ex.text.splitlines()
            if 0 < (ex.line or 0) <= len(lines):
                out.append(Payload(clean(lines[ex.line - 1]), r.category, f"rule {r.id} bad[{i}]"))
    seen: set[tuple[str, str]] = set()
    uniq = []
    for p in out:
        key = (p.text, p.category)
        if p.text and key not in seen and not any(0xE0000 <= ord(c) <= 0xE007F for c in p.text):
            seen.add(key)
            uniq.append(p)
    return uniq


# ----------------------------------------------------------------------------- carriers

HEAD = "---\nname: helper\ndescription: Helps with the project build.\n---\n\n# Helper\n\nThis skill sets up the project.\n\n"
TAIL = "\n\nThat is all for the setup.\n"
HEAD_LINES = HEAD.count("\n")  # the block starts on line HEAD_LINES + 1


def _yaml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _block(body: str, first: int | None = None, count: int | None = None) -> tuple[str, tuple[int, ...]]:
    """A carrier with ``body`` as its block; the payload's lines are ``first``.. (relative to the
    block, 0-based; default: every line of the body)."""
    n = body.count("\n") + 1
    first = 0 if first is None else first
    count = n - first if count is None else count
    start = HEAD_LINES + 1
    return HEAD + body + TAIL, tuple(range(start + first, start + first + count))


def _words_split(s: str) -> tuple[str, str]:
    words = s.split(" ")
    if len(words) < 2:
        h = max(1, len(s) // 2)
        return s[:h], s[h:]
    k = len(words) // 2
    return " ".join(words[:k]), " ".join(words[k:])


def _emphasis(s: str) -> str:
    out = []
    for i, w in enumerate(s.split(" ")):
        if not re.fullmatch(r"[A-Za-z][\w'-]*", w):
            out.append(w)
        elif i % 3 == 0:
            out.append(f"**{w}**")
        elif i % 3 == 1:
            out.append(f"_{w}_")
        else:
            out.append(w)
    return " ".join(out)


def _entities(s: str) -> str:
    # every third letter as a decimal character reference (a single one is enough to break a regex)
    out, k = [], 0
    for ch in s:
        if ch.isalpha() and ch.isascii():
            k += 1
            if k % 3 == 1:
                out.append(f"&#{ord(ch)};")
                continue
        out.append(ch)
    return "".join(out)


def _percent(s: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in "aeiouAEIOU" else c for c in s)


def _uescape(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if c in "aeiouAEIOU" else c for c in s)


LOOKALIKES = {
    "a": "\u0430",
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "c": "\u0441",
    "x": "\u0445",
    "i": "\u0456",
    "s": "\u0455",
    "y": "\u0443",
}
"""Latin letter → the Cyrillic letter an attacker puts in its place (UTS #39 ``confusables.txt``
prototypes); shared with tests/unit/test_decode_reading_gaps.py."""
_CONFUSABLE = str.maketrans(LOOKALIKES)


def _rot13(s: str) -> str:
    return codecs.encode(s, "rot13")


def _mut_frontmatter(p):
    doc = f"---\nname: helper\ndescription: {_yaml(p.text)}\n---\n\n# Helper\n\nThis skill sets up the project.\n"
    return doc, (3,)


def _mut_yaml_comment(p):
    doc = f"---\nname: helper\n# {p.text}\ndescription: Helps with the project build.\n---\n\n# Helper\n\nThis skill sets up the project.\n"
    return doc, (3,)


def _mut_alt(p):
    return _block(f"![{p.text.replace(']', ')')}](docs/logo.png)")


def _mut_link_title(p):
    return _block(f"See the [guide](https://example.com/guide {_yaml(p.text)}) for details.")


def _mut_refdef(p):
    body = f"See the [guide] for details.\n\n[guide]: https://example.com/guide\n[guide]: https://example.com/guide {_yaml(p.text)}"
    return _block(body, 3, 1)


def _mut_details(p):
    return _block(f"<details>\n<summary>Notes</summary>\n\n{p.text}\n\n</details>", 3, 1)


def _mut_emphasis(p):
    return _block(_emphasis(p.text))


def _mut_split_lines(p):
    a, b = _words_split(p.text)
    return _block(f"{a}\n{b}")


def _mut_split_list(p):
    a, b = _words_split(p.text)
    return _block(f"- {a}\n- {b}")


def _mut_entities(p):
    return _block(_entities(p.text))


def _mut_percent(p):
    return _block(_percent(p.text))


def _mut_escape(p):
    return _block(_uescape(p.text))


def _mut_confusable(p):
    return _block(p.text.translate(_CONFUSABLE))


def _mut_base64(p):
    return _block(base64.b64encode(p.text.encode()).decode())


def _mut_base32(p):
    return _block(base64.b32encode(p.text.encode()).decode())


def _mut_hex(p):
    return _block(p.text.encode().hex())


def _mut_rot13(p):
    return _block(_rot13(p.text))


def _sentence(s: str) -> str:
    return s if re.search(r"[.!?。！？]\s*$", s) else s + "."


def _mut_prohibition(p):
    # three placements of a prohibition elsewhere in the paragraph (one case each)
    s = _sentence(p.text)
    return [
        _block(f"Never commit secrets to the repository. {s}"),
        _block(f"{s} Do not skip the tests."),
        _block(f"Don't use npm for this\n{p.text}", 1, 1),
    ]


def _mut_example(p):
    s = _sentence(p.text)
    return [
        _block(f"For example, the setup is simple. {s}"),
        _block(f"{s} For example, see docs/setup.md."),
        _block(f"Examples of good commit messages are in CONTRIBUTING.md\n{p.text}", 1, 1),
    ]


_TRANSLATIONS: dict | None = None


def _mut_translate(p):
    global _TRANSLATIONS
    if _TRANSLATIONS is None:
        _TRANSLATIONS = tomllib.loads(TRANSLATIONS.read_text(encoding="utf-8"))
    if p.category == "prompt-injection":
        families = ["persona"] if PERSONA.search(p.text) else ["override"]
    else:
        families = FAMILY_OF.get(p.category)
    if not families:
        return []
    return [_block(t) for fam in families for phrases in _TRANSLATIONS[fam].values() for t in phrases]


def _crlf(made):
    """The document of a mutation with every line break ``\r\n`` (same lines)."""
    if isinstance(made, list):
        return [_crlf(m) for m in made]
    doc, lines = made
    return doc.replace("\r\n", "\n").replace("\n", "\r\n"), lines


def _mut_base64_lines(p):
    enc = base64.b64encode(p.text.encode()).decode()
    k = max(8, -(-len(enc) // 3 // 4) * 4)  # three lines or so, whole base64 quanta
    return _block("\n".join(enc[i : i + k] for i in range(0, len(enc), k)))


#: mutation class → function(payload) → (doc, lines) or a list of them (``[]``: not applicable)
CLASSES = {
    "plain": lambda p: _block(p.text),
    "frontmatter": _mut_frontmatter,
    "yaml-comment": _mut_yaml_comment,
    "alt-text": _mut_alt,
    "link-title": _mut_link_title,
    "duplicate-refdef": _mut_refdef,
    "details": _mut_details,
    "emphasis": _mut_emphasis,
    "split-lines": _mut_split_lines,
    "split-list": _mut_split_list,
    "entities": _mut_entities,
    "percent": _mut_percent,
    "escapes": _mut_escape,
    "confusables": _mut_confusable,
    "base64": _mut_base64,
    "base32": _mut_base32,
    "hex": _mut_hex,
    "rot13": _mut_rot13,
    "prohibition-elsewhere": _mut_prohibition,
    "example-elsewhere": _mut_example,
    "translate": _mut_translate,
    # line breaks as a Windows editor writes them (LSP and CommonMark end lines at all three)
    "crlf-frontmatter": lambda p: _crlf(_mut_frontmatter(p)),
    "crlf-split-list": lambda p: _crlf(_mut_split_list(p)),
    "crlf-base64-lines": lambda p: _crlf(_mut_base64_lines(p)),
}
#: classes that restructure a line without adding a payload (the benign check applies these)
STRUCTURAL = [c for c in CLASSES if c not in ("plain", "translate")]
#: structural classes that hide or encode the line: there a hidden-content or obfuscation error is
#: the point (a benign sentence moved into alt text is an instruction the reader does not see), so
#: the benign check only forbids errors of the other (risky-directive) categories
HIDING = frozenset(
    {
        "yaml-comment",
        "alt-text",
        "link-title",
        "duplicate-refdef",
        "entities",
        "percent",
        "escapes",
        "confusables",
        "base64",
        "base32",
        "hex",
        "rot13",
        "crlf-base64-lines",
    }
)
CARRIER_CATEGORIES = frozenset({"hidden-content", "obfuscation"})


# ----------------------------------------------------------------------------- evaluation


_MEMO: dict[tuple[str, str], list] = {}


def _findings(doc: str, path: str = CARRIER_PATH) -> list[tuple[str, str, str, int]]:
    """``(rule, category, severity label, 1-based line)`` of every finding (memoised per text:
    the translate class builds the same documents for many payloads)."""
    key = (doc, path)
    if key not in _MEMO:
        from unveil.core.analyze import analyze

        a = analyze(doc, path, count_tokens=False)
        _MEMO[key] = [(f.rule, f.category, f.severity.label, a.doc.position(f.start).line + 1) for f in a.findings]
    return _MEMO[key]


def _found(case: Case) -> bool:
    case.got = _findings(case.doc)
    return any(
        cat == case.payload.category and sev in ("error", "warning") and line in case.lines
        for _, cat, sev, line in case.got
    )


def run(corpus: Path = CORPUS, classes: list[str] | None = None) -> dict:
    """Build and evaluate every case. Returns ``{"payloads": n, "excluded": [...], "classes":
    {cls: {"found": k, "total": n, "misses": [Case, ...]}}}``."""
    todo = classes or list(CLASSES)
    report = {"payloads": 0, "excluded": [], "classes": {c: {"found": 0, "total": 0, "misses": []} for c in todo}}
    for p in payloads(corpus):
        doc, lines = CLASSES["plain"](p)
        base = Case("plain", p, doc, lines)
        if not _found(base):
            report["excluded"].append(p)
            continue
        report["payloads"] += 1
        for cls in todo:
            built = CLASSES[cls](p)
            for doc, lines in built if isinstance(built, list) else [built]:
                c = Case(cls, p, doc, lines)
                c.found = _found(c) if cls != "plain" else True
                st = report["classes"][cls]
                st["total"] += 1
                st["found"] += c.found
                if not c.found:
                    st["misses"].append(c)
    return report


def recall(st: dict) -> float:
    return st["found"] / st["total"] if st["total"] else 1.0


def load_floors(path: Path = FLOORS) -> dict[str, float]:
    """Per-class minimum recall (0..1) from ``floors.toml`` (table ``[floor]``)."""
    return {k: float(v) for k, v in tomllib.loads(path.read_text(encoding="utf-8"))["floor"].items()}


def _first_prose_line(lines: list[str]) -> int | None:
    in_fm = bool(lines) and lines[0].strip() == "---"
    fence = None
    for i, ln in enumerate(lines):
        if in_fm:
            if i > 0 and ln.strip() == "---":
                in_fm = False
            continue
        s = ln.strip()
        m = re.match(r"(`{3,}|~{3,})", s)
        if fence:
            if s.startswith(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if (
            len(s) >= 30
            and re.match(r"[A-Za-z]", s)
            and not s.startswith(("<", "|", "#"))
            and "`" not in s
            and "[" not in s
        ):
            return i
    return None


def benign_files(corpus: Path = CORPUS, n: int = 50) -> list[tuple[Path, str]]:
    """``n`` benign files spread evenly over ``benign/MANIFEST.tsv`` (deterministic), each with the
    path it is analysed under."""
    rows = read_tsv(corpus / "benign" / "MANIFEST.tsv")
    step = max(1, len(rows) // n)
    out = []
    for row in rows[::step][:n]:
        p = corpus / "benign" / (row["owner/repo"].replace("/", "__") + "/" + row["path"])
        if p.is_file():
            out.append((p, row["path"]))
    return out


def benign_mutations(corpus: Path = CORPUS, n: int = 50) -> dict:
    """Apply every structural class to the first prose line of ``n`` benign files (the line's own
    text is the "payload"; frontmatter and YAML-comment classes add it to the file's frontmatter).
    Returns ``{"files": k, "cases": m, "new_errors": [(file, cls, rule, category), ...], "carrier_errors":
    [...]}``: ``new_errors`` are errors the mutation created (for the :data:`HIDING` classes only
    those outside :data:`CARRIER_CATEGORIES`), ``carrier_errors`` the hidden-content/obfuscation
    errors of the hiding classes (reported, expected)."""
    files = cases = 0
    new_errors, carrier_errors = [], []
    for path, as_path in benign_files(corpus, n):
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        lines = text.split("\n")
        i = _first_prose_line(lines)
        if i is None:
            continue
        files += 1
        base = Counter((r, c) for r, c, sev, _ in _findings(text, as_path) if sev == "error")
        p = Payload(lines[i].strip(), "none", str(path))
        for cls in STRUCTURAL:
            built = CLASSES[cls](p)
            for doc, _plines in built if isinstance(built, list) else [built]:
                # splice the mutated block back in place of the line (frontmatter classes: prepend
                # their frontmatter when the file has none, else keep the carrier document)
                if cls in ("frontmatter", "yaml-comment"):
                    mutated = doc
                else:
                    block = doc[len(HEAD) : len(doc) - len(TAIL)]
                    mutated = "\n".join(lines[:i] + [block] + lines[i + 1 :])
                cases += 1
                if cls in ("frontmatter", "yaml-comment"):
                    got = Counter((r, c) for r, c, sev, _ in _findings(mutated) if sev == "error")
                    extra = got - Counter((r, c) for r, c, sev, _ in _findings(HEAD + TAIL) if sev == "error")
                else:
                    got = Counter((r, c) for r, c, sev, _ in _findings(mutated, as_path) if sev == "error")
                    extra = got - base
                for rule, cat in extra:
                    entry = (str(path.relative_to(corpus)), cls, rule, cat)
                    (carrier_errors if cls in HIDING and cat in CARRIER_CATEGORIES else new_errors).append(entry)
    return {"files": files, "cases": cases, "new_errors": new_errors, "carrier_errors": carrier_errors}


def table(report: dict, floors: dict[str, float] | None = None) -> str:
    """The per-class recall table (Markdown)."""
    floors = floors or {}
    out = ["| mutation class | found / cases | recall | floor |", "| --- | --- | --- | --- |"]
    for cls, st in report["classes"].items():
        fl = floors.get(cls)
        out.append(
            f"| {cls} | {st['found']}/{st['total']} | {100 * recall(st):.1f}% | "
            f"{'' if fl is None else f'{100 * fl:.0f}%'} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--benign", type=int, default=0, help="also mutate N benign files (no payload)")
    ap.add_argument("--misses", metavar="CLASS", help="print the missed cases of CLASS")
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT / "server"))
    report = run(args.corpus)
    print(f"{report['payloads']} payloads ({len(report['excluded'])} excluded: not found in the plain carrier)\n")
    print(table(report, load_floors() if FLOORS.is_file() else None))
    if args.misses:
        for c in report["classes"][args.misses]["misses"]:
            print(
                f"\n- {c.payload.source} [{c.payload.category}] lines {c.lines}\n  {c.doc[len(HEAD) : -len(TAIL)]!r}\n  got {c.got}"
            )
    ben = None
    if args.benign:
        ben = benign_mutations(args.corpus, args.benign)
        print(
            f"\nbenign: {ben['files']} files, {ben['cases']} mutated cases, {len(ben['new_errors'])} new errors, "
            f"{len(ben['carrier_errors'])} hidden-content/obfuscation errors of hiding classes"
        )
        for e in ben["new_errors"]:
            print("  ", *e)
        print("  carrier errors by class and rule:", dict(Counter((e[1], e[2]) for e in ben["carrier_errors"])))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "payloads": report["payloads"],
                    "excluded": [p.source for p in report["excluded"]],
                    "classes": {c: {"found": s["found"], "total": s["total"]} for c, s in report["classes"].items()},
                    "benign": ben,
                },
                indent=1,
                ensure_ascii=False,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
