#!/usr/bin/env bash
# VS Code end-to-end tests: the built .vsix in code-server (real VS Code 1.100 workbench) driven by
# Debian's chromium through playwright-core, plus extension-host tests inside the same code-server.
#
# Usage:  bash scripts/vscode-e2e.sh [all|setup|test]     (default all = setup then test)
#   setup  installs chromium (apt), code-server and playwright-core (npm), builds the .vsix;
#          cached under .cache/vscode-e2e, about 100 s the first time, a few seconds after.
#   test   runs tests/editors/vscode/driver.js twice (UI, then extension host), about 40 s.
#          Screenshots go to tests/editors/vscode/artifacts/ (gitignored). Last line:
#          "vscode: N passed, N failed"; exit 1 if any check failed.
# Env:    PYTHON (runs tests/editors/vscode/expect.py; default .venv/bin/python), CS_PORT (8123),
#         UNVEIL_CORPUS (default ../shared/corpus), VSCODE_E2E_HOME (default .cache/vscode-e2e).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E="${VSCODE_E2E_HOME:-$ROOT/.cache/vscode-e2e}"
mode="${1:-all}"
if [[ "$mode" == all || "$mode" == setup ]]; then
  bash "$ROOT/scripts/vscode-setup.sh" >/dev/null
fi
[[ "$mode" == setup ]] && exit 0

