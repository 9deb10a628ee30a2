#!/usr/bin/env bash
# The side-by-side benchmark: the gateway, kfake and native Iggy clients, each broker and each
# client in its own process, medians of alternating rounds; prints markdown tables (payload cases,
# scale points, the goals of issue 11 met or missed) and draws the scale points as an SVG chart.
#
#   bash scripts/bench.sh                                  # full run, about 10 to 15 minutes on 2 cores
#   bash scripts/bench.sh -quick                           # smoke run, about a minute
#   bash scripts/bench.sh -scale=false                     # the payload cases only
#   IGGY_BENCH_DIR=/dev/shm bash scripts/bench.sh -out bench.md   # and bench-scale.svg beside it
#   bash scripts/bench.sh -svg docs/bench-scale.svg        # the chart to this file
#   bash scripts/bench.sh -iggy-checkout ~/src/iggy        # also the official Iggy Go SDK
#
# Every flag goes to `go run ./bench/cmd/bench` (see -h); IGGY_CHECKOUT also names a checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./bench/cmd/bench "$@"
