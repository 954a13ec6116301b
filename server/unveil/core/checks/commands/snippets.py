"""Inline Python and JavaScript (``python -c`` bodies, here-documents, fenced blocks): network sends
of secrets, the environment or files (EXF011/EXF012), exec/eval of fetched code (SUP011),
persistence writes (PER011), secret reads (SNP015), and shell strings passed to ``os.system`` /
``subprocess`` / ``execSync``, judged as shell."""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable

from unveil.core import shell
from unveil.core.checks.commands.hits import Hit, Judge, ScriptJudge, clip, severity_for
from unveil.core.checks.commands.locations import match_location, secret_in
from unveil.core.checks.commands.vocabulary import (
    RULE_DOWNLOAD_EXEC,
    RULE_PERSISTENCE,
    RULE_SECRET_PATH,
    RULE_SEND_SECRET,
    RULE_UPLOAD,
)
from unveil.core.findings import Severity
from unveil.core.shell import OffsetMap, Snippet

_PY_SEND = {
    "post",
    "put",
    "patch",
    "request",
    "urlopen",
    "send",
    "sendall",
    "sendto",
    "sendmail",
    "upload_file",
    "put_object",
    "connect_ex",
    "Request",
}


_PY_FETCH = {"get", "urlopen", "urlretrieve", "read", "text", "content"}


_JS_STR = re.compile(r"""(['"`])((?:\\.|(?!\1)[^\\\n]){0,2000})\1""")


_JS_SEND = re.compile(
    r"\b(?:fetch|axios(?:\.(?:post|put|patch|request))?|https?\.request|request\.post|got\.post|"
    r"superagent\.post|\$\.post|navigator\.sendBeacon|net\.connect|socket\.write|WebSocket)\s*\("
)


_JS_ENV = re.compile(r"\bprocess\.env\b(?!\s*\.\s*\w|\s*\[)")


_JS_BROWSER_SEND = re.compile(
    r"\b(?:fetch|axios(?:\.(?:post|put|patch|request))?|\$\.(?:post|ajax)|navigator\.sendBeacon|\.send)\s*\("
    r"|\bnew\s+(?:Image|WebSocket|EventSource)\b|\.src\s*="
)
"""Where a page sends data: a request call, a beacon, an image or socket opened on a URL."""
_JS_BROWSER_DUMP = re.compile(
    r"\bdocument\.cookie\b|\b(?:localStorage|sessionStorage)\b(?!\s*\.\s*(?:getItem|setItem|removeItem|key|length|clear)\b)"
    r"|\bindexedDB\b|\bnavigator\.credentials\b"
)
"""The page's secrets wholesale: every cookie (``document.cookie``), the whole of local or session
storage (not one item read with ``getItem``: an app reading its own token is ordinary), IndexedDB,
stored credentials."""
_ABS_URL = re.compile(r"""['"`]https?://[^'"`\s]+""")


_JS_READ = re.compile(r"\b(?:readFileSync|readFile|createReadStream)\s*\(")


_JS_EXEC = re.compile(
    r"\b(?:execSync|exec|spawnSync|spawn|execFileSync|execFile)\s*\(\s*(['\"`])((?:\\.|(?!\1)[^\\\n]){0,2000})\1"
)


_JS_EVAL_FETCH = re.compile(
    r"\b(?:eval|Function|vm\.runIn\w+)\s*\([^)]{0,200}?\b(?:fetch|https?\.get|axios|got)\b", re.S
)


_JS_WRITE = re.compile(r"\b(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream)\s*\(")


def judge_snippet(sn: Snippet, origin: str, nested: ScriptJudge) -> list[Hit]:
    """Hits of a Python or JavaScript snippet (``python -c`` bodies, here-documents, fences):
    network sends of secret files or the environment (EXF011/EXF012), ``exec`` of downloaded code
    (SUP011), shell strings passed to ``os.system``/``subprocess``/``execSync`` (parsed as shell,
    judged recursively by ``nested``), writes to persistence locations (PER011) and secret paths (SNP015)."""
    if sn.language == "python":
        return _judge_python(sn, origin, nested)
    if sn.language == "javascript":
        return _judge_js(sn, origin, nested)
    return []


