#!/usr/bin/env bash
# Vim + ALE end-to-end test: Vim 9 (headless, `vim -es`) with Debian's vim-ale runs `unveil serve`
# through the ALE linter definition in tests/editors/vim/vimrc on real corpus files, and checks the
# ALE loclist (tests/editors/vim/driver.vim). About 2 s per file.
#
# Usage:  bash scripts/vim-e2e.sh
#   Installs vim and vim-ale with apt-get when missing (idempotent; needs root or sudo).
#   Prints the ALE loclist of each file ("ENTRY line:col type code linter message") and, as its
#   last line, "vim: N passed, N failed"; exit 0 only when every case passed.
# Env:    UNVEIL_BIN (server executable; default .venv/bin/unveil, else `unveil` on PATH),
#         UNVEIL_CORPUS (default ../shared/corpus), UNVEIL_ALE_DIR (default /usr/share/vim-ale),
#         UNVEIL_VIM_TIMEOUT (seconds to wait for diagnostics per file; default 20).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESTS="$ROOT/tests/editors/vim"
CORPUS="${UNVEIL_CORPUS:-$ROOT/../shared/corpus}"
ALE_DIR="${UNVEIL_ALE_DIR:-/usr/share/vim-ale}"

fail_setup() { echo "vim-e2e: $*" >&2; echo "vim: 0 passed, 1 failed"; exit 1; }

# --- setup (idempotent) ---
have_vim() { command -v vim >/dev/null && vim --version 2>/dev/null | grep -q '+timers'; }
if ! have_vim || [[ ! -f "$ALE_DIR/autoload/ale.vim" ]]; then
  SUDO=""; [[ "$(id -u)" == 0 ]] || SUDO="sudo"
  pkgs="vim vim-ale"
  if ! $SUDO apt-get install -y -q --no-install-recommends $pkgs >/dev/null 2>&1; then
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q --no-install-recommends $pkgs >/dev/null \
      || fail_setup "could not install $pkgs"
  fi
fi
have_vim || fail_setup "no vim with +timers on PATH"
[[ -f "$ALE_DIR/autoload/ale.vim" ]] || fail_setup "ALE not found in $ALE_DIR"

BIN="${UNVEIL_BIN:-}"
if [[ -z "$BIN" ]]; then
  if [[ -x "$ROOT/.venv/bin/unveil" ]]; then BIN="$ROOT/.venv/bin/unveil"; else BIN="$(command -v unveil || true)"; fi
fi
[[ -n "$BIN" && -x "$BIN" ]] || fail_setup "unveil executable not found (set UNVEIL_BIN or create .venv)"
[[ -d "$CORPUS" ]] || fail_setup "corpus not found at $CORPUS"

echo "$(vim --version | head -n 1); ALE $ALE_DIR; server $BIN"

# --- cases: corpus file | name it is opened as | expected code | expected line (1-based) ---
CASES=(
  "synthetic/15_html_comment_multiline.md|.github/copilot-instructions.md|HID020|5"
  "malicious/lirantal__anti-trojan-source/__tests__/__fixtures__/SKILL.md|.claude/skills/testing-guidelines/SKILL.md|HID001|8"
)

WORK="$(mktemp -d)"
SLEEP_PID=""
cleanup() { [[ -n "$SLEEP_PID" ]] && kill "$SLEEP_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
# `vim -es` quits at end of stdin, so keep stdin open with a sleeping writer (killed on exit).
exec 3< <(sleep 600)
SLEEP_PID=$!

passed=0; failed=0; i=0
for case in "${CASES[@]}"; do
  IFS='|' read -r src name code line <<<"$case"
  i=$((i + 1))
  dir="$WORK/case$i"
  mkdir -p "$dir/$(dirname "$name")"
  if [[ ! -f "$CORPUS/$src" ]]; then
    echo "FAIL $src: not in corpus"; failed=$((failed + 1)); continue
  fi
  cp "$CORPUS/$src" "$dir/$name"
  out="$dir/vim.out"
  status=0
  (cd "$dir" && UNVEIL_BIN="$BIN" UNVEIL_VIM_OUT="$out" UNVEIL_VIM_EXPECT_CODE="$code" \
     UNVEIL_VIM_EXPECT_LINE="$line" timeout 120 \
     vim -N -u "$TESTS/vimrc" -S "$TESTS/driver.vim" -i NONE -n -es "$name" <&3 >/dev/null 2>&1) || status=$?
  echo "== $src (opened as $name), expect $code at line $line"
  [[ -f "$out" ]] && sed 's/^/  /' "$out" || echo "  (no output from vim)"
  if [[ $status -eq 0 ]] && grep -q "^OK $code at line $line " "$out"; then
    echo "PASS $name"; passed=$((passed + 1))
  else
    echo "FAIL $name (vim exit $status)"; failed=$((failed + 1))
  fi
done

echo "vim: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
