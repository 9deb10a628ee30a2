#!/usr/bin/env bash
# The side-by-side benchmark: the gateway, kfake, Apache Kafka (one KRaft node, a JVM of its own)
# and native Iggy clients, each broker and each client in its own process, medians of alternating
# rounds, plus kafka-producer-perf-test and kafka-consumer-perf-test against the gateway and
# Apache Kafka; prints markdown tables (payload cases, perf tools, fan-out, transactions, scale
# points, the goals of issues 11, 20 and 30 met or missed and issue 27's transaction figures) and
# draws the scale points as an SVG chart.
#
#   bash scripts/bench.sh                                  # full run, about 25 minutes on 2 cores
#   bash scripts/bench.sh -quick                           # smoke run, small cases (minutes: the JVM starts weigh most)
#   bash scripts/bench.sh -scale=false                     # no scale points
#   IGGY_BENCH_DIR=/dev/shm bash scripts/bench.sh -out bench.md   # and bench-scale.svg beside it
#   bash scripts/bench.sh -svg docs/bench-scale.svg        # the chart to this file
#   bash scripts/bench.sh -iggy-checkout ~/src/iggy        # also the official Iggy Go SDK
#   bash scripts/bench.sh -kafka=false                     # without Apache Kafka and the perf tools
#   bash scripts/bench.sh -txn-records 0                   # without the transactions case
#
# Every flag goes to `go run ./bench/cmd/bench` (see -h); IGGY_CHECKOUT also names a checkout.
# Apache Kafka 4.4.0 and its tools run on java 17 or later from the jars of bench/kafka/pom.xml,
# which mvn fetches from Maven Central once (kept in ~/.m2); java and mvn come from the Debian
# packages openjdk-17-jdk-headless and maven when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ " $* " != *" -kafka=false "* ]] && { ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; }; then
	echo "bench: java or mvn not found: installing the Debian packages openjdk-17-jdk-headless and maven" >&2
	sudo=""
	if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
		sudo="sudo -n"
	fi
	if command -v apt-get >/dev/null 2>&1; then
		($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jdk-headless maven) >&2 || true
	fi
fi
exec go run ./bench/cmd/bench "$@"
