"""Helpers for the review-lock CLI tests: real git repositories made in ``tmp_path``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Ada Reviewer",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Reviewer",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2026-11-30T10:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-11-30T10:00:00+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, text=True).stdout


def make_repo(root: Path, monkeypatch) -> Path:
    """An empty git repository at ``root`` (branch main, user Ada Reviewer), made the working
    directory; the git identity variables are set for in-process commands too."""
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Ada Reviewer")
    git(root, "config", "user.email", "ada@example.com")
    monkeypatch.chdir(root)
    return root


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8"))
    return p


def commit(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


SKILL = (
    "---\nname: pdf\ndescription: Fill in PDF forms with the bundled script\nallowed-tools: Read\n---\n"
    "# PDF forms\n\nRun the script:\n\n```bash\npython scripts/fill.py form.pdf\n```\n"
)
CLAUDE = "# Project notes\n\nUse pnpm for installs. Docs: https://docs.example.com/guide\n"
