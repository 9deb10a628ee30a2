#!/usr/bin/env bash
# The project's tests: every package's Go tests, then franz-go's own kgo integration tests
# against a gateway this script starts (scripts/kgo-integration.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -count=1 -timeout 15m ./...
bash scripts/kgo-integration.sh
