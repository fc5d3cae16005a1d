#!/usr/bin/env bash
# `agentshape serve` under load (issue 9): 200 SSE clients on /api/feed while
# a real `agentshape run` writes 500 lines 5 ms apart (every client must get
# every line once, in order; latency agent line -> client p50/p90/p99/max;
# serve's CPU), then the sessions list with 100,000 stored sessions (p50/p99
# per URL, JSON and HTML), then 300 clients that open the feed of 1,000 rows
# of 64 KiB and never read (serve's peak RSS, a normal request's latency
# meanwhile). Optimised build (cargo's bench profile); prints
# markdown tables. Arguments go to the benchmark, for example:
#   scripts/bench-serve.sh --clients 50 --lines 200 --pace-ms 10
#   scripts/bench-serve.sh --skip-feed --sessions 100000 --requests 50
#   scripts/bench-serve.sh --only-stalled --serve-arg=--max-feed-clients=1000
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --locked --quiet -p agentshape --bench serve_load -- "$@"
