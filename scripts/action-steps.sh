#!/usr/bin/env bash
# The steps of the composite GitHub Action (action.yml), one function per step, so the same
# commands run on GitHub and locally (scripts/action-local.sh).
#
#   action-steps.sh install   make a venv in $UNVEIL_VENV and pip-install unveil from the
#                             action's own checkout ($GITHUB_ACTION_PATH)
#   action-steps.sh report    append the Markdown job summary to $GITHUB_STEP_SUMMARY and, when
#                             INPUT_UPLOAD_SARIF=true, write the SARIF log to $UNVEIL_SARIF
#   action-steps.sh check     run `unveil check` with the inputs; its exit status is the step's
#
# Inputs (environment, as action.yml passes them): INPUT_PATHS (space-separated, default "."),
# INPUT_FAIL_ON (error|warning|info|hint|never, default error), INPUT_FORMAT (github|text|sarif|
# json|gitlab, default github), INPUT_UPLOAD_SARIF (true|false), INPUT_ARGS (extra options).
# Paths and options are split on whitespace; nothing from the scanned repository is evaluated.
set -euo pipefail

: "${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH must name the checkout of the action}"
: "${RUNNER_TEMP:=${TMPDIR:-/tmp}}"
: "${UNVEIL_VENV:=$RUNNER_TEMP/unveil-venv}"
: "${UNVEIL_SARIF:=$RUNNER_TEMP/unveil.sarif}"
PYTHON="${UNVEIL_PYTHON:-python3}"

read -r -a PATHS <<<"${INPUT_PATHS:-.}"
read -r -a EXTRA <<<"${INPUT_ARGS:-}"
[[ ${#PATHS[@]} -gt 0 ]] || PATHS=(.)
FAIL_ON="${INPUT_FAIL_ON:-error}"
FORMAT="${INPUT_FORMAT:-github}"
UNVEIL="$UNVEIL_VENV/bin/unveil"

case "$FAIL_ON" in error|warning|info|hint|never) ;; *) echo "unveil action: bad fail-on '$FAIL_ON'" >&2; exit 2 ;; esac
case "$FORMAT" in github|text|sarif|json|gitlab|markdown) ;; *) echo "unveil action: bad format '$FORMAT'" >&2; exit 2 ;; esac

step_install() {
  if [[ -x "$UNVEIL" ]] && "$UNVEIL" --version >/dev/null 2>&1; then
    echo "unveil action: using $("$UNVEIL" --version) in $UNVEIL_VENV"
    return 0
  fi
  "$PYTHON" -m venv "$UNVEIL_VENV"
  "$UNVEIL_VENV/bin/python" -m pip install --disable-pip-version-check -q "$GITHUB_ACTION_PATH"
  echo "unveil action: installed $("$UNVEIL" --version)"
}

step_report() {
  if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    "$UNVEIL" check "${PATHS[@]}" "${EXTRA[@]}" --format markdown --fail-on never --color never \
      >>"$GITHUB_STEP_SUMMARY" || [[ $? -eq 1 ]]
  fi
  if [[ "${INPUT_UPLOAD_SARIF:-false}" == "true" ]]; then
    "$UNVEIL" check "${PATHS[@]}" "${EXTRA[@]}" --format sarif --fail-on never --output "$UNVEIL_SARIF" || [[ $? -eq 1 ]]
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
      echo "sarif=$UNVEIL_SARIF" >>"$GITHUB_OUTPUT"
    fi
  fi
}

step_check() {
  exec "$UNVEIL" check "${PATHS[@]}" "${EXTRA[@]}" --format "$FORMAT" --fail-on "$FAIL_ON" --color never
}

case "${1:-}" in
  install) step_install ;;
  report) step_report ;;
  check) step_check ;;
  *) echo "usage: action-steps.sh install|report|check" >&2; exit 2 ;;
esac
