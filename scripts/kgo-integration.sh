#!/usr/bin/env bash
# Runs franz-go's own kgo integration tests against an iggy-kafka gateway with the embedded
# store: build, start `serve` on a free loopback port with a temporary data directory, wait until
# it accepts, run the tests, stop the gateway, and exit with go test's status.
#
# Usage: scripts/kgo-integration.sh [extra go test flags]
#   KGO_TESTS overrides the test selection (a go test -run pattern).
set -euo pipefail

cd "$(dirname "$0")/.."

tests='^(TestPing|TestAddRemovePartitions|TestConsumeMaxDecompressBatchBytes|TestConsumeRegex|TestConsumeTopicRetrieval|TestConsumeTopicRetrieval_Many|TestDirectPartitionPurge|TestHookPollStart|TestIssue325|TestIssue337|TestIssue434|TestIssue648|TestIssue810|TestIssue865|TestIssueFetchLargerThanBrokerMaxReadBytes|TestPauseIssue489|TestPauseIssueOct2023|TestPooling|TestClient_Produce|TestClient_ProduceLargeMessages|TestIssue769|TestIssue831|TestIssueProduceBrokerTooOldFailsRecords|TestIssueProduceSyncManualPartitionNegativeDoesNotPanic)$'
tests="${KGO_TESTS:-$tests}"

work="$(mktemp -d)"
pid=""
cleanup() {
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
	else
		echo $((20000 + RANDOM % 40000))
	fi
}

echo "building ./cmd/iggy-kafka"
go build -o "$work/iggy-kafka" ./cmd/iggy-kafka

port="$(free_port)"
"$work/iggy-kafka" serve \
	--bind "127.0.0.1:$port" \
	--store-listen 127.0.0.1:0 \
	--data "$work/data" \
	--fsync never \
	--auto-create-topics \
	--log-level warn \
	>"$work/gateway.log" 2>&1 &
pid=$!

echo "waiting for the gateway on 127.0.0.1:$port"
for i in $(seq 1 600); do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "gateway exited before accepting connections:" >&2
		cat "$work/gateway.log" >&2
		exit 1
	fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		break
	fi
	if [[ $i -eq 600 ]]; then
		echo "gateway did not accept connections within 60s" >&2
		cat "$work/gateway.log" >&2
		exit 1
	fi
	sleep 0.1
done

status=0
KGO_TEST_RF=1 KGO_TEST_RECORDS=20000 KGO_SEEDS="127.0.0.1:$port" \
	go test github.com/twmb/franz-go/pkg/kgo -count=1 -run "$tests" -v "$@" || status=$?

if [[ $status -ne 0 ]]; then
	echo "--- gateway log (last 100 lines) ---" >&2
	tail -n 100 "$work/gateway.log" >&2
fi
exit "$status"
