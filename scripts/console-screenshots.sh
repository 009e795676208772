#!/usr/bin/env bash
# Writes screenshots of the console (the task page and the approvals inbox) to docs/img/ for the
# README, by running the console's browser test with HERMES_SCREENSHOTS set. Not run by CI.
# Needs Chromium (apt-get install chromium) and a build (npm run build).
set -euo pipefail
cd "$(dirname "$0")/.."
HERMES_SCREENSHOTS="$PWD/docs/img" npx vitest run --project @hermes/tests tests/e2e/console-browser.e2e.test.ts
ls -l docs/img/console-*.png
