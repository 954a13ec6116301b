"""A small, safe wrapper around the ``git`` command for the review lock.

Every call runs ``git`` with a fixed argument list built here (``subprocess.run`` with a list,
never a shell), with nothing taken from a scanned file: only paths and refs the *user* typed on
the command line or that the lock file names, always after ``--`` or as ``REF:PATH`` object
names. Options that could run other programs are switched off: ``--no-textconv`` and
``--no-ext-diff`` for commands that show content, ``core.fsmonitor=false``, no pager, no prompt
(``GIT_TERMINAL_PROMPT=0``), no optional locks. Output is bytes.

Errors: :class:`GitMissing` when no ``git`` executable is found; :class:`GitError` (with git's
own message) when git fails, e.g. an unknown ref or a folder that is not a repository.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TIMEOUT_S = 60
"""Seconds one git command may take."""


class GitError(Exception):
    """git failed; ``str(exc)`` is a one-line message naming what failed."""


class GitMissing(GitError):
    """No ``git`` executable on ``PATH``."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    )
    for var in ("GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS"):
        env.pop(var, None)
    return env


def run(repo: str | os.PathLike, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``git -C REPO -c core.fsmonitor=false ARGS…`` without a shell. Raises :class:`GitMissing`
    or, when ``check`` and git exits non-zero, :class:`GitError` with git's first stderr line."""
    argv = ["git", "-C", str(repo), "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", *args]
    try:
        proc = subprocess.run(
            argv, check=False, capture_output=True, env=_env(), timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise GitMissing("git is not installed (no `git` on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0] if args else ''} took longer than {TIMEOUT_S} s") from None
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror or exc}") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(msg[0] if msg else f"git {args[0] if args else ''} failed (exit {proc.returncode})")
    return proc


def toplevel(path: str | os.PathLike) -> Path:
    """The work tree root of the repository holding ``path`` (a folder). Raises
    :class:`GitError` when it is not inside a git repository."""
    out = run(path, "rev-parse", "--show-toplevel").stdout.decode("utf-8", "surrogateescape").strip()
    return Path(out)


def head(repo: str | os.PathLike) -> str | None:
    """The full commit id of ``HEAD``, or ``None`` in a repository without commits."""
    proc = run(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    out = proc.stdout.decode().strip()
    return out or None


def resolve(repo: str | os.PathLike, ref: str) -> str:
    """The commit id ``ref`` names. Raises :class:`GitError` ("unknown git ref …") when it names
    none. ``ref`` may not start with ``-`` (it would be read as an option)."""
    if not ref or ref.startswith("-"):
        raise GitError(f"invalid git ref {ref!r}")
    proc = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    if proc.returncode != 0 or not out:
        raise GitError(f"unknown git ref {ref!r}")
    return out


def show(repo: str | os.PathLike, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` (relative to the repository root, ``/``-separated) at ``commit``,
    or ``None`` when the file does not exist there. ``commit`` (which may come from a lock file)
    must be a ref or object name that does not start with ``-``. Raises :class:`GitError` for
    other failures."""
    if not commit or commit.startswith("-") or any(c in commit for c in "\0\n:"):
        raise GitError(f"invalid commit {commit!r}")
    proc = run(repo, "cat-file", "blob", f"{commit}:{path}", check=False)
    if proc.returncode == 0:
        return proc.stdout
    err = proc.stderr.decode("utf-8", "replace")
    if (
        "does not exist" in err
        or "exists on disk, but not in" in err
        or "Not a valid object name" in err
        or "invalid object name" in err.lower()
        or "bad file" in err
        or "not a valid" in err.lower()
    ):
        return None
    raise GitError(err.strip().splitlines()[0] if err.strip() else f"git cat-file failed for {path}")


def user(repo: str | os.PathLike) -> tuple[str, str]:
    """``(user.name, user.email)`` from git config (either may be ``""``)."""

    def get(key: str) -> str:
        return run(repo, "config", "--get", key, check=False).stdout.decode("utf-8", "replace").strip()

    return get("user.name"), get("user.email")


def log_commits(repo: str | os.PathLike, path: str) -> list[tuple[str, str, str]]:
    """Commits that changed ``path``, newest first, as ``(commit id, author date ISO 8601,
    author name)``."""
    out = run(repo, "log", "--no-textconv", "--no-ext-diff", "--format=%H%x00%aI%x00%an", "--", path).stdout
    rows = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split("\0")
        if len(parts) == 3:
            rows.append((parts[0], parts[1], parts[2]))
    return rows
