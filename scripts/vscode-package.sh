#!/usr/bin/env bash
# Build the VS Code extension: client-vscode/dist/unveil-<target>.vsix per platform and unveil-universal.vsix.
#
#   1. npm packages of client-vscode (npm ci, once);
#   2. esbuild bundle out/extension.js (vscode-languageclient inlined);
#   3. per target (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64): bundled/libs laid
#      out by scripts/vsix_libs.py from the registry's wheels for that platform and CPython
#      3.10-3.13 (cached under .cache/vscode-e2e/libs, rebuilt when server/, rules/ or
#      pyproject.toml change), then `vsce package --target` → dist/unveil-<target>.vsix;
#   4. the universal dist/unveil-universal.vsix without bundled libraries (uses an installed unveil).
#
# Usage: bash scripts/vscode-package.sh     # prints the dist folder on its last line
# Env:   PYTHON   interpreter that runs scripts/vsix_libs.py (default: <repo>/.venv/bin/python, else python3)
#        UNVEIL_VSIX_TARGETS  space-separated targets (default: all five platforms and universal)
#        UNVEIL_VSIX_PYTHONS  comma-separated CPython versions bundled (default 3.10,3.11,3.12,3.13)
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

# Targets: one .vsix per platform (its compiled wheels for CPython 3.10-3.13, scripts/vsix_libs.py)
# and a universal one without bundled libraries (it uses an installed unveil).
TARGETS="${UNVEIL_VSIX_TARGETS:-linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 universal}"
PYTHONS="${UNVEIL_VSIX_PYTHONS:-3.10,3.11,3.12,3.13}"
stamp="$(cd "$ROOT" && { find server rules -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha1sum; sha1sum pyproject.toml scripts/vsix_libs.py; echo "$PYTHONS"; } | sha1sum | cut -c1-16)"

# The .vsix carries a README, LICENSE, CHANGELOG and icon (vsce reads them from the extension folder).
cp "$ROOT/LICENSE" "$EXT/LICENSE" 2>/dev/null || { log "no LICENSE at the repository root"; exit 1; }
cp "$ROOT/CHANGELOG.md" "$EXT/CHANGELOG.md" 2>/dev/null || { log "no CHANGELOG.md at the repository root"; exit 1; }

mkdir -p dist
for target in $TARGETS; do
  rm -rf bundled/libs
  if [[ "$target" != universal ]]; then
    cached="$E/libs/$target"
    if [[ ! -f "$cached/.stamp" || "$(cat "$cached/.stamp")" != "$stamp" ]]; then
      log "laying out the libraries for $target (CPython $PYTHONS)"
      "$PY" "$ROOT/scripts/vsix_libs.py" --target "$target" --out "$cached" --pythons "$PYTHONS" --cache "$E/wheels" >&2
      echo "$stamp" > "$cached/.stamp"
    fi
    mkdir -p bundled
    cp -r "$cached" bundled/libs
    rm -f bundled/libs/.stamp
    out="dist/unveil-$target.vsix"
    target_arg=(--target "$target")
  else
    out="dist/unveil-universal.vsix"
    target_arg=()
  fi
  rm -f "$out"
  # --allow-package-all-secrets: rules/secrets.toml carries fake credentials as rule examples.
  npx vsce package "${target_arg[@]}" --allow-missing-repository --allow-star-activation --allow-package-all-secrets \
    -o "$out" >&2 </dev/null
  log "$(du -h "$out" | cut -f1) $out"
done
rm -rf bundled/libs
echo "$EXT/dist"
