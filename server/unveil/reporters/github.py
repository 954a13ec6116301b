"""GitHub Actions workflow commands (``::error file=…,line=…::message``), escaped per GitHub's spec.

GitHub's runner (``actions/toolkit``, ``packages/core/src/command.ts``) unescapes exactly these
sequences, so they are the escaping to use:

* message data (after ``::``): ``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``
  (:func:`github_escape_data`);
* property values (``file=``, ``title=`` …): the same plus ``:`` → ``%3A`` and ``,`` → ``%2C``
  (:func:`github_escape_property`).

Without it a finding message or file name holding a newline could end the annotation and start
a second, attacker-written workflow command (``::add-mask::``, ``::stop-commands::``). Other
control and invisible characters are left to the caller (reporters make text printable first).
:func:`command` builds one line. Shared by ``unveil lock verify --format github`` and
``unveil check --format github``.
"""

from __future__ import annotations

from collections.abc import Mapping


def github_escape_data(text: str) -> str:
    """Escape a workflow command's message: ``%`` → ``%25``, ``\\r`` → ``%0D``, ``\\n`` → ``%0A``."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_escape_property(text: str) -> str:
    """Escape a workflow command property value: :func:`github_escape_data` plus ``:`` → ``%3A``
    and ``,`` → ``%2C``."""
    return github_escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: Mapping[str, object] | None = None) -> str:
    """One workflow command line (no trailing newline), e.g.
    ``command("error", "m", {"file": "a.md", "line": 1})`` → ``"::error file=a.md,line=1::m"``.
    ``name`` must be our own word (``error``, ``warning``, ``notice``); properties whose value is
    ``None`` are left out."""
    props = ",".join(f"{k}={github_escape_property(str(v))}" for k, v in (properties or {}).items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{github_escape_data(message)}"
