#!/usr/bin/env bash
# Install what the VS Code end-to-end tests need, cached under <repo>/.cache/vscode-e2e:
#   * Debian packages: chromium (the browser playwright drives), libkrb5-dev (code-server's
#     kerberos module builds from source), ripgrep (seeds @vscode/ripgrep's download cache);
#   * code-server 4.100.3 (VS Code 1.100.3) from npm on the system Node 20, and playwright-core;
#   * the extension: client-vscode's npm packages, the bundled Python libraries and the .vsix
#     (scripts/vscode-package.sh).
# Recipe and fixes: ../shared/research/editor-testing.md §4.2 and §9 (track B).
#
# Usage:  bash scripts/vscode-setup.sh       # idempotent; prints the .vsix path on its last line
# Env:    VSCODE_E2E_HOME   cache folder (default <repo>/.cache/vscode-e2e)
#         CS_VERSION        code-server version (default 4.100.3, the last on Node 20)
#         PYTHON            Python that builds the bundled libraries (default: <repo>/.venv/bin/python)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E="${VSCODE_E2E_HOME:-$ROOT/.cache/vscode-e2e}"
CS_VERSION="${CS_VERSION:-4.100.3}"
PW_VERSION="${PW_VERSION:-1.65.1}"
mkdir -p "$ROOT/.cache" "$E"
[[ -f "$ROOT/.cache/.gitignore" ]] || printf '*\n' > "$ROOT/.cache/.gitignore"

# shellcheck source=scripts/vscode-env.sh
source "$ROOT/scripts/vscode-env.sh"

log() { echo "vscode-setup: $*" >&2; }
t0=$SECONDS

# 1. Debian packages (root on CI; skipped when present).
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
if ((${#need[@]})); then
  log "apt-get install ${need[*]}"
  if [[ $(id -u) -eq 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
  else
    log "not root: install ${need[*]} yourself"; exit 1
  fi
fi
command -v node >/dev/null || { log "Node.js is missing"; exit 1; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"

# 2. code-server from npm (about 40 s and 300 MB the first time).
CS="$E/cs/node_modules/.bin/code-server"
if [[ ! -x "$CS" ]] || [[ "$("$CS" --version 2>/dev/null | grep -m1 "^[0-9]")" != "$CS_VERSION"* ]]; then
  log "installing code-server $CS_VERSION on Node $node_major"
  # @vscode/ripgrep's postinstall downloads rg from GitHub: seed its cache with Debian's rg.
  mkdir -p "$E/rg"
  cp "$(command -v rg)" "$E/rg/rg"
  for v in 1.15.11 1.15.14; do
    mkdir -p "$TMPDIR/vscode-ripgrep-cache-$v"
    for t in v13.0.0-10 v13.0.0-13; do
      tar czf "$TMPDIR/vscode-ripgrep-cache-$v/ripgrep-$t-x86_64-unknown-linux-musl.tar.gz" -C "$E/rg" rg
    done
  done
  mkdir -p "$E/cs"
  [[ -f "$E/cs/package.json" ]] || (cd "$E/cs" && npm init -y >/dev/null)
  nodedir=/usr
  [[ -d /usr/include/node ]] || nodedir="$(dirname "$(dirname "$(command -v node)")")"
  (cd "$E/cs" && npm_config_yes=true npm_config_nodedir="$nodedir" npm_config_unsafe_perm=true \
     FORCE_NODE_VERSION="$node_major" \
     npm i --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION" >"$E/cs-install.log" 2>&1) || {
    tail -n 40 "$E/cs-install.log" >&2; log "code-server install failed (log: $E/cs-install.log)"; exit 1; }
fi
log "code-server $("$CS" --version 2>/dev/null | grep -m1 "^[0-9]")"

# 3. playwright-core (the driver only; the browser is Debian's chromium).
if [[ ! -f "$E/pw/node_modules/playwright-core/package.json" ]]; then
  mkdir -p "$E/pw"
  [[ -f "$E/pw/package.json" ]] || (cd "$E/pw" && npm init -y >/dev/null)
  (cd "$E/pw" && npm i --no-audit --no-fund --loglevel=error "playwright-core@$PW_VERSION" >/dev/null)
fi

# 4. The extension (.vsix).
VSIX="$(bash "$ROOT/scripts/vscode-package.sh" | tail -n 1)"
log "setup done in $((SECONDS - t0)) s"
echo "$VSIX"
