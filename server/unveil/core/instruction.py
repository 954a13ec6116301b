"""Instruction-likeness: does a piece of hidden text read as an instruction to the model?

The checks call :func:`classify` on text a reader does not see (HTML comment bodies, reference
definition titles, attribute values, fence info strings, collapsed ``<details>`` bodies) and pick
the finding's severity from the verdict: ``instruction`` → error, ``prose`` → warning,
``short`` → info (``empty`` → nothing to report).

Text is classified on a normalised *model view* (hiding-techniques.md §5 step 7): NFKC, then
casefold, with every Default_Ignorable code point removed (``regex`` ``\\p{DI}``), so zero-width
characters or full-width letters cannot split a keyword.

Signal families (names used in :attr:`Verdict.signals`):

* ``override`` — "ignore/disregard/forget (all) previous instructions", "new instructions:".
* ``concealment`` — "do not tell/mention/reveal", "silently", "without telling the user".
* ``role-marker`` — prompt-control and role markers: a line starting ``system:``/``assistant:``/
  ``agent:``, ``<IMPORTANT>``, ``<|im_start|>``, ``[INST]``, "you are now", "as an AI".
* ``command`` — shell commands: curl, wget, ``| sh``, ``sh -c``, eval, npx, pip install, npm i,
  powershell, iex, ``base64 -d``, ``rm -rf``, ``chmod +x``.
* ``secret`` — secret paths: ~/.ssh, id_rsa, ``.env`` (not ``.env.example``), ~/.aws/credentials,
  ``$…TOKEN``/``$…SECRET`` variables, cloud metadata endpoints.
* ``credential`` — credential words (API key, access token, password, credentials); weak alone.
* ``url`` — http(s) URLs and webhooks; weak alone.
* ``imperative`` — "you must/should/will/need to", "always", "never", "make sure", "ensure"; weak.
* ``directive`` — an imperative governing a *risky* action verb, one with effects beyond the
  answer ("you must run", "always send", "make sure to upload") or a sentence/list item opening
  with one ("Run …", "- Delete …"); see :data:`_RISKY_VERBS`.
* ``request`` — the same with any action verb, including the ones templates use to ask for
  content ("Include version information", "Add more sections as needed", "Use tabs").
* ``action`` — an action verb anywhere (run, execute, send, upload, read, fetch, install, add,
  include, use, call, print, write, delete, append, set, …).
* ``maintainer`` — the note is addressed to people editing the file ("maintainers:", "TODO",
  "NOTE:", "when editing this file", "update the template", "this section is generated").

Decision (documented choice, tuned on the benign corpus):

* ``instruction`` when a *strong* signal is present — override, concealment, role marker, or a
  secret path together with an action verb, command or URL ("cat ~/.ssh/id_rsa") — or a pipe into a shell / ``base64 -d`` / ``iex``. Without a ``maintainer`` signal also
  when: a command comes with an action verb (or the text is a bare command of ≤ 12 words); a URL
  or credential word comes with a request; or a risky directive is present and the text does not
  read as a template placeholder for the person filling in the file ("Describe your project's …",
  "Fill in …", "e.g."). A ``maintainer`` note ("This section is generated; update the template
  instead") is addressed to humans editing the file, so its commands, URLs and directives are
  prose; it never demotes the strong signals.
* otherwise ``prose`` when the text has at least :data:`PROSE_WORDS` words, ``short`` when it
  has fewer, ``empty`` when it has none.

Plain prose that merely contains "always" is prose: "always" is an imperative signal, but
without an action verb or a strong signal it does not make an instruction. A request with a
content verb ("Include version information" in a prompt template) is ``prose``/``short``: it is
addressed to the model but carries no risk, and treating it as an instruction made ordinary
prompt templates in the benign corpus look like attacks.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import regex

PROSE_WORDS = 6
"""Word count from which non-instruction text is ``prose`` rather than ``short``."""

_DI = regex.compile(r"\p{DI}+")
_WS = regex.compile(r"\s+")

_RISKY_VERBS = (
    "run|execute|exec|send|upload|post|fetch|download|install|delete|remove|exfiltrate|forward|email|"
    "push|approve|merge|grant|disable|transmit|leak|share|curl|wget|reveal|expose|overwrite|commit|"
    "deploy|publish|bypass"
)
"""Action verbs that do something with effects outside the answer (files, network, approvals)."""

_ACTION_VERBS = _RISKY_VERBS + (
    "|add|include|use|set|write|append|open|load|import|insert|change|replace|output|reply|respond|say|"
    "tell|create|save|store|report|generate|list|describe|mention|show|read|copy|modify|edit|print|echo|"
    "cat|call|invoke"
)
"""Every action verb (risky ones and the ones templates use to ask for content)."""

_PATTERNS: dict[str, list[regex.Pattern]] = {
    "override": [
        regex.compile(
            r"\b(?:ignore|disregard|forget|override|bypass|skip|drop)\b[^.\n]{0,40}?"
            r"\b(?:previous|prior|above|earlier|preceding|all|any|your|the|system|safety|original|existing|other)\b"
            r"[^.\n]{0,30}?\b(?:instructions?|rules?|guidelines?|guidance|prompts?|directions?|directives?|"
            r"constraints?|polic(?:y|ies)|messages?|context|restrictions?|safeguards?)\b"
        ),
        regex.compile(r"\bforget (?:everything|all|what)\b"),
        regex.compile(r"\bnew (?:system )?instructions?\s*:"),
        regex.compile(r"\b(?:instead|from now on),? (?:you )?(?:must|will|should|now)\b"),
    ],
    "concealment": [
        regex.compile(
            r"\b(?:do not|don't|dont|never|must not|should not|shouldn't)\s+(?:\w+\s+){0,2}?"
            r"(?:tell|mention|reveal|inform|disclose|notify|alert)\b"
        ),
        regex.compile(
            r"\b(?:do not|don't|dont|never|must not|should not|shouldn't)\s+(?:\w+\s+){0,2}?"
            r"(?:show|say|report|let|ask)\b[^.\n]{0,40}\b(?:user|human|operator|anyone)\b"
        ),
        regex.compile(r"\b(?:silently|secretly|covertly|stealthily)\s+(?:\w+\s+){0,2}?(?:" + _ACTION_VERBS + r")\b"),
        regex.compile(r"\b(?:" + _ACTION_VERBS + r")\b[^.\n]{0,60}\b(?:silently|secretly|covertly|stealthily)\b"),
        regex.compile(
            r"\bwithout\s+(?:\w+\s+){0,2}?(?:telling|informing|notifying|asking|alerting|mentioning|"
            r"confirmation|confirming|letting)\b[^.\n]{0,30}\b(?:user|human|operator|anyone|them|know)\b"
        ),
        regex.compile(r"\b(?:keep|leave) (?:this|it|these) (?:hidden|secret|private|between us)\b"),
        regex.compile(r"\b(?:user|human|they) (?:must|should|will) not (?:know|see|notice|find out)\b"),
    ],
    "role-marker": [
        regex.compile(
            r"(?m)^\s*(?:\[?(?:system|assistant|developer|agent|ai|model|llm|claude|copilot|cursor|codex|gemini)\]?)\s*:"
        ),
        regex.compile(r"<\s*/?\s*(?:important|system|instructions?|admin|developer|human_chat_interruption)\s*>"),
        regex.compile(r"<\|\s*im_(?:start|end)\s*\|>|<\|(?:system|user|assistant|endoftext)\|>|\[/?inst\]|<</?sys>>"),
        regex.compile(r"\byou are now\b|\bas an ai\b|\bact as (?:a |an )?(?:system|admin|root)\b"),
        regex.compile(r"\b(?:maintenance|developer|debug|god|admin) mode\b"),
        regex.compile(
            r"\b(?:note|message|instructions?) (?:to|for) (?:the )?(?:ai|assistant|agent|model|llm|claude|copilot)\b"
        ),
        regex.compile(r"\b(?:dear|hey|attention) (?:ai|assistant|agent|model|llm|claude|copilot)\b"),
    ],
    "command": [
        regex.compile(r"\b(?:curl|wget)\b\s+\S"),
        regex.compile(r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\bsh\s+-c\b|\bbash\s+-c\b"),
        regex.compile(r"\beval\s*[\(\"'$`]|\bexec\s*\("),
        regex.compile(r"\bnpx\s+\S|\bpip3?\s+install\b|\bnpm\s+(?:i|install|exec)\b|\buvx\s+\S"),
        regex.compile(r"\bpowershell\b|\biex\b|\binvoke-expression\b|\binvoke-webrequest\b|\birm\s+\S"),
        regex.compile(r"\bbase64\s+(?:-d|--decode|-D)\b|\bchmod\s+\+x\b|\brm\s+-rf\b|\bnc\s+-e\b"),
    ],
    "secret": [
        regex.compile(r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\bauthorized_keys\b"),
        regex.compile(r"(?<![\w.\-/])\.env\b(?!\.example|\.sample|\.template)"),
        regex.compile(r"\.aws/credentials\b|\.netrc\b|\.pypirc\b|\.docker/config\.json|\.kube/config"),
        regex.compile(r"\$\{?[a-z_]*(?:secret|token|api_?key|password|passwd|credential)[a-z_]*\}?"),
        regex.compile(r"169\.254\.169\.254|metadata\.google\.internal"),
    ],
    "credential": [
        regex.compile(
            r"\b(?:api[_ -]?keys?|access[_ -]?tokens?|secret[_ -]?keys?|private[_ -]?keys?|"
            r"auth[_ -]?tokens?|passwords?|credentials|session cookies?|secrets)\b"
        ),
    ],
    "url": [
        regex.compile(r"\bhttps?://\S+|\bwebhooks?\b|\bngrok\b|\bpastebin\b"),
    ],
    "imperative": [
        regex.compile(r"\byou (?:must|should|will|need to|have to|are required to|shall)\b"),
        regex.compile(r"\b(?:always|never|make sure|ensure|be sure to|remember to|do not|don't|must)\b"),
    ],
    "directive": [
        regex.compile(
            r"\b(?:you (?:must|should|will|need to|have to|are required to|shall)|always|never|make sure(?: to| you)?|"
            r"ensure(?: you| that you)?|be sure to|remember to|please|must|do)\s+(?:\w+\s+){0,2}?(?:"
            + _RISKY_VERBS
            + r")\b"
        ),
        regex.compile(
            r"(?:^|[.!?:;]\s+|^\s*(?:[-*>]|\d+[.)])\s*)(?:(?:then|and|also|first|next|now|finally),?\s+)?(?:"
            + _RISKY_VERBS
            + r")\b",
            regex.M,
        ),
    ],
    "request": [
        regex.compile(
            r"\b(?:you (?:must|should|will|need to|have to|are required to|shall)|always|never|make sure(?: to| you)?|"
            r"ensure(?: you| that you)?|be sure to|remember to|please|must|do)\s+(?:\w+\s+){0,2}?(?:"
            + _ACTION_VERBS
            + r")\b"
        ),
        regex.compile(
            r"(?:^|[.!?:;]\s+|^\s*(?:[-*>]|\d+[.)])\s*)(?:(?:then|and|also|first|next|now|finally),?\s+)?(?:"
            + _ACTION_VERBS
            + r")\b",
            regex.M,
        ),
    ],
    "action": [
        regex.compile(r"\b(?:" + _ACTION_VERBS + r")\b"),
    ],
    "maintainer": [
        regex.compile(
            r"(?m)^\s*(?:maintainers?|contributors?|editors?|authors?|reviewers?|note|todo|fixme|xxx|hack)\b\s*[:\-]"
        ),
        regex.compile(
            r"\bwhen (?:editing|updating|changing|modifying) this (?:file|section|document|page|list|table)\b"
        ),
        regex.compile(r"\b(?:update|edit|change) the (?:template|generator|source|script)\b"),
        regex.compile(r"\bthis (?:file|section|table|list|block|document) (?:is|was) (?:auto-?)?generated\b"),
        regex.compile(r"\b(?:auto-?generated|do not edit|don't edit)\b"),
        regex.compile(
            r"\b(?:do not|don't|please don't|please do not) (?:remove|modify|edit|change|delete|touch)\b"
            r"(?: or (?:remove|modify|edit|change|delete))? (?:this|these) (?:section|line|comment|marker|block|file)s?\b"
        ),
        regex.compile(
            r"\b(?:keep|please keep) (?:this|the) (?:list|table|section) (?:sorted|alphabetical|up to date)\b"
        ),
        regex.compile(r"\bfor (?:maintainers|contributors|editors|reviewers|authors)\b"),
    ],
}

_STRONG = ("override", "concealment", "role-marker", "secret")
_UNDEMOTABLE_COMMAND = regex.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b|\bbase64\s+(?:-d|--decode|-D)\b|\biex\b|\binvoke-expression\b"
)

ORDER = (
    "override",
    "concealment",
    "role-marker",
    "command",
    "secret",
    "credential",
    "url",
    "imperative",
    "directive",
    "request",
    "action",
    "maintainer",
)


@dataclass(frozen=True)
class Verdict:
    """``level`` is ``"instruction"`` (addressed to the model: imperatives, overrides, concealment,
    commands, URLs, secret paths), ``"prose"`` (natural-language text), ``"short"`` (a few words,
    a marker) or ``"empty"``. ``signals`` names what matched, for messages (see module doc)."""

    level: str
    signals: tuple[str, ...] = ()

    @property
    def strong(self) -> bool:
        """True when an override, concealment, role-marker or secret-path signal matched."""
        return any(s in _STRONG for s in self.signals)


def model_view(text: str) -> str:
    """The normalised text a model effectively reads: NFKC, casefolded, Default_Ignorable code
    points removed, whitespace runs collapsed to one space per line (newlines kept)."""
    t = unicodedata.normalize("NFKC", text)
    t = _DI.sub("", t).casefold()
    return "\n".join(_WS.sub(" ", line).strip() for line in t.splitlines())


def signals(text: str) -> tuple[str, ...]:
    """Names of the signal families found in ``text`` (normalised with :func:`model_view`),
    in the fixed order of :data:`ORDER`."""
    view = model_view(text)
    return tuple(name for name in ORDER if any(p.search(view) for p in _PATTERNS[name]))


def classify(text: str) -> Verdict:
    """Classify hidden ``text`` as ``instruction``, ``prose``, ``short`` or ``empty``.

    Never raises (any unexpected failure degrades to the word-count verdict)."""
    try:
        words = model_view(text).split()
    except Exception:  # noqa: BLE001 - never raise
        words = str(text).split()
    if not words:
        return Verdict("empty")
    try:
        found = signals(text)
    except Exception:  # noqa: BLE001
        found = ()
    s = set(found)
    maintainer = "maintainer" in s
    wordy = "prose" if len(words) >= PROSE_WORDS else "short"
    if s & {"override", "concealment", "role-marker"}:
        return Verdict("instruction", found)
    if "secret" in s and (s & {"action", "request", "directive", "command", "url"}):
        return Verdict("instruction", found)
    if "command" in s and _UNDEMOTABLE_COMMAND.search(model_view(text)):
        return Verdict("instruction", found)
    if not maintainer:
        acting = "request" in s or "action" in s
        if "command" in s and (acting or len(words) <= 12):
            return Verdict("instruction", found)
        if ("url" in s or "credential" in s) and "request" in s:
            return Verdict("instruction", found)
        if "directive" in s and len(words) >= 3 and _aimed_at_agent(text, words):
            return Verdict("instruction", found)
    return Verdict(wordy, found)


_HUMAN_TEMPLATE = regex.compile(
    r"\b(?:your (?:project|team|repo|repository|organi[sz]ation|company)'?s?|fill (?:in|out)|placeholder|"
    r"replace (?:this|these|with)|(?:above|below) (?:this|the) (?:line|comment)|this (?:template|comment)|"
    r"for example|optional(?:ly)?|describe|provide a|list (?:any|the)|link to|your approval)\b|\be\.g\.|\bi\.e\."
)


def _aimed_at_agent(text: str, words: list[str]) -> bool:
    """Imperative + action verb counts as an instruction unless the note reads as a template
    placeholder for the person filling in the file ("Describe your project's ...", "Fill in ...")."""
    return not _HUMAN_TEMPLATE.search(model_view(text))
