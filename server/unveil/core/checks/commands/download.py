"""SUP011 (download-then-execute, in every form: ``fetch | sh``, a downloaded file run later, a
fetch in a command or process substitution or a variable run by a shell, an interpreter given a
URL, an encoded payload decoded into a shell, with checksum / signature verification lowering it
to info) and SUP012 (``npx``/``uvx``/``pipx``/``dlx`` running a package from a remote or git
source)."""

from __future__ import annotations

import re
from typing import Sequence

from unveil.core import shell
from unveil.core.checks.commands.hits import Judge, clip, severity_for, strong_source, urls_in
from unveil.core.checks.commands.locations import normalize_path
from unveil.core.checks.commands.vocabulary import EXEC_WORDS, RULE_DOWNLOAD_EXEC, RULE_REMOTE_PACKAGE, URL
from unveil.core.checks.commands.words import (
    downloaded_files,
    fetches_to_stdout,
    flag_word,
    has_flag,
    reads_stdin_program,
    script_fetches,
    script_operand,
)
from unveil.core.findings import Severity
from unveil.core.shell import Command, OffsetMap, Pipeline, Script, Word


def _same_file(a: str, b: str) -> bool:
    a, b = normalize_path(a), normalize_path(b)
    if not a or not b:
        return False
    if a == b:
        return True
    ba, bb = a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1]
    return bool(ba) and ba == bb and ("/" in a or "/" in b or "$" in a or "$" in b)


def _decodes(stages: Sequence[Command]) -> bool:
    for c in stages:
        name, args, _w = c.effective()
        if name in ("base64", "base32") and any(
            a.text in ("-d", "-D", "--decode") or a.text.startswith("-d") for a in args
        ):
            return True
        if name in ("xxd",) and any("r" in a.text for a in args if a.text.startswith("-")):
            return True
        if name in ("gunzip", "zcat", "uudecode", "rev", "bunzip2", "unxz"):
            return True
        if name == "openssl" and any(a.text in ("-d", "base64", "enc") for a in args):
            return True
    return False


def _exec_message(how: str, fetch: Command, why: str | None) -> str:
    urls = urls_in(fetch)
    src = urls[0] if urls else clip(" ".join(w.text for w in fetch.argv), 60)
    msg = f"Downloads code and runs it ({how}): {clip(src, 70)}"
    if why:
        msg += f" ({why})"
    return msg


def _as_root(c: Command) -> bool:
    """Whether ``c`` runs with root rights (``sudo``, ``doas``, ``su -c``, ``pkexec`` wrapping it)."""
    return any(
        w.text in ("sudo", "doas", "pkexec") or (w.text == "su" and i + 1 < len(c.argv))
        for i, w in enumerate(c.argv[:3])
    )


def judge_download_exec(j: Judge, s: Script) -> None:
    # 1. pipelines: fetch | … | interpreter
    tainted: dict[str, Command] = {}
    downloads: list[tuple[str, Command, int]] = []  # (file, fetch command, pipeline index)
    verified_after: list[int] = []
    for pi, p in enumerate(s.pipelines):
        stages = p.stages
        for i, st in enumerate(stages):
            f = st if fetches_to_stdout(st) else (script_fetches(st.body) if st.body is not None else None)
            if f is None:
                continue
            for later in stages[i + 1 :]:  # `curl … | tee f`, `curl … | gunzip > f`: the file holds the download
                if later.effective()[0] == "tee":
                    downloads.extend((w.text, f, pi) for w in later.effective()[1] if not w.text.startswith("-"))
                downloads.extend(
                    (r.target.text, f, pi)
                    for r in later.redirects
                    if r.writes and r.target is not None and r.target.text != "/dev/null"
                )
            for k in range(i + 1, len(stages)):
                ex = stages[k]
                if reads_stdin_program(ex) or (
                    ex.body is not None and any(reads_stdin_program(c) for c in ex.body.commands())
                ):
                    why = strong_source(urls_in(f), f.effective()[1])
                    if _decodes(stages[i + 1 : k]):
                        why = why or "decoded before it runs"
                    via = " | ".join(c.effective()[0] or "…" for c in stages[i + 1 : k + 1])
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        severity_for(j.auto, why is not None),
                        p.start,
                        p.end,
                        _exec_message(f"piped into {via}", f, why),
                        form="pipe",
                    )
                    break
        _decoded_payload(j, stages, s.depth)
        # assignments from a fetch taint the variable
        for st in stages:
            for name, w in st.assigns:
                for sub in w.subs:
                    f = script_fetches(sub)
                    if f is not None:
                        tainted[name] = f
            # 2. executors whose program is a substitution that fetches
            _exec_substitution(j, st, tainted)
            for fn in downloaded_files(st):
                downloads.append((fn, st, pi))
            if _is_verifier(st):
                verified_after.append(pi)
        # 3. run a downloaded file
        for st in stages:
            target = _executed_file(st)
            if target is None:
                continue
            for fn, f, dpi in downloads:
                if dpi <= pi and f is not st and _same_file(fn, target.text):
                    verified = any(dpi <= v <= pi for v in verified_after) or _is_verifier_in(p)
                    why = strong_source(urls_in(f), f.effective()[1])
                    if why is None and _as_root(st):
                        why = "run as root"
                    sev = Severity.INFO if verified and not j.auto else severity_for(j.auto, why is not None)
                    if verified:
                        why = (why + "; " if why else "") + "checksum or signature verified before running"
                    first = s.pipelines[dpi]
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        sev,
                        min(first.start, st.start),
                        max(st.end, p.end),
                        _exec_message(f"saved as {fn} then run", f, why),
                        form="file",
                    )
                    break
    # interpreters given a URL as their program (deno run https://…)
    for p in s.pipelines:
        for st in p.stages:
            name, args, _w = st.effective()
            if name in ("deno", "bun") or name in shell.INTERPRETERS:
                op = script_operand([a for a in args if a.text != "run"], shell.INTERPRETERS.get(name))
                if op is not None and URL.match(op.text):
                    why = strong_source([op.text], args)
                    j.add(
                        RULE_DOWNLOAD_EXEC,
                        severity_for(j.auto, why is not None),
                        st.start,
                        st.end,
                        f"Runs a script straight from a URL: {clip(op.text, 70)}" + (f" ({why})" if why else ""),
                        form="url-operand",
                    )


