#!/usr/bin/env bash
# Screenshots for the README: fills a temporary store by replaying
# examples/*.ndjson (as scripts/demo.sh does), starts `agentshape serve` on it,
# and saves overview.png, session.png, builder.png (a few fields) and
# playground.png (a broken reply), alerts.png (serve --alerts) at 1280x900 under docs/screenshots/ (or
# $AGENTSHAPE_SCREENSHOTS), through headless chromium: the ignored
# `browser::screenshots::screenshots` test of the CLI's test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --only chromium
export AGENTSHAPE_SCREENSHOTS="${AGENTSHAPE_SCREENSHOTS:-$PWD/docs/screenshots}"
cargo test --locked -q -p agentshape --test it browser::screenshots::screenshots -- --ignored --exact
ls -l "$AGENTSHAPE_SCREENSHOTS"/*.png
