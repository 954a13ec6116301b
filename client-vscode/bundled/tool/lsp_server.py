"""Entry point of the unveil server bundled in the VS Code extension.

The extension runs ``<python> lsp_server.py --stdio`` with ``LS_IMPORT_STRATEGY`` set from the
``unveil.importStrategy`` setting:

* ``useBundled`` (default): ``bundled/libs`` goes first on ``sys.path``, so the copy of unveil
  and its dependencies shipped in the extension wins over the interpreter's packages;
* ``fromEnvironment``: ``bundled/libs`` goes last, so an ``unveil`` installed in the interpreter's
  environment wins and the bundled copy is only the fallback.

``--probe`` only checks the import and prints ``unveil <version> (Python X.Y, <where>)``.
Exit code 3 with a message on stderr when ``unveil`` (or a dependency) cannot be imported or the
interpreter is older than 3.10; the extension shows that message once.
"""

import os
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


def main() -> int:
    if sys.version_info < (3, 10):
        sys.stderr.write(
            "unveil: Python %d.%d is too old; the server needs Python 3.10 or later (%s)\n"
            % (sys.version_info[0], sys.version_info[1], sys.executable)
        )
        return 3
    update_sys_path(LIBS, os.environ.get("LS_IMPORT_STRATEGY", "useBundled"))
    try:
        from unveil.lsp.server import run

        import regex  # noqa: F401 - compiled wheels: fail here, clearly, not on the first document
        import tiktoken  # noqa: F401
    except ImportError as exc:
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
