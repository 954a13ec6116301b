"""Entry point of the unveil server bundled in the VS Code extension.

The extension runs ``<python> lsp_server.py --stdio`` with ``LS_IMPORT_STRATEGY`` set from the
``unveil.importStrategy`` setting:

* ``useBundled`` (default): ``bundled/libs`` goes first on ``sys.path``, so the copy of unveil
  and its dependencies shipped in the extension wins over the interpreter's packages;
* ``fromEnvironment``: ``bundled/libs`` goes last, so an ``unveil`` installed in the interpreter's
  environment wins and the bundled copy is only the fallback.

Layout of ``bundled/libs`` in a per-platform build (``scripts/vsix_libs.py``): ``common/`` (unveil
and the pure-Python dependencies), ``cpXY/`` (the compiled dependencies for CPython X.Y on the
build's platform) and ``TARGET`` (the VS Code target, e.g. ``linux-x64``). The universal build
has no ``bundled/libs`` and uses the unveil installed in the interpreter's environment.

``--probe`` only checks the import and prints ``unveil <version> (Python X.Y, <where>)``.
Exit code 3 with a message on stderr when ``unveil`` (or a dependency) cannot be imported, the
interpreter is older than 3.10, or the build has no libraries for this interpreter or platform
(the message names the interpreter and what the build supports); the extension shows it once.
"""

import os
import platform
import sys

LIBS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libs"))


def update_sys_path(path: str, strategy: str) -> None:
    """Put ``path`` first (``useBundled``) or last (``fromEnvironment``) on ``sys.path``."""
    if not os.path.isdir(path):
        return
    if path in sys.path:
        sys.path.remove(path)
    if strategy == "fromEnvironment":
        sys.path.append(path)
    else:
        sys.path.insert(0, path)


def this_target() -> str:
    """The VS Code target name of this machine (``linux-x64``, ``darwin-arm64``, ``win32-x64`` …)."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform, sys.platform)
    return "%s-%s" % (system, arch)


def bundled_paths(libs: str):
    """``(paths to add, problem)`` for the bundled libraries: the per-platform layout's
    ``common`` and ``cpXY`` folders, or ``libs`` itself (an older single-folder build).
    ``problem`` is a message when this interpreter or platform is not in the build."""
    common = os.path.join(libs, "common")
    if not os.path.isdir(common):
        return ([libs] if os.path.isdir(libs) else []), None
    tag = "cp%d%d" % sys.version_info[:2]
    versions = sorted(d for d in os.listdir(libs) if d.startswith("cp") and os.path.isdir(os.path.join(libs, d)))
    shown = ", ".join("%s.%s" % (v[2], v[3:]) for v in versions) or "none"
    try:
        with open(os.path.join(libs, "TARGET"), encoding="utf-8") as f:
            target = f.read().strip()
    except OSError:
        target = ""
    if target and target != this_target():
        return [common], ("this build of the extension is for %s, but this machine is %s; install the %s "
                          "build or the universal one with an installed unveil" % (target, this_target(), this_target()))
    if tag not in versions:
        return [common], ("this build bundles the server for CPython %s only; %s is Python %d.%d. Choose one "
                          "of those interpreters (setting unveil.interpreter) or install unveil into this one"
                          % (shown, sys.executable, sys.version_info[0], sys.version_info[1]))
    return [common, os.path.join(libs, tag)], None


def main() -> int:
    if sys.version_info < (3, 10):
        sys.stderr.write(
            "unveil: Python %d.%d is too old; the server needs Python 3.10 or later (%s)\n"
            % (sys.version_info[0], sys.version_info[1], sys.executable)
        )
        return 3
    strategy = os.environ.get("LS_IMPORT_STRATEGY", "useBundled")
    paths, problem = bundled_paths(LIBS)
    if problem is None:
        for path in reversed(paths):
            update_sys_path(path, strategy)
    try:
        from unveil.lsp.server import run

        import regex  # noqa: F401 - compiled wheels: fail here, clearly, not on the first document
        import tiktoken  # noqa: F401
    except ImportError as exc:
        if problem is not None:
            sys.stderr.write("unveil: %s.\n" % problem)
        else:
            sys.stderr.write(
                "unveil: cannot import the unveil server with %s: %s. Install it (pip install unveil) "
                "or use an extension build that bundles it.\n" % (sys.executable, exc)
            )
        return 3
    args = sys.argv[1:]
    if "--probe" in args:
        # Used by the extension to choose an interpreter: the import above worked.
        import unveil

        print("unveil %s (Python %d.%d, %s)" % (unveil.__version__, sys.version_info[0], sys.version_info[1],
                                               os.path.dirname(os.path.dirname(unveil.__file__))))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
