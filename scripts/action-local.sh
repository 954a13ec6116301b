#!/usr/bin/env bash
# Run the GitHub Action's steps (action.yml → scripts/action-steps.sh) locally, outside
# GitHub: the same commands with the runner's environment simulated in a temporary folder.
#
#   scripts/action-local.sh [--paths "a b"] [--fail-on LEVEL] [--format FMT] [--upload-sarif]
#
# Environment: RUNNER_TEMP (default: a new temporary folder), UNVEIL_VENV (default:
# $RUNNER_TEMP/unveil-venv; point it at an existing venv with unveil installed to skip the
# install), GITHUB_STEP_SUMMARY (default: $RUNNER_TEMP/step-summary.md). Runs in the working
# directory (the repository to scan), like the action. Prints where the summary and SARIF went;
# exits with the check step's status.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export GITHUB_ACTION_PATH="$HERE"
export RUNNER_TEMP="${RUNNER_TEMP:-$(mktemp -d)}"
export GITHUB_STEP_SUMMARY="${GITHUB_STEP_SUMMARY:-$RUNNER_TEMP/step-summary.md}"
export GITHUB_OUTPUT="${GITHUB_OUTPUT:-$RUNNER_TEMP/output.txt}"
export INPUT_PATHS="${INPUT_PATHS:-.}" INPUT_FAIL_ON="${INPUT_FAIL_ON:-error}" INPUT_FORMAT="${INPUT_FORMAT:-github}"
export INPUT_UPLOAD_SARIF="${INPUT_UPLOAD_SARIF:-false}" INPUT_ARGS="${INPUT_ARGS:-}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --paths) INPUT_PATHS="$2"; shift 2 ;;
    --fail-on) INPUT_FAIL_ON="$2"; shift 2 ;;
    --format) INPUT_FORMAT="$2"; shift 2 ;;
    --upload-sarif) INPUT_UPLOAD_SARIF=true; shift ;;
    --args) INPUT_ARGS="$2"; shift 2 ;;
    *) echo "action-local.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
touch "$GITHUB_STEP_SUMMARY" "$GITHUB_OUTPUT"
bash "$HERE/scripts/action-steps.sh" install
bash "$HERE/scripts/action-steps.sh" report
echo "summary: $GITHUB_STEP_SUMMARY"
[[ "$INPUT_UPLOAD_SARIF" == "true" ]] && echo "sarif: ${UNVEIL_SARIF:-$RUNNER_TEMP/unveil.sarif}"
set +e
bash "$HERE/scripts/action-steps.sh" check
status=$?
set -e
echo "check: exit $status"
exit $status
