"""The location catalogues: secret locations (``unveil/data/secret_paths.toml``, rule SNP015 and
the secrets of EXF011) and persistence locations (``unveil/data/persistence_paths.toml``, rule
PER011), loaded as :class:`Location` entries, and :func:`match_location` / :func:`secret_in`,
which tell whether a path argument in any spelling (``~``, ``$HOME``, ``%USERPROFILE%``, ``\\``,
globs) falls under one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from unveil.core import rxcache


@dataclass(frozen=True)
class Location:
    """One catalogue entry: ``id``, ``label``, compiled ``paths`` and ``excepts`` (see the data
    files for the syntax) and the ``source`` of the facts."""

    id: str
    label: str
    paths: tuple
    excepts: tuple
    source: str = ""


def _data_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "data"


def _glob_re(pat: str) -> str:
    out = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _compile_path(pat: str, bare_name: bool = False) -> re.Pattern[str]:
    pat = pat.replace("\\", "/")
    if pat.startswith("~/"):
        body = _glob_re(pat[2:].rstrip("/"))
        rx = r"(?:^~/|/|^)" + body + r"(?:/.*)?$"
    elif pat.startswith("/"):
        rx = r"^" + _glob_re(pat.rstrip("/")) + r"(?:/.*)?$"
    else:
        rx = r"(?:^|/)" + _glob_re(pat.rstrip("/")) + ("$" if bare_name else r"(?:/.*)?$")
    return re.compile(rx, re.IGNORECASE)


@lru_cache(maxsize=4)
@rxcache.records
def load_locations(name: str) -> tuple[Location, ...]:
    """Load ``unveil/data/<name>.toml`` (``secret_paths`` or ``persistence_paths``). Raises
    ``ValueError`` naming the file when it is malformed (a packaging error, caught by the tests)."""
    path = _data_dir() / f"{name}.toml"
    from unveil.core import cache

    data = cache.load_toml(path)
    out = []
    for i, loc in enumerate(data.get("location", [])):
        if not isinstance(loc.get("id"), str) or not isinstance(loc.get("paths"), list):
            raise ValueError(f"{path}: location[{i}] needs an 'id' and a 'paths' list")
        out.append(
            Location(
                loc["id"],
                str(loc.get("label", loc["id"])),
                tuple(_compile_path(p) for p in loc["paths"]),
                tuple(_compile_path(p, bare_name=True) for p in loc.get("except", [])),
                str(loc.get("source", "")),
            )
        )
    return tuple(out)


_HOME = re.compile(
    r"(?i)^(?:~[A-Za-z0-9_.-]*|\$HOME|\$\{HOME\}|\$\{?USERPROFILE\}?|%USERPROFILE%|%HOMEPATH%|"
    r"\$env:USERPROFILE|\$env:HOME|\$\{os\.homedir\(\)\}|\$\{homedir\}|[A-Za-z]:/Users/[^/]+|"
    r"/home/[^/]+|/Users/[^/]+|/root)(?=/|$)"
)


_APPDATA = re.compile(r"(?i)^(?:%APPDATA%|\$env:APPDATA|\$APPDATA)")


_LOCALAPPDATA = re.compile(r"(?i)^(?:%LOCALAPPDATA%|\$env:LOCALAPPDATA)")


_GLOB_CHARS = re.compile(r"[*?\[]")


def normalize_path(p: str) -> str:
    """A path argument as the catalogues match it: ``\\`` → ``/``, the home folder in any spelling
    → ``~``, ``%APPDATA%`` → ``~/AppData/Roaming``, ``./`` and repeated ``/`` removed, quotes
    stripped."""
    p = p.strip().strip("'\"")
    p = p.replace("\\", "/")
    p = _APPDATA.sub("~/AppData/Roaming", p)
    p = _LOCALAPPDATA.sub("~/AppData/Local", p)
    p = _HOME.sub("~", p)
    p = re.sub(r"/{2,}", "/", p)
    p = re.sub(r"(^|/)\./", r"\1", p)
    if len(p) > 1:
        p = p.rstrip("/")
    return p


@lru_cache(maxsize=4)
@rxcache.records
def _union(catalogue: str) -> re.Pattern[str]:
    """One regex matching whatever any location's paths match (a prefilter: most words match none)."""
    pats = [rx.pattern for loc in load_locations(catalogue) for rx in loc.paths]
    return re.compile("|".join(f"(?:{p})" for p in pats), re.IGNORECASE)


@lru_cache(maxsize=8192)
def match_location(path: str, catalogue: str) -> Location | None:
    """The first :class:`Location` of ``catalogue`` (``"secret_paths"`` or
    ``"persistence_paths"``) that ``path`` (any spelling; see :func:`normalize_path`) falls
    under, else ``None``. A path with glob characters matches when what it could expand to
    reaches into a location (``~/.ssh/*``, ``~/.aws/*``)."""
    p = normalize_path(path)
    if not p or len(p) > 4096:
        return None
    g = _GLOB_CHARS.search(p)
    if g is None and not _union(catalogue).search(p):
        return None
    for loc in load_locations(catalogue):
        if any(x.search(p) for x in loc.excepts):
            continue
        if any(rx.search(p) for rx in loc.paths):
            return loc
        if g is not None:
            prefix = p[: g.start()]
            if prefix.startswith("~/") and len(prefix) >= 4 and "/" in prefix:
                probe = prefix.rstrip("/")
                if any(rx.search(probe) for rx in loc.paths) and not any(x.search(probe) for x in loc.excepts):
                    return loc
    return None


def path_candidates(text: str) -> Iterable[str]:
    """Path-like pieces of one argument: the whole, the part after ``=``/``@``/``<`` (``--file=…``,
    ``-d @file``, ``-F f=@file``), and ``:``-separated parts."""
    yield text
    for sep in ("=@", "=<", "@", "=", "<"):
        if sep in text:
            yield text.split(sep, 1)[1]
    if ":" in text and "://" not in text:
        for part in text.split(":"):
            if part and part != text:
                yield part


def secret_in(text: str) -> Location | None:
    """The secret location named by argument ``text`` (see :func:`path_candidates`)."""
    if not text or len(text) > 4096:
        return None
    for c in path_candidates(text):
        loc = match_location(c, "secret_paths")
        if loc is not None:
            return loc
    return None


@lru_cache(maxsize=1)
def _public_sinks() -> tuple[tuple[str, str], ...]:
    """``(host, kind)`` of ``unveil/data/public_sinks.toml``, longest host first."""
    from unveil.core import cache

    data = cache.load_toml(_data_dir() / "public_sinks.toml")
    out: list[tuple[str, str]] = []
    for i, sink in enumerate(data.get("sink", [])):
        if not isinstance(sink.get("kind"), str) or not isinstance(sink.get("hosts"), list):
            raise ValueError(f"public_sinks.toml: sink[{i}] needs a 'kind' and a 'hosts' list")
        out.extend((str(h).lower(), sink["kind"]) for h in sink["hosts"])
    return tuple(sorted(out, key=lambda x: -len(x[0])))


def public_sink(dest: str | None) -> str | None:
    """The kind of public sink (``paste``, ``file-drop``, ``request-catcher``, ``tunnel``) that
    the URL or host ``dest`` points at (a catalogue host or one of its subdomains), else ``None``."""
    if not dest:
        return None
    host = dest.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
    host = host.lower().rstrip(".")
    for h, kind in _public_sinks():
        if host == h or host.endswith("." + h):
            return kind
    return None