def _decode_literal(data: str, stages: Sequence[Command]) -> str | None:
    """Apply the decoders of ``stages`` (``base64 -d``, ``base32 -d``, ``xxd -r -p``, ``rev``) to
    ``data``; ``None`` when a stage is something else or the data does not decode."""
    import base64
    import binascii

    out = data
    for c in stages:
        name, args, _w = c.effective()
        flags = " ".join(a.text for a in args)
        try:
            if name == "base64" and re.search(r"-d|-D|--decode", flags):
                out = base64.b64decode(re.sub(r"\s", "", out) + "===", validate=False).decode("utf-8")
            elif name == "base32" and re.search(r"-d|--decode", flags):
                t = re.sub(r"\s", "", out).upper()
                out = base64.b32decode(t + "=" * (-len(t) % 8)).decode("utf-8")
            elif name == "xxd" and "-r" in flags:
                out = binascii.unhexlify(re.sub(r"[^0-9a-fA-F]", "", out)).decode("utf-8")
            elif name == "rev":
                out = "\n".join(line[::-1] for line in out.split("\n"))
            else:
                return None
        except (ValueError, UnicodeDecodeError, binascii.Error):
            return None
    return out


def _decoded_payload(j: Judge, stages: Sequence[Command], depth: int) -> None:
    """``echo <base64> | base64 -d | sh``: the decoded text is what runs, so it is parsed and judged
    too (its findings point at the encoded literal; decode-and-execute itself is SUP002's)."""
    if len(stages) < 3 or depth >= shell.MAX_DEPTH:
        return
    first = stages[0]
    name, args, _w = first.effective()
    if name not in ("echo", "printf") or not args or any(a.expands for a in args):
        return
    lit = [a for a in args if not a.text.startswith("-")]
    if not lit:
        return
    for k in range(2, len(stages)):
        if reads_stdin_program(stages[k]):
            payload = _decode_literal(" ".join(a.text for a in lit), stages[1:k])
            if payload:
                w = lit[-1] if len(lit) == 1 else lit[0]
                omap = OffsetMap(((0, w.start),), limit=(w.start, max(w.start, lit[-1].end - 1)))
                sub = shell.parse(payload, omap, depth + 1)
                for h in j.nested(sub, j.origin):
                    h.message += " (decoded from the encoded text piped into " + stages[k].effective()[0] + ")"
                    h.start, h.end = lit[0].start, lit[-1].end  # decoded offsets do not map back: the literal
                    j.hits.append(h)
            return


def _is_verifier(c: Command) -> bool:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    if name in ("sha256sum", "sha512sum", "sha1sum", "b2sum", "md5sum", "shasum"):
        return any(
            t in ("-c", "--check") or (t.startswith("-") and "c" in t[1:] and not t.startswith("--")) for t in texts
        )
    if name in ("gpg", "gpgv"):
        return name == "gpgv" or "--verify" in texts
    if name in ("cosign", "slsa-verifier"):
        return any(t.startswith("verify") for t in texts)
    if name in ("minisign", "signify"):
        return "-V" in texts
    if name == "openssl":
        return "-verify" in texts
    return False


def _is_verifier_in(p: Pipeline) -> bool:
    return any(_is_verifier(c) for c in p.stages)


