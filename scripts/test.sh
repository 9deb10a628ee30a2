#!/usr/bin/env bash
# The project's tests: every package's Go tests, then real Kafka clients against a gateway that
# each script starts itself: franz-go's own kgo integration tests and librdkafka through kcat
# (installed from Debian's packages when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 -timeout 15m ./...
bash scripts/kgo-integration.sh
bash scripts/kcat-interop.sh
