"""Lay out the Python libraries one VS Code extension build bundles, for one target platform.

Usage::

    python scripts/vsix_libs.py --target linux-x64 --out client-vscode/bundled/libs \
        [--pythons 3.10,3.11,3.12,3.13] [--cache DIR]

Result (what ``client-vscode/bundled/tool/lsp_server.py`` expects)::

    <out>/common/          unveil itself and every pure-Python dependency (``py3-none-any`` wheels)
    <out>/cp310/ … cp313/  the compiled dependencies (regex, tiktoken, tree-sitter …) for that
                           CPython minor version and the target's platform
    <out>/TARGET           the target name, one line

Wheels come from the package registry with ``pip download --only-binary=:all: --platform …
--python-version …`` (the same resolution pip does on that platform: the newest version of each
requirement that publishes a wheel for it), never built here, so one machine packages every
platform. Unveil itself is built from the project once (``pip wheel --no-deps``). A Python
version for which some dependency has no wheel on that platform is left out, said on stderr, and
the extension names the supported versions when it meets an interpreter it has no folder for.

Exit status 0, or 1 when not one Python version could be laid out (stderr says why).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

#: VS Code targets (``vsce package --target``) → wheel platform tags pip may take for them.
PLATFORMS: dict[str, list[str]] = {
    "linux-x64": [
        "manylinux_2_28_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2014_x86_64",
        "manylinux_2_5_x86_64",
        "manylinux1_x86_64",
    ],
    "linux-arm64": ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"],
    "darwin-x64": [
        f"macosx_{v}_{a}"
        for v in ("14_0", "13_0", "12_0", "11_0", "10_15", "10_14", "10_13", "10_12", "10_9")
        for a in ("x86_64", "universal2")
    ],
    "darwin-arm64": [
        f"macosx_{v}_{a}" for v in ("14_0", "13_0", "12_0", "11_0", "10_9") for a in ("arm64", "universal2")
    ],
    "win32-x64": ["win_amd64"],
}
DEFAULT_PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def runtime_requirements(root: Path) -> list[str]:
    """``[project] dependencies`` of ``root/pyproject.toml`` (markers kept; pip evaluates them for
    the target Python)."""
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["project"]["dependencies"])


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True, text=True
    )


def download(reqs: list[str], target: str, python: str, dest: Path) -> str | None:
    """Download the wheels of ``reqs`` (with their dependencies) for ``target`` and ``python``
    into ``dest``; returns pip's error text, or ``None`` on success."""
    dest.mkdir(parents=True, exist_ok=True)
    args = [
        "download",
        "-q",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        python,
        "--dest",
        str(dest),
    ]
    for tag in PLATFORMS[target]:
        args += ["--platform", tag]
    got = pip(*args, *reqs)
    if got.returncode != 0:
        return (
            (got.stderr or got.stdout).strip().splitlines()[-1] if (got.stderr or got.stdout).strip() else "pip failed"
        )
    return None


def is_pure(wheel: Path) -> bool:
    """Whether a wheel's file name says it runs on any platform (``…-none-any.whl``)."""
    return wheel.name.endswith("-none-any.whl")


def unpack(wheel: Path, into: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(into)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", required=True, choices=sorted(PLATFORMS))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--pythons", default=",".join(DEFAULT_PYTHONS))
    ap.add_argument("--cache", type=Path, default=None, help="folder for downloaded wheels (kept between runs)")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = ap.parse_args(argv)
    pythons = [p.strip() for p in args.pythons.split(",") if p.strip()]
    cache = args.cache or Path(tempfile.mkdtemp(prefix="unveil-wheels-"))
    out: Path = args.out
    shutil.rmtree(out, ignore_errors=True)
    (out / "common").mkdir(parents=True)

    own = cache / "own"
    shutil.rmtree(own, ignore_errors=True)
    built = pip("wheel", "-q", "--no-deps", "--wheel-dir", str(own), str(args.root))
    if built.returncode != 0:
        sys.stderr.write(f"vsix_libs: cannot build the unveil wheel: {built.stderr.strip()}\n")
        return 1
    for w in own.glob("*.whl"):
        unpack(w, out / "common")

    reqs = runtime_requirements(args.root)
    laid: list[str] = []
    pure_seen: set[str] = set()
    for py in pythons:
        tag = "cp" + py.replace(".", "")
        dest = cache / args.target / tag
        error = download(reqs, args.target, py, dest)
        if error:
            sys.stderr.write(f"vsix_libs: {args.target} Python {py} left out: {error}\n")
            continue
        for w in sorted(dest.glob("*.whl")):
            if is_pure(w):
                project = re.split(r"-\d", w.name, maxsplit=1)[0].lower()
                if project not in pure_seen:
                    pure_seen.add(project)
                    unpack(w, out / "common")
            else:
                unpack(w, out / tag)
        (out / tag).mkdir(exist_ok=True)
        laid.append(py)
    for junk in out.rglob("__pycache__"):
        shutil.rmtree(junk, ignore_errors=True)
    for bindir in out.glob("*/bin"):
        shutil.rmtree(bindir, ignore_errors=True)
    (out / "TARGET").write_text(args.target + "\n", encoding="utf-8")
    if not laid:
        sys.stderr.write(f"vsix_libs: no Python version could be laid out for {args.target}\n")
        return 1
    sys.stderr.write(f"vsix_libs: {args.target}: Python {', '.join(laid)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