def _executed_file(c: Command) -> Word | None:
    """The file ``c`` runs: ``./f``/``/tmp/f`` as the command, a shell's or interpreter's script
    operand, ``source f``/``. f``."""
    if not c.argv:
        return None
    name, args, _w = c.effective()
    if not name:
        return None
    first = None
    words = list(c.argv)
    # the wrapped command word itself
    for w in words:
        if shell.basename(w.text) == name:
            first = w
            break
    if first is not None and ("/" in first.text) and name not in shell.SHELLS and name not in shell.INTERPRETERS:
        return first
    if name in EXEC_WORDS:
        return args[0] if args and not args[0].subs else None
    if name in shell.SHELLS and not has_flag(args, "c"):
        return script_operand(args, None)
    lang = shell.INTERPRETERS.get(name)
    if lang and not any(a.text in shell.CODE_FLAGS.get(lang, ()) for a in args):
        return script_operand([a for a in args if a.text != "run"], lang)
    return None


def _exec_substitution(j: Judge, st: Command, tainted: dict[str, Command]) -> None:
    name, args, _w = st.effective()
    cands: list[Word] = []
    if st.argv and st.argv[0].subs and not name.isidentifier():
        cands.append(st.argv[0])  # `$(curl …)` as the command itself
    elif name in EXEC_WORDS:
        cands.extend(args)
    elif name in shell.SHELLS:
        v = flag_word(args, "c")
        cands.extend([v] if v is not None else [])
        op = script_operand(args, None)
        if op is not None and v is None:
            cands.append(op)
    elif name in shell.INTERPRETERS:
        lang = shell.INTERPRETERS[name]
        for k, a in enumerate(args):
            if a.text in shell.CODE_FLAGS.get(lang, ()) and k + 1 < len(args):
                cands.append(args[k + 1])
        op = script_operand([a for a in args if a.text != "run"], lang)
        if op is not None:
            cands.append(op)
    for w in cands:
        f = None
        for sub in w.subs:
            f = script_fetches(sub)
            if f is not None:
                break
        how = ""
        if f is not None:
            how = ("process substitution" if w.process else "command substitution") + f" run by {name or 'the shell'}"
        else:
            for var, fc in tainted.items():
                if re.search(r"\$\{?" + re.escape(var) + r"\b", w.text):
                    f = fc
                    how = f"${var} (assigned from a download) run by {name}"
                    break
        if f is not None:
            why = strong_source(urls_in(f), f.effective()[1])
            j.add(
                RULE_DOWNLOAD_EXEC,
                severity_for(j.auto, why is not None),
                st.start,
                st.end,
                _exec_message(how, f, why),
                form="substitution",
            )
            return


_REMOTE_SPEC = re.compile(
    r"(?i)^(?:git\+|git://|github:|gitlab:|bitbucket:|gist:|https?://|file:|ssh://|"
    r"[\w.-]+/[\w.-]+(?:#\S*)?$)"
)


def judge_remote_package(j: Judge, c: Command) -> None:
    name, args, _w = c.effective()
    texts = [a.text for a in args]
    spec = None
    if name in ("npx", "bunx", "pnpx"):
        for a in args:
            if a.text.startswith("-"):
                continue
            spec = a
            break
        for k, t in enumerate(texts):
            if t in ("-p", "--package") and k + 1 < len(args):
                spec = args[k + 1]
            elif t.startswith("--package="):
                spec = args[k]
    elif name in ("pnpm", "yarn") and texts[:1] == ["dlx"] or name == "npm" and texts[:1] in (["exec"], ["x"]):
        rest = [a for a in args[1:] if not a.text.startswith("-")]
        spec = rest[0] if rest else None
    elif name in ("uvx", "pipx") or (name == "uv" and texts[:2] == ["tool", "run"]):
        for k, t in enumerate(texts):
            if t in ("--from", "--spec") and k + 1 < len(args):
                spec = args[k + 1]
            elif t.startswith("--from=") or t.startswith("--spec="):
                spec = args[k]
        if spec is None:
            rest = [a for a in args if not a.text.startswith("-") and a.text not in ("run", "tool")]
            spec = rest[0] if rest else None
    if spec is None:
        return
    value = spec.text.split("=", 1)[1] if spec.text.startswith("--") else spec.text
    if not _REMOTE_SPEC.match(value) or value.startswith("@"):
        return
    if re.match(r"^[\w.-]+/[\w.-]+$", value) and name in ("uvx", "pipx", "uv"):
        return  # a relative path for the Python tools
    yes = any(t in ("-y", "--yes") for t in texts)
    why = strong_source([value], ())
    j.add(
        RULE_REMOTE_PACKAGE,
        severity_for(j.auto, why is not None),
        c.start,
        c.end,
        f"Runs a package fetched from a remote or git source{' without a prompt' if yes else ''}: "
        f"{clip(value, 70)}" + (f" ({why})" if why else ""),
    )
