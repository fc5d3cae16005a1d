#!/usr/bin/env bash
# Install what the peer baselines need (idempotent): hyperfine and jq from
# Debian, the Python peers from PyPI, ajv from npm into bench/.deps (ignored by git).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
need_apt=()
command -v hyperfine >/dev/null || need_apt+=(hyperfine)
command -v jq >/dev/null || need_apt+=(jq)
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
python3 -c 'import json_repair, jsonschema, fastjsonschema, orjson' 2>/dev/null ||
  pip install -q json_repair jsonschema fastjsonschema orjson
if [ ! -d "$here/.deps/node_modules/ajv" ]; then
  mkdir -p "$here/.deps"
  (cd "$here/.deps" && npm install --silent --no-audit --no-fund ajv@^8.20.0 >/dev/null)
fi
