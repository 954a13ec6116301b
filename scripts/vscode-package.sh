#!/usr/bin/env bash
# Build the VS Code extension: client-vscode/dist/unveil.vsix.
#
#   1. npm packages of client-vscode (npm ci, once);
#   2. esbuild bundle out/extension.js (vscode-languageclient inlined);
#   3. bundled/libs: `pip install --target` of this project and its dependencies, with the build
#      interpreter. regex and tiktoken are compiled wheels, so the .vsix is specific to that
#      interpreter's platform and Python minor version (linux-x64 CPython 3.11 on CI); on any other
#      Python the extension falls back to an unveil installed in the environment or `unveil.path`
#      (docs/editors-vscode.md). Rebuilt only when server/, rules/ or pyproject.toml change;
#   4. `vsce package`.
#
# Usage: bash scripts/vscode-package.sh     # prints the .vsix path on its last line
# Env:   PYTHON   interpreter for step 3 (default: <repo>/.venv/bin/python, else python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EXT="$ROOT/client-vscode"
E="${VSCODE_E2E_HOME:-$ROOT/.cache/vscode-e2e}"
mkdir -p "$E"
# shellcheck source=scripts/vscode-env.sh
source "$ROOT/scripts/vscode-env.sh"
log() { echo "vscode-package: $*" >&2; }

PY="${PYTHON:-}"
if [[ -z "$PY" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi

cd "$EXT"
if [[ ! -d node_modules/vscode-languageclient || package-lock.json -nt node_modules/.package-lock.json ]]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
node esbuild.mjs --production >&2

stamp="$(cd "$ROOT" && { find server rules -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha1sum; sha1sum pyproject.toml; "$PY" -c 'import sys; print(sys.version_info[:2])'; } | sha1sum | cut -c1-16)"
if [[ ! -f bundled/libs/.stamp || "$(cat bundled/libs/.stamp)" != "$stamp" ]]; then
  log "bundling unveil and its dependencies with $("$PY" --version 2>&1)"
  rm -rf bundled/libs
  "$PY" -m pip install --disable-pip-version-check -q --no-compile --target bundled/libs "$ROOT" >&2
  rm -rf bundled/libs/bin
  echo "$stamp" > bundled/libs/.stamp
fi

mkdir -p dist
rm -f dist/unveil.vsix
# --allow-package-all-secrets: rules/secrets.toml carries fake credentials as rule examples.
npx vsce package --allow-missing-repository --skip-license --allow-star-activation --allow-package-all-secrets -o dist/unveil.vsix >&2 </dev/null
log "$(du -h dist/unveil.vsix | cut -f1) dist/unveil.vsix"
echo "$EXT/dist/unveil.vsix"