def _judge_python(sn: Snippet, origin: str, nested: ScriptJudge) -> list[Hit]:
    j = Judge(origin, nested)
    try:
        tree = ast.parse(sn.text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _judge_js(Snippet("python", sn.text, sn.omap, sn.via), origin, nested, python=True)
    a, b = sn.start, sn.end
    strings: list[str] = []
    sends = False
    env = False
    reads: list[str] = []
    writes: list[str] = []
    fetch_exec = False
    shell_strings: list[tuple[str, ast.expr]] = []

    def const_str(n: ast.AST) -> str | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            return n.value
        if isinstance(n, ast.JoinedStr):
            return "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "~" for v in n.values
            )
        if isinstance(n, ast.Call) and _attr(n.func) in ("join", "expanduser", "Path", "expandvars") and n.args:
            parts = [const_str(x) for x in n.args]
            if all(p is not None for p in parts):
                return "/".join(parts)  # type: ignore[arg-type]
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Div)):
            left, right = const_str(n.left), const_str(n.right)
            if right is not None:
                return (left or "~") + ("/" if isinstance(n.op, ast.Div) else "") + right
        return None

    try:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.append(node.value)
            if isinstance(node, ast.Attribute) and node.attr == "environ":
                env = env or True
            if isinstance(node, ast.Call):
                fn = _attr(node.func)
                if fn in _PY_SEND:
                    sends = True
                if fn == "open" and node.args:
                    p = const_str(node.args[0])
                    mode = const_str(node.args[1]) if len(node.args) > 1 else None
                    for kw in node.keywords:
                        if kw.arg == "mode":
                            mode = const_str(kw.value)
                    if p is not None:
                        (writes if mode and any(m in mode for m in "wax") else reads).append(p)
                if fn in ("read_text", "read_bytes") and isinstance(node.func, ast.Attribute):
                    p = (
                        const_str(node.func.value.args[0])
                        if isinstance(node.func.value, ast.Call) and node.func.value.args
                        else None
                    )
                    if p:
                        reads.append(p)
                if fn in ("write_text", "write_bytes") and isinstance(node.func, ast.Attribute):
                    p = (
                        const_str(node.func.value.args[0])
                        if isinstance(node.func.value, ast.Call) and node.func.value.args
                        else None
                    )
                    if p:
                        writes.append(p)
                if fn in ("exec", "eval", "compile") and any(
                    _attr(getattr(x, "func", None)) in _PY_FETCH or _calls_fetch(x) for x in node.args
                ):
                    fetch_exec = True
                if (
                    fn
                    in (
                        "system",
                        "popen",
                        "run",
                        "call",
                        "check_call",
                        "check_output",
                        "Popen",
                        "getoutput",
                        "getstatusoutput",
                        "spawn",
                    )
                    and node.args
                ):
                    arg = node.args[0]
                    s = const_str(arg)
                    if s is not None:
                        shell_strings.append((s, arg))
                    elif isinstance(arg, (ast.List, ast.Tuple)):
                        parts = [const_str(x) for x in arg.elts]
                        if parts and all(p is not None for p in parts):
                            shell_strings.append((" ".join(_q(p) for p in parts), arg))  # type: ignore[arg-type]
    except RecursionError:
        pass
    if fetch_exec:
        j.add(
            RULE_DOWNLOAD_EXEC,
            severity_for(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code downloads code and runs it (exec/eval of a fetched response)",
            form="snippet",
        )
    secret_hits = [loc.label for p in reads + strings if (loc := secret_in(p)) is not None]
    if sends and (secret_hits or env):
        what = ", ".join(dict.fromkeys(secret_hits + (["the environment"] if env and _env_wholesale(sn.text) else [])))
        if what:
            j.add(RULE_SEND_SECRET, Severity.ERROR, a, b, f"{_lang_label(sn)} code sends {what} over the network")
    elif sends and reads:
        j.add(
            RULE_UPLOAD,
            severity_for(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code reads {clip(reads[0], 40)} and sends data over the network",
        )
    elif secret_hits:
        j.add(RULE_SECRET_PATH, severity_for(j.auto, False), a, b, f"{_lang_label(sn)} code reads {secret_hits[0]}")
    _persistence_write(j, sn, writes, str)
    for s, node in shell_strings:
        off = _python_offset(sn, node)
        sub = shell.parse(s, off, depth=1)
        j.hits.extend(h for h in j.nested(sub, j.origin))
    return j.hits


def _persistence_write(j: Judge, sn: Snippet, paths: Iterable[str], shown: Callable[[str], str]) -> None:
    """PER011 for the first of ``paths`` (string values the snippet writes to) that is a
    persistence location, the path quoted as ``shown(path)``; nothing when none is."""
    for p in paths:
        loc = match_location(p, "persistence_paths")
        if loc is not None:
            j.add(
                RULE_PERSISTENCE,
                severity_for(j.auto, False),
                sn.start,
                sn.end,
                f"Persistence: {_lang_label(sn)} code writes {loc.label} {shown(p)}",
            )
            return


def _q(s: str) -> str:
    return s if re.fullmatch(r"[\w./:@%+=,-]+", s) else "'" + s.replace("'", "'\\''") + "'"


def _env_wholesale(text: str) -> bool:
    return (
        bool(re.search(r"\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b))", text)) or "process.env" in text
    )


def _python_offset(sn: Snippet, node: ast.expr) -> OffsetMap:
    """Offsets of a Python string literal's value (contiguous when the literal has no escapes)."""
    try:
        lines = sn.text.split("\n")
        idx = sum(len(x) + 1 for x in lines[: node.lineno - 1]) + len(
            lines[node.lineno - 1].encode("utf-8")[: node.col_offset].decode("utf-8", "replace")
        )
        q = sn.text[idx : idx + 3]
        skip = 3 if q in ('"""', "'''") else (1 if q[:1] in "\"'" else 0)
        return sn.omap.shift(idx + skip)
    except Exception:  # noqa: BLE001
        return sn.omap


def _calls_fetch(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and _attr(n.func) in ("urlopen", "get", "urlretrieve", "request"):
            return True
    return False


def _attr(fn: ast.AST | None) -> str:
    if isinstance(fn, ast.Attribute):
        return fn.attr
    if isinstance(fn, ast.Name):
        return fn.id
    return ""


def _lang_label(sn: Snippet) -> str:
    return {"python": "Python", "javascript": "JavaScript"}.get(sn.language, sn.language)


def _browser_dump(text: str) -> str:
    """The page's secrets (cookies, whole storage) that ``text`` sends to an absolute URL in one
    statement: the dump and the URL inside the arguments of one send call, or within 300 code points
    after a send; ``""`` when none."""
    for m in _JS_BROWSER_SEND.finditer(text):
        window = text[m.start() : m.end() + 600]
        if not _ABS_URL.search(window):
            continue
        found = [d.group(0) for d in _JS_BROWSER_DUMP.finditer(window)]
        if found:
            names = {"document.cookie": "the page's cookies"}
            return ", ".join(dict.fromkeys(names.get(f, f) for f in found))
    return ""


def _abs_url(text: str) -> str:
    m = _ABS_URL.search(text)
    return m.group(0).strip("'\"`") if m else "a remote host"


def _judge_js(sn: Snippet, origin: str, nested: ScriptJudge, python: bool = False) -> list[Hit]:
    j = Judge(origin, nested)
    text = sn.text
    a, b = sn.start, sn.end
    strings = [m.group(2) for m in _JS_STR.finditer(text)]
    joined = re.findall(r"path\.join\(([^)]{0,300})\)", text)
    for args in joined:
        parts = [m.group(2) for m in _JS_STR.finditer(args)]
        if parts:
            strings.append("~/" + "/".join(parts))
    secrets = [loc.label for s in strings if (loc := secret_in(s)) is not None]
    sends = bool(_JS_SEND.search(text)) or (python and bool(re.search(r"\b(?:requests|httpx|urllib)\b", text)))
    env = bool(_JS_ENV.search(text)) or (python and _env_wholesale(text))
    if _JS_EVAL_FETCH.search(text) or (
        python and re.search(r"\bexec\s*\([^)]{0,200}\b(?:urlopen|requests\.get)", text)
    ):
        j.add(
            RULE_DOWNLOAD_EXEC,
            severity_for(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code downloads code and runs it (eval of a fetched response)",
            form="snippet",
        )
    dump = _browser_dump(text)
    if dump:
        j.add(
            RULE_SEND_SECRET, Severity.ERROR, a, b, f"{_lang_label(sn)} code sends {dump} to {clip(_abs_url(text), 60)}"
        )
    elif sends and (secrets or env):
        what = ", ".join(dict.fromkeys(secrets + (["the environment"] if env else [])))
        j.add(RULE_SEND_SECRET, Severity.ERROR, a, b, f"{_lang_label(sn)} code sends {what} over the network")
    elif sends and _JS_READ.search(text):
        j.add(
            RULE_UPLOAD,
            severity_for(j.auto, False),
            a,
            b,
            f"{_lang_label(sn)} code reads a file and sends it over the network",
        )
    elif secrets:
        j.add(RULE_SECRET_PATH, severity_for(j.auto, False), a, b, f"{_lang_label(sn)} code reads {secrets[0]}")
    if _JS_WRITE.search(text):
        _persistence_write(j, sn, strings, lambda s: clip(s, 50))
    for m in _JS_EXEC.finditer(text):
        sub = shell.parse(m.group(2).replace("\\'", "'").replace('\\"', '"'), sn.omap.shift(m.start(2)), depth=1)
        j.hits.extend(j.nested(sub, j.origin))
    return j.hits
