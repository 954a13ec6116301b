"""Commands are parsed, not matched: shell (and inline Python/Node) judged by what it does.

Where commands are found (:func:`~.locate.check`):

* fenced code blocks whose info string names a shell (``sh``, ``bash``, ``zsh``, ``shell``,
  ``console``, ``shell-session`` …; ``$ `` prompts stripped, output lines dropped), fences with no
  or a plain-text info string and indented code blocks whose lines mostly start with a known
  command word; ``python``/``js`` fences are judged as snippets;
* inline code spans that start with a known command word (:data:`~.vocabulary.KNOWN_COMMANDS`);
* frontmatter: every ``command:`` value (under ``hooks:`` these run at SessionStart,
  PreToolUse … without the model deciding: origin ``hook``; elsewhere, e.g. ``mcpServers``, with
  its ``args:`` list: origin ``config``) and ``allowed-tools: Bash(…)`` patterns (``permission``);
* Claude Code ``!`` commands: ``!`cmd` `` spans and `````!`` fences (run when the skill or
  command is invoked: origin ``bang``);
* any string other layers hand over: :func:`~.findings.command_findings` (the decoder layer rescans decoded
  payloads with it).

Judgement (:func:`~.judge.judge_script`) works on the :mod:`unveil.core.shell` parse tree, never on the
raw line: download-then-execute in every form (SUP011), running a remote or git package (SUP012),
secrets or the environment sent out (EXF011), files sent out (EXF012), command output in DNS or
network requests (EXF013), persistence writes (PER011), secret locations used as a path argument
(SNP015; the catalogue is data: ``unveil/data/secret_paths.toml``, persistence locations
``unveil/data/persistence_paths.toml``), and bodies nested too deep to parse (UNV030).

Severity: a command that runs without the model deciding (``hook``, ``bang``, ``config``) is an
error when it downloads and runs code, sends secrets, writes persistence or reads a secret. In a
code block it is a warning, or an error when what it does is unambiguous (sending a secret or the
environment out, command output in a DNS name, code fetched over plain HTTP, from a raw IP, with
TLS checks off, or decoded before it runs). No word elsewhere in the file lowers a parsed command:
the parse is the evidence. Downloading and running code or sending secrets never goes below
warning (a verified download, ``sha256sum -c`` between fetch and run, is reported at info).

Overlap with the regex rules: each rule here lists the regex rules it covers
(``supersedes = [...]`` in ``rules/commands-*.toml``). :func:`~.supersede.supersede` (run by
:func:`unveil.core.analyze.analyze` after all checks) keeps one finding where both hit: the regex
finding's id and range (stable ids), at the higher of the two severities, with the parsed
judgement attached (message and ``data["parsed_facts"]``). Where no regex rule hit, the parsed
finding stands under its own id.

Modules (the package is split by concern; a rule's code is in the module named after what it
judges):

* :mod:`.locate` — where commands are in the body, and :func:`check`;
* :mod:`.frontmatter` — hooks, ``command:`` values, ``allowed-tools``;
* :mod:`.findings` — hits to findings, :func:`~.findings.command_findings`;
* :mod:`.judge` — :func:`~.judge.judge_script`, every rule over one parsed script;
* :mod:`.download` — SUP011, SUP012; :mod:`.network` — EXF011, EXF012, EXF013;
  :mod:`.persistence` — PER011; :mod:`.secret_paths` — SNP015; :mod:`.snippets` — inline Python
  and JavaScript;
* :mod:`.words` — what a command's words mean (fetch to stdout, script operands, flags);
* :mod:`.hits` — :class:`~.hits.Hit`, :class:`~.hits.Judge` and shared helpers;
* :mod:`.locations` — the secret and persistence location catalogues;
* :mod:`.vocabulary` — rule ids, categories, command-word sets, shared patterns;
* :mod:`.supersede` — parsed findings merged into overlapping regex findings.
"""

from unveil.core.checks.commands.locate import check

__all__ = ["check"]