OUTER_TMP="${TMPDIR:-/tmp}"  # before vscode-env.sh points TMPDIR into the cache folder
source "$ROOT/scripts/vscode-env.sh"
CS="$E/cs/node_modules/.bin/code-server"
VSIX="$ROOT/client-vscode/dist/unveil-linux-x64.vsix"  # this machine's platform
TESTS="$ROOT/tests/editors/vscode"
CORPUS="${UNVEIL_CORPUS:-$ROOT/../shared/corpus}"
PORT="${CS_PORT:-8123}"
ARTIFACTS="$TESTS/artifacts"
PY="${PYTHON:-}"
[[ -n "$PY" ]] || { if [[ -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi; }
for need in "$CS" "$VSIX" "$E/pw/node_modules/playwright-core/package.json" /usr/bin/chromium; do
  [[ -e "$need" ]] || { echo "vscode-e2e: missing $need (run: bash scripts/vscode-e2e.sh setup)" >&2; echo "vscode: 0 passed, 1 failed"; exit 1; }
done
[[ -d "$CORPUS" ]] || { echo "vscode-e2e: corpus not found at $CORPUS" >&2; echo "vscode: 0 passed, 1 failed"; exit 1; }

mkdir -p "$ARTIFACTS"
rm -f "$ARTIFACTS"/*.png
# The workspaces live outside the repository: a project configuration above them (this
# repository's own .unveil.toml) would apply to their files and change the expected findings.
RUN="$OUTER_TMP/unveil-vscode-e2e-run"
rm -rf "$RUN"
mkdir -p "$RUN"
export NODE_PATH="$E/pw/node_modules"
export ARTIFACTS
CS_PID=""
stop_cs() {
  if [[ -n "$CS_PID" ]]; then
    kill -- "-$CS_PID" 2>/dev/null || kill "$CS_PID" 2>/dev/null || true
    wait "$CS_PID" 2>/dev/null || true
    CS_PID=""
  fi
}
trap stop_cs EXIT

# start_cs NAME PORT: a fresh code-server with its own data and extensions folders (own process
# group, so stopping it also ends the Python servers it spawned).
start_cs() {
  local name="$1" port="$2" d="$RUN/$1"
  mkdir -p "$d/data/User" "$d/ext"
  cat > "$d/data/User/settings.json" <<'JSON'
{
  "security.workspace.trust.enabled": false, "telemetry.telemetryLevel": "off",
  "workbench.startupEditor": "none", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "update.mode": "none", "editor.inlayHints.enabled": "on", "chat.disableAIFeatures": true,
  "workbench.tips.enabled": false, "git.enabled": false, "editor.hover.delay": 100,
  "[markdown]": { "editor.wordWrap": "on" }
}
JSON
  if [[ "$name" == ui ]]; then
    "$CS" --user-data-dir "$d/data" --extensions-dir "$d/ext" --install-extension "$VSIX" >"$d/install.log" 2>&1 || {
      cat "$d/install.log" >&2; return 1; }
  fi
  setsid "$CS" --user-data-dir "$d/data" --extensions-dir "$d/ext" --bind-addr "127.0.0.1:$port" --auth none \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    >"$d/code-server.log" 2>&1 &
  CS_PID=$!
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "vscode-e2e: code-server did not answer on port $port" >&2
  tail -n 20 "$d/code-server.log" >&2
  return 1
}

passed=0 failed=0
run_driver() {
  local name="$1" port="$2" out
  mkdir -p "$RUN/$name/work"
  UNVEIL_E2E_EXPECT="$("$PY" "$TESTS/expect.py" "$RUN/$name/work" "$CORPUS")"
  export UNVEIL_E2E_EXPECT
  if ! start_cs "$name" "$port"; then
    failed=$((failed + 1)); return
  fi
  out="$RUN/$name/driver.log"
  set +e
  EXT_DEV="$ROOT/client-vscode" node "$TESTS/driver.js" "$name" "http://127.0.0.1:$port" 2>&1 | tee "$out" | grep -E '^(PASS|FAIL)' | sed 's/^/  /'
  set -e
  stop_cs
  local p f
  p=$(grep -c '^PASS' "$out" || true)
  f=$(grep -c '^FAIL' "$out" || true)
  if [[ "$p" -eq 0 && "$f" -eq 0 ]]; then f=1; tail -n 30 "$out" >&2; fi
  if [[ "$f" -gt 0 ]]; then
    cp "$RUN/$name/code-server.log" "$ARTIFACTS/code-server-$name.log" 2>/dev/null || true
    find "$RUN/$name/data/logs" -name '*.log' -path '*exthost*' -exec cp {} "$ARTIFACTS/" \; 2>/dev/null || true
  fi
  passed=$((passed + p)); failed=$((failed + f))
}

# The extension-host tests run the extension from its source folder (client-vscode/), which after
# packaging carries no bundled libraries: lay out this platform's (the ones in the linux-x64 .vsix)
# for the run, and remove them afterwards.
DEV_LIBS="$ROOT/client-vscode/bundled/libs"
cleanup() { stop_cs; rm -rf "$DEV_LIBS"; }
trap cleanup EXIT
if [[ "${VSCODE_E2E_ONLY:-}" != ui ]]; then
  [[ -d "$E/libs/linux-x64" ]] || { echo "vscode-e2e: missing $E/libs/linux-x64 (run: bash scripts/vscode-e2e.sh setup)" >&2; echo "vscode: 0 passed, 1 failed"; exit 1; }
  rm -rf "$DEV_LIBS"; mkdir -p "$(dirname "$DEV_LIBS")"
  cp -r "$E/libs/linux-x64" "$DEV_LIBS"; rm -f "$DEV_LIBS/.stamp"
fi

t0=$SECONDS
echo "vscode-e2e: code-server $("$CS" --version 2>/dev/null | grep -m1 -o "^[0-9][0-9.]*") (VS Code $("$CS" --version 2>/dev/null | grep -m1 -o "Code [0-9.]*" | cut -d" " -f2)), $(chromium --version 2>/dev/null | cut -d" " -f1-2)"
[[ "${VSCODE_E2E_ONLY:-}" == exthost ]] || run_driver ui "$PORT"
[[ "${VSCODE_E2E_ONLY:-}" == ui ]] || run_driver exthost "$((PORT + 1))"
echo "vscode-e2e: $((SECONDS - t0)) s; screenshots in ${ARTIFACTS#"$ROOT"/}/"
echo "vscode: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
