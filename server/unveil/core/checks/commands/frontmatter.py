"""Commands in the frontmatter: ``command:`` values (under ``hooks:`` origin ``hook``; elsewhere,
e.g. ``mcpServers`` with an ``args:`` list judged as one argv, origin ``config``) and
``allowed-tools: Bash(…)`` patterns (origin ``permission``), each at its exact offsets."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from unveil.core import shell
from unveil.core.checks.commands.findings import command_findings, finalize
from unveil.core.checks.commands.judge import judge_script
from unveil.core.findings import Finding
from unveil.core.shell import OffsetMap, Word

if TYPE_CHECKING:
    from ruamel.yaml.nodes import Node, ScalarNode, SequenceNode

_BASH_PERM = re.compile(r"\bBash\(([^()]*(?:\([^()]*\)[^()]*)*)\)")


def _scalar_map(fm_text: str, base: int, node: ScalarNode) -> tuple[str, OffsetMap]:
    """The value of a YAML scalar node and the map of its characters to document offsets: exact
    for plain and quoted single-line scalars without escapes and for block scalars; else every
    character maps inside the scalar's span."""
    value = str(node.value)
    a, b = node.start_mark.index, node.end_mark.index
    raw = fm_text[a:b]
    style = node.style
    if style is None and raw == value:
        return value, OffsetMap.at(base + a)
    if style in ("'", '"') and raw[1:-1] == value:
        return value, OffsetMap.at(base + a + 1)
    lines = value.split("\n")
    pts = []
    pos = 0
    cursor = 0
    ok = True
    for ln in lines:
        if ln:
            k = raw.find(ln, cursor)
            if k < 0:
                ok = False
                break
            pts.append((pos, base + a + k))
            cursor = k + len(ln)
        else:
            pts.append((pos, base + a + cursor))
        pos += len(ln) + 1
    if ok and pts:
        return value, OffsetMap(tuple(pts))
    return value, OffsetMap(((0, base + a),), limit=(base + a, max(base + a, base + b - 1)))


def frontmatter_findings(ctx) -> list[Finding]:
    fm = ctx.parsed_frontmatter()
    if fm.span is None:
        return []
    text = ctx.doc.text
    fm_text = text[fm.span.yaml_start : fm.span.yaml_end]
    base = fm.span.yaml_start
    try:
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        from unveil.core.frontmatter import compose_shared

        node = compose_shared(fm_text, "commands")
    except Exception:  # noqa: BLE001 - invalid YAML: the loose lines are still searched below
        return _loose_frontmatter(fm_text, base)
    out: list[Finding] = []
    walked: set[tuple[int, bool]] = set()  # (node, under "hooks"): an alias is walked once

    def walk(n: Node, path: tuple[str, ...]) -> None:
        # Aliases make the tree a graph that can expand exponentially (a billion-laughs bomb:
        # 9 levels of 9 aliases is 387 million nodes). What a node yields depends only on the
        # node and on whether it lies under "hooks", so each pair is walked once.
        if isinstance(n, (MappingNode, SequenceNode)):
            seen_key = (id(n), "hooks" in path)
            if seen_key in walked:
                return
            walked.add(seen_key)
        if isinstance(n, MappingNode):
            pairs = {str(k.value): v for k, v in n.value if isinstance(k, ScalarNode)}
            for k, v in n.value:
                key = str(k.value) if isinstance(k, ScalarNode) else ""
                if key == "command" and isinstance(v, ScalarNode) and str(v.value).strip():
                    origin = "hook" if "hooks" in path else "config"
                    value, omap = _scalar_map(fm_text, base, v)
                    args = pairs.get("args")
                    if isinstance(args, SequenceNode) and args.value:
                        out.extend(_argv_findings(fm_text, base, v, args, origin))
                    else:
                        out.extend(command_findings(value, omap, origin))
                elif key.lower() in ("allowed-tools", "allowed_tools", "tools"):
                    items = v.value if isinstance(v, SequenceNode) else [v]
                    for it in items:
                        if isinstance(it, ScalarNode):
                            value, omap = _scalar_map(fm_text, base, it)
                            for m in _BASH_PERM.finditer(value):
                                inner = m.group(1)
                                cut = inner[:-2] if inner.endswith(":*") else inner
                                out.extend(command_findings(cut, omap.shift(m.start(1)), "permission"))
                else:
                    walk(v, path + (key,))
        elif isinstance(n, SequenceNode):
            for it in n.value:
                walk(it, path)

    walk(node, ())
    return out


def _argv_findings(
    fm_text: str, base: int, cmd_node: ScalarNode, args_node: SequenceNode, origin: str
) -> list[Finding]:
    """``command: bash`` + ``args: ["-c", "…"]`` (MCP servers): the argv is exec'd without a
    shell, so it is judged as one command built from the scalars, each at its own offsets."""
    from ruamel.yaml.nodes import ScalarNode

    words = []
    for n in [cmd_node, *args_node.value]:
        if not isinstance(n, ScalarNode):
            continue
        value, omap = _scalar_map(fm_text, base, n)
        words.append(Word(value, value, omap(0), omap(max(len(value) - 1, 0)) + 1, omap))
    if not words:
        return []
    script = shell.script_from_argv(words)
    return finalize(judge_script(script, origin), origin)


def _loose_frontmatter(fm_text: str, base: int) -> list[Finding]:
    out = []
    for m in re.finditer(r"(?m)^[ \t-]*command:[ \t]*(['\"]?)(.+?)\1[ \t]*$", fm_text):
        out.extend(command_findings(m.group(2), base + m.start(2), "hook"))
    return out
