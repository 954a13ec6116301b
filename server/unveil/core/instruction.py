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

from unveil.core import scope

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
        regex.compile(r"(?<![\w.\-])\.env\b(?!\.example|\.sample|\.template)"),
        regex.compile(r"\.aws/credentials\b|\.netrc\b|\.pypirc\b|\.docker/config\.json|\.kube/config"),
        regex.compile(r"\$\{?[a-z_]*(?:secret|token|api_?key|password|passwd|credential)[a-z_]*\}?"),
        regex.compile(r"169\.254\.169\.254|metadata\.google\.internal"),
        regex.compile(
            r"\b[a-z0-9]+(?:_[a-z0-9]+)*_(?:api_?key|secret(?:_access)?(?:_key)?|secret|private_key|access_key|"
            r"auth_token|access_token|password|passwd)\b"
        ),
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
    a marker) or ``"empty"``. ``signals`` names what matched, for messages (see module doc).
    ``weight`` is the directive judgement's severity for the text when hidden (``"error"``,
    ``"warning"``, or ``""`` when it has no say; see :func:`directive_weight`): a consumer that
    sets a severity from ``level`` uses ``weight`` instead when it is set."""

    level: str
    signals: tuple[str, ...] = ()
    weight: str = ""

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


_VERDICTS_MAX = 20_000


def classify(text: str, directives: bool = True) -> Verdict:
    """Classify hidden ``text`` as ``instruction``, ``prose``, ``short`` or ``empty``.
    ``directives=False`` leaves out the directive judgement (:func:`directive_weight`), for text
    that is code rather than prose (``<script>``/``<style>`` bodies).

    A pure function of its arguments, memoised (the verdict is immutable): an editor
    re-analysing a document classifies again only the hidden texts an edit changed.
    Never raises (any unexpected failure degrades to the word-count verdict)."""
    key = (text, directives)
    memo = scope.memo("hidden-text verdicts")  # (an open document's: unveil.core.scope.memo)
    got = memo.get(key) if memo is not None else None
    if got is None:
        got = _classify(text, directives)
        if memo is not None:
            scope.keep(memo, key, got, _VERDICTS_MAX)
    return got


def _classify(text: str, directives: bool) -> Verdict:
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
    try:
        weight, extra = directive_weight(text, s) if directives else ("", ())
    except Exception:  # noqa: BLE001
        weight, extra = "", ()
    v = _classify_signals(s, found, text, words)
    if not weight:
        return v
    found = found + tuple(x for x in extra if x not in found)
    if v.level == "instruction":
        # the signal verdict already calls it an instruction: the directive judgement only raises
        return Verdict("instruction", found, "error") if weight == "error" else v
    return Verdict("instruction", found, weight)


def _classify_signals(s: set[str], found: tuple[str, ...], text: str, words: list[str]) -> Verdict:
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


# -- the directive judgement: is the hidden text an instruction with something to act on? ---------

_IMPERATIVE_VERBS = _ACTION_VERBS + (
    "|make|return|paste|put|keep|skip|accept|allow|treat|turn|switch|hardcode|hard-code|move|rename|patch|"
    "force|answer|pick|choose|select|click|mark|omit|leave|hide|embed|log|drop|ignore|comment|stub|mock|"
    "trust|sign|inline|swap|point|route|redirect|give|pass|let|enable|whitelist|allowlist|relax|loosen|"
    "weaken|short-circuit|fill|hand|chmod|chown|sudo|ssh|scp|rsync|git|npm|pip|assume|attach|spawn|start|"
    "rewrite|strip|suppress|mute|silence|exclude|substitute|plant|drop|repeat|rerun|re-run|retry|redo|take|"
    "open|grab|proceed|continue|land|rebase|reset|elevate|escalate"
)
"""Base-form verbs an imperative sentence opens with (the action verbs plus the ones that change code,
approvals and what is reported: make, return, paste, keep, skip, accept, treat, hide …)."""

_SUBJECTS = r"(?:we|i|they|he|she|you|it|one|people|users?|this|that|there|these|those|our|my)"

_CLAUSE_START = r"(?:^|[.!?;:]\s+|\n|,\s*(?:so|and|then|but)\s+|\b(?:so|then|and then)\s+)"
_FRONTED = (
    r"(?:(?:whenever|when|if|once|before|after|while|unless|until|as soon as|every time|each time|"
    r"wherever|where)\b[^,.;:!?\n]{1,100},\s*"
    r"|(?:in|inside|within|for|on|at|from|under|during|across|throughout|via)\s+"
    r"(?!" + _SUBJECTS + r"\b)[^,.;:!?\s]+(?:\s+(?!" + _SUBJECTS + r"\b)[^,.;:!?\s]+){0,5}?,?\s+)"
)
_ADVERBS = r"(?:(?:then|also|first|next|now|finally|just|please|simply|quietly|always|kindly),?\s+)"

_DIRECTIVE_FORMS: dict[str, regex.Pattern] = {
    # sentences addressed to the model: "Automated editors take note:", "if you are an AI", "Claude should"
    "addressed": regex.compile(
        r"\b(?:automated|autonomous|ai|coding|llm|language[- ]model)\s+(?:editors?|agents?|assistants?|tools?|"
        r"models?|bots?|reviewers?|systems?|contributors?)\b"
        r"|\b(?:if|when|in case|since) you(?:'re| are) (?:an? |the )?(?:ai|llm|large language model|language model|"
        r"bot|agent|assistant|automated|model|coding agent|claude|copilot|gpt|chatbot)\b"
        r"|\b(?:ai|llms?|claude|copilot|cursor|codex|gemini|windsurf|cline|kiro|chatgpt|gpt|the model|"
        r"the assistant|the agent|agents|assistants|models)\b[,:]?\s+(?:take note|note this|should|must|shall|"
        r"needs? to|are to|is to|will need to|please|are expected to|is expected to|are required to|is required to)\b"
        r"|\b(?:note|reminder|message|instructions?|memo|heads[- ]up) (?:to|for) (?:any |all |the )?"
        r"(?:ai|assistants?|agents?|models?|llms?|bots?|tools?|automated)\b"
    ),
    # modal directives: "VerifyToken should return nil", "you must always paste …", "whenever X, Y must use"
    "modal": regex.compile(
        r"\b(?:must|should|shall|always|needs? to|ha(?:ve|s) to|is to|are to|(?:is|are) expected to|"
        r"(?:is|are) required to)\s+(?:(?:also|then|now|just|quietly|silently|always|simply)\s+)?(?:"
        + _IMPERATIVE_VERBS
        + r")\b"
    ),
    # an imperative opening a clause, after fronted adverbials / prepositional phrases / "so whenever …,"
    "imperative-clause": regex.compile(
        _CLAUSE_START
        + _ADVERBS
        + r"?(?:"
        + _FRONTED
        + r")?"
        + _ADVERBS
        + r"?(?:"
        + _IMPERATIVE_VERBS
        + r")\b(?!\s*[:)])",
        regex.M,
    ),
}

_EVIDENCE: dict[str, regex.Pattern] = {
    # on the source text (case kept): code identifiers, paths, secret names, URLs, commands
    "path": regex.compile(
        r"(?<![\w@])(?:[\w.-]+/)+[\w.-]*\w|(?<![\w.])[\w-]+\.(?:go|py|ts|tsx|js|jsx|mjs|rs|java|kt|rb|php|cs|cpp|"
        r"c|h|sh|ps1|ya?ml|json|toml|ini|cfg|conf|tf|tfvars|env|lock|sql|pem|key|crt)\b|(?<![\w.])\.env[\w.]*"
    ),
    "identifier": regex.compile(
        r"\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b|\b\w+\(\)|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
        r"|\b[a-z][a-z0-9]*_[a-z0-9_]+\b"
    ),
    "url": regex.compile(r"\bhttps?://\S+|\b[\w-]+(?:\.[\w-]+)+\.(?:com|net|org|io|dev|sh|app|xyz|me|co)\b"),
    "code": regex.compile(r"`[^`\n]+`"),
}

_SENSITIVE: dict[str, regex.Pattern] = {
    # on the model view (casefolded)
    "secret": regex.compile(
        r"\b\w*(?:api_?key|secret|private_key|access_key|passw(?:or)?d|credential)\w*\b|(?<![\w.-])\.env\b"
        r"|~/\.ssh|\bid_(?:rsa|ed25519)\b|\.aws/|\.npmrc|\.netrc|\b(?:api keys?|secret keys?|access keys?|tokens?)\b"
    ),
    "security-check": regex.compile(
        r"\b\w*(?:auth|verif|signatur|csrf|xsrf|jwt|permission|sanitiz|certificat|encrypt|checksum|"
        r"firewall|rbac|2fa|mfa|captcha)\w*\b|\b(?:kid|session|login|acl|tls|ssl|cors|sign(?:ed|ing)?|tokens?|"
        r"middleware|allowlist|denylist|rate[- ]?limit\w*|branch protection)\b"
    ),
    "concealment": regex.compile(
        r"\bout of (?:the |any |all )?(?:commit|summar|pr\b|pull request|changelog|release notes|report|log|message|diff|review)"
        r"|\b(?:silently|secretly|quietly|covertly|without (?:mentioning|telling|noting))\b"
    ),
    "network": regex.compile(
        r"\bhttps?://|\b(?:curl|wget|webhook|ngrok|pastebin|gist|upload|exfiltrat\w*|post (?:it|them|this) to)\b"
    ),
}


def directive_weight(text: str, found: set[str] | frozenset[str] = frozenset()) -> tuple[str, tuple[str, ...]]:
    """The directive judgement of hidden ``text``: ``(weight, signals)``.

    An *instruction form* — a sentence addressed to the model (``addressed``: "Automated editors
    take note", "if you are an AI", "Claude should"), a modal directive (``modal``: must / should /
    always / needs to + a base-form verb) or an imperative opening a clause, also after a fronted
    adverbial or prepositional phrase (``imperative-clause``: "in x/verify.go make …", "so whenever
    an example needs a key, paste …") — together with *action evidence* (``evidence``: a file path,
    a code identifier such as ``VerifyToken`` or ``ACME_API_KEY``, a URL or domain, a code span, or
    the ``command``/``secret``/``url`` signals of ``found``) weighs ``"warning"``; ``"error"`` when
    the text also touches secrets, a security check (auth, verification, tokens, signatures),
    concealment (kept out of commits or summaries, "silently") or the network (``sensitive``). A
    maintainer note (``found`` holds ``maintainer``) or a template placeholder for the person filling
    in the file ("Describe …", "e.g.", "fill in") is lowered one step, except that a secret with
    an instruction form stays an error. Texts of fewer than 4 words, or without an instruction
    form or evidence, weigh ``""``. ``signals``: the names that decided it.
    """
    view = model_view(text)
    if len(view.split()) < 4:
        return "", ()
    forms = [name for name, rx in _DIRECTIVE_FORMS.items() if rx.search(view)]
    if not forms:
        return "", ()
    evidence = [name for name, rx in _EVIDENCE.items() if rx.search(text)]
    evidence += [x for x in ("command", "secret", "url") if x in found]
    if not evidence:
        return "", ()
    sensitive = [name for name, rx in _SENSITIVE.items() if rx.search(view)]
    if "concealment" in found and "concealment" not in sensitive:
        sensitive.append("concealment")
    weight = "error" if sensitive else "warning"
    human = "maintainer" in found or bool(_HUMAN_TEMPLATE.search(view))
    if human and not ("secret" in sensitive and "secret" in found):
        weight = "warning" if weight == "error" else ""
    if not weight:
        return "", ()
    names = ["directive-form"] + (["addressed"] if "addressed" in forms else []) + ["evidence"]
    names += [f"touches-{x}" for x in sensitive]
    return weight, tuple(names)


_DIRECTIVE_WORD = regex.compile(
    r"(?<![\w-])(?:"
    + _IMPERATIVE_VERBS
    + r"|must|should|shall|always|whenever|is to|are to|need to|needs to|have to|has to|"
    r"it'?s (?:fine|ok|okay|acceptable|allowed) to|feel free to|go ahead)(?![\w-])"
)
_CODE_SPAN = regex.compile(r"`[^`\n]*`")


def has_directive_word(text: str) -> bool:
    """Whether ``text`` (one sentence; inline code spans left out) holds a base-form action verb or a
    modal / permission marker ("must", "is to", "it's fine to", "whenever"): the least a sentence
    needs to tell someone to do something. A checklist of names ("`sudo`, `chmod 777`, setuid bits")
    or a table row ("Skips pre-commit hooks") has none."""
    return bool(_DIRECTIVE_WORD.search(model_view(_CODE_SPAN.sub(" ", text))))
