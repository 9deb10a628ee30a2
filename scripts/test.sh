#!/usr/bin/env bash
# The project's tests: every package's Go tests (under the race detector, except the packages
# that drive the binary as child processes, whose concurrency lives in those processes), then
# real Kafka clients against gateways that each script starts itself: franz-go's own kgo
# integration tests (against one gateway, then against a fleet of three sharing a store) and
# librdkafka through kcat (installed from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
process_pkgs='/(crashtest|fleettest|bench)$'
go test -race -count=1 -timeout 15m $(go list ./... | grep -Ev "$process_pkgs")
go test -count=1 -timeout 15m $(go list ./... | grep -E "$process_pkgs")
bash scripts/kgo-integration.sh
bash scripts/kgo-integration.sh --fleet
bash scripts/kcat-interop.sh
bash scripts/clients-interop.sh
