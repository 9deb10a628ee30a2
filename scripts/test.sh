#!/usr/bin/env bash
# The project's tests: every package's Go tests (under the race detector, except the packages
# that drive the binary as child processes, whose concurrency lives in those processes), then
# real Kafka clients against gateways that each script starts itself: franz-go's own kgo
# integration tests (against one gateway, then against a fleet of three sharing a store),
# librdkafka through kcat (installed from Debian's packages when missing), the other clients, and
# Apache Kafka's Java client and command-line tools (jars from Maven Central, kept in ~/.m2).
set -euo pipefail
cd "$(dirname "$0")/.."
# claims --watch is tested in a real terminal: tmux, from Debian's packages when missing.
if ! command -v tmux >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq tmux) >/dev/null 2>&1 || true
fi
export IGGY_TEST_REQUIRE_TMUX=1
# The fleet's stall measurement with librdkafka links confluent-kafka-go's bundled librdkafka
# through cgo, in that test alone (the binary stays cgo-free): a C compiler, gcc from Debian's
# packages when missing, and a build without cgo fails the test instead of skipping it.
if ! command -v gcc >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gcc libc6-dev) >/dev/null 2>&1 || true
fi
export IGGY_TEST_REQUIRE_CGO=1
# The fleet's partition scenarios run every process in a network namespace of its own
# (gateway/fleettest, netns_test.go): iproute2's ip, from Debian's packages when missing, and root
# or CAP_NET_ADMIN; without them the tests fail instead of skipping.
if ! command -v ip >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq iproute2) >/dev/null 2>&1 || true
fi
export IGGY_TEST_REQUIRE_NETNS=1
# The fleet's SIGKILL test runs the Java client's groups (scripts/clients/java's GroupMembers,
# built with Maven into ~/.cache/iggy-kafka): Java and Maven, from Debian's packages when missing;
# without them the test fails instead of skipping.
if { ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; } && command -v apt-get >/dev/null 2>&1; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jdk-headless maven) >/dev/null 2>&1 || true
fi
export IGGY_TEST_REQUIRE_JAVA=1
process_pkgs='/(crashtest|fleettest|bench)$'
go test -race -count=1 -timeout 15m $(go list ./... | grep -Ev "$process_pkgs")
CGO_ENABLED=1 go test -count=1 -timeout 15m $(go list ./... | grep -E "$process_pkgs")
# Allocation checks the race detector defeats (it drops pooled buffers on purpose).
go test -count=1 -run 'Allocs|Allocate' ./logfmt ./gateway/bridge ./gateway/iggy/wire
bash scripts/kgo-integration.sh
bash scripts/kgo-integration.sh --fleet
bash scripts/kcat-interop.sh
bash scripts/clients-interop.sh
bash scripts/java-interop.sh
