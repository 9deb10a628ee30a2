#!/usr/bin/env bash
# Checks that consumer groups of more Kafka clients work against `iggy-kafka serve` with the
# embedded store: sarama (Go), kafkajs (Node), kafka-python, and librdkafka 2.12 with
# group.protocol=consumer (KIP-848, through node-rdkafka) (franz-go, and librdkafka's classic
# groups through kcat, have scripts of their own). It builds the binary into a temporary directory, starts a gateway on
# free loopback ports, waits until it accepts, and runs each client program of scripts/clients/:
# a fresh 3-partition topic, two members of one group sharing its partitions, N numbered records
# read exactly once between them, commit and leave, M more records, and a third run of the group
# that reads exactly those M; then the group's committed offsets equal the end offsets.
# sarama runs at several Config.Version levels (V0_10_2_0 and V2_1_0_0 among them) and
# kafka-python also with api_version 0.10.2, so that old request versions are exercised; each
# run prints the request versions its client sent. Then, against a second gateway started with
# --sasl, every client produces and consumes with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (the
# SCRAM credentials set by sarama through AlterUserScramCredentials; each client's sasl program).
# The first gateway serves transactions (--transactions): sarama's transactional producer (at
# 2.8) commits, aborts and sends a group's offset in a transaction, and its read_committed
# consumer reads only the committed records (scripts/clients/sarama/txn.go).
#
# Every check prints PASS or FAIL; the last line is "clients-interop: N passed, M failed" and the
# exit status is 1 when a check failed. The gateways are stopped on exit.
#
# Usage: scripts/clients-interop.sh
#   CLIENTS_INTEROP_KEEP=1 keeps the temporary directory (binaries, node_modules, the gateways'
#   logs groups.log and sasl.log, each client's stderr).
#
# Installs: sarama through the Go module proxy (scripts/clients/sarama/go.sum), kafkajs with
# `npm ci` from scripts/clients/kafkajs/package-lock.json into the temporary directory,
# kafka-python from the Debian package python3-kafka with apt-get when no python3 imports
# `kafka`, and node-rdkafka 3.6.1 with `npm ci` from scripts/clients/rdkafka/package-lock.json,
# which compiles the librdkafka it bundles (a few minutes on two cores; with g++ and make from
# Debian when missing) into $XDG_CACHE_HOME/iggy-kafka (~/.cache/iggy-kafka), once per lock
# file and node version. A client that cannot be installed is a FAIL, never a skip.
set -uo pipefail

cd "$(dirname "$0")/.."
root="$PWD"
started=$SECONDS
work="$(mktemp -d)"
gateway_pids=()
cleanup() {
	local pid
	for pid in "${gateway_pids[@]}"; do stop_pid "$pid"; done
	stop_iggy
	if [[ "${CLIENTS_INTEROP_KEEP:-}" == 1 ]]; then
		echo "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

. scripts/checks.sh

sudo=""
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
	sudo="sudo -n"
fi
apt_updated=0
# apt_install PACKAGE...: installs Debian packages quietly; false when that is impossible.
apt_install() {
	command -v apt-get >/dev/null 2>&1 || return 1
	if [[ $apt_updated -eq 0 ]]; then
		$sudo apt-get update -qq >"$work/apt.log" 2>&1 || return 1
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >>"$work/apt.log" 2>&1
}

# --- builds and installs --------------------------------------------------------------------
echo "building ./cmd/iggy-kafka and scripts/clients/sarama"
if ! go build -o "$work/iggy-kafka" ./cmd/iggy-kafka; then
	echo "clients-interop: 0 passed, 1 failed (build of ./cmd/iggy-kafka)"
	exit 1
fi
have_sarama=0
if (cd scripts/clients/sarama && GOFLAGS=-mod=readonly go build -o "$work/sarama" .) 2>"$work/sarama-build.err"; then
	have_sarama=1
else
	fail "sarama: build scripts/clients/sarama (Go module proxy)" "$(tail -n 20 "$work/sarama-build.err")"
fi

have_kafkajs=0
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	echo "node or npm not found: installing the Debian packages nodejs and npm"
	apt_install nodejs npm || true
fi
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
	mkdir -p "$work/kafkajs"
	cp scripts/clients/kafkajs/package.json scripts/clients/kafkajs/package-lock.json scripts/clients/kafkajs/index.js scripts/clients/kafkajs/sasl.js "$work/kafkajs/"
	echo "installing kafkajs (npm ci, node $(node --version))"
	if (cd "$work/kafkajs" && npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1; then
		have_kafkajs=1
	else
		fail "kafkajs: npm ci" "$(tail -n 20 "$work/npm.log")"
	fi
else
	fail "kafkajs: node and npm are not installed and could not be installed with apt-get (no apt-get, no root, or no network)"
fi

# node-rdkafka: librdkafka built once per machine, lock file and node version.
have_rdkafka=0
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
	lock_sum="$(sha256sum scripts/clients/rdkafka/package-lock.json | cut -c1-16)"
	rdk_cache="${XDG_CACHE_HOME:-$HOME/.cache}/iggy-kafka/node-rdkafka-$lock_sum-node$(node --version)"
	rdk_lib="$rdk_cache/node_modules/node-rdkafka/build/Release/node-librdkafka.node"
	if [[ ! -f "$rdk_lib" ]]; then
		if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
			echo "g++ or make not found: installing the Debian packages g++ and make"
			apt_install g++ make || true
		fi
		echo "building node-rdkafka 3.6.1 and its librdkafka into $rdk_cache (once per machine)"
		rm -rf "$rdk_cache.tmp"
		mkdir -p "$rdk_cache.tmp"
		cp scripts/clients/rdkafka/package.json scripts/clients/rdkafka/package-lock.json "$rdk_cache.tmp/"
		# node-gyp builds against the installed node's headers rather than downloading them.
		nodedir=""
		[[ -f /usr/include/node/node.h ]] && nodedir=/usr
		if (cd "$rdk_cache.tmp" && npm_config_nodedir="$nodedir" npm ci --no-audit --no-fund --loglevel=error) >"$work/rdkafka-npm.log" 2>&1 &&
			[[ -f "$rdk_cache.tmp/node_modules/node-rdkafka/build/Release/node-librdkafka.node" ]]; then
			rm -rf "$rdk_cache"
			mv "$rdk_cache.tmp" "$rdk_cache"
		fi
	fi
	if [[ -f "$rdk_lib" ]]; then
		mkdir -p "$work/rdkafka"
		cp scripts/clients/rdkafka/index.js scripts/clients/rdkafka/sasl.js "$work/rdkafka/"
		ln -s "$rdk_cache/node_modules" "$work/rdkafka/node_modules"
		have_rdkafka=1
	else
		fail "librdkafka: npm ci of node-rdkafka 3.6.1" "$(tail -n 20 "$work/rdkafka-npm.log" 2>/dev/null)"
	fi
fi

# kafka_python: the first python3 that imports kafka; Debian's python3-kafka is for the system
# interpreter, which need not be the first python3 on PATH.
kafka_python() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import kafka' >/dev/null 2>&1; then
			echo "$py"
			return 0
		fi
	done
	return 1
}
py=""
if ! py="$(kafka_python)"; then
	echo "kafka-python not found: installing the Debian package python3-kafka"
	apt_install python3-kafka || true
	py="$(kafka_python)" || py=""
fi
if [[ -z "$py" ]]; then
	fail "kafka-python: no python3 imports kafka, and the Debian package python3-kafka could not be installed (no apt-get, no root, or no network)" \
		"$(tail -n 5 "$work/apt.log" 2>/dev/null)"
fi

# --- the gateways ---------------------------------------------------------------------------
# start_gateway NAME [SERVE ARGS...]: starts `serve` on a free loopback port with its own Iggy
# server (iggy_flags: the embedded store, or the real server) and log ($work/NAME.log), waits until it accepts, and sets $broker; exits the script
# when it does not come up in 30 s.
start_gateway() {
	local name=$1 port pid up=0
	shift
	port="$(free_port)"
	broker="127.0.0.1:$port"
	if ! iggy_flags "$name"; then
		fail "the Iggy server of the $name gateway did not start"
		echo "clients-interop: $passed passed, $failed failed"
		exit 1
	fi
	"$work/iggy-kafka" serve \
		--bind "$broker" \
		"${iggy_flags[@]}" \
		--consumer-heartbeat-interval 500ms \
		--log-level info \
		"$@" >"$work/$name.log" 2>&1 &
	pid=$!
	gateway_pids+=("$pid")
	echo "waiting for the $name gateway on $broker"
	for _ in $(seq 1 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			up=1
			break
		fi
		sleep 0.1
	done
	if [[ $up -ne 1 ]]; then
		fail "the $name gateway did not accept connections on $broker within 30 s" "$(tail -n 40 "$work/$name.log")"
		echo "clients-interop: $passed passed, $failed failed"
		exit 1
	fi
}
start_gateway groups --transactions

# --- the clients ----------------------------------------------------------------------------
# client NAME COMMAND...: runs a client program (at most 120 s), shows its lines, and counts
# its PASS and FAIL lines; a program that fails without saying so, or says nothing, is a FAIL.
client() {
	local name=$1 rc p f
	shift
	echo "--- $name"
	timeout 120 "$@" 2>"$work/$name.err" | tee "$work/$name.out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^PASS' "$work/$name.out")
	f=$(grep -c '^FAIL' "$work/$name.out")
	passed=$((passed + p))
	failed=$((failed + f))
	if [[ $rc -eq 124 ]]; then
		fail "$name: did not finish within 120 s" "$(tail -n 20 "$work/$name.err")"
	elif [[ $rc -ne 0 && $f -eq 0 ]]; then
		fail "$name: exit status $rc" "$(tail -n 20 "$work/$name.err")"
	elif [[ $rc -eq 0 && $p -eq 0 ]]; then
		fail "$name: no check ran" "$(tail -n 20 "$work/$name.err")"
	fi
	if [[ $f -gt 0 && -s "$work/$name.err" ]]; then
		echo "      $name stderr (last 20 lines):"
		tail -n 20 "$work/$name.err" | sed 's/^/        /'
	fi
}

if [[ $have_sarama -eq 1 ]]; then
	for v in 0.10.2.0 2.1.0 2.8.0 4.3.1; do
		client "sarama-$v" "$work/sarama" -broker "$broker" -version "$v" -topic "sarama-${v//./_}"
	done
	client sarama-txn "$work/sarama" -broker "$broker" -version 2.8.0 -topic sarama-txn -txn
fi
if [[ $have_kafkajs -eq 1 ]]; then
	client kafkajs node "$work/kafkajs/index.js" "$broker" kafkajs
fi
if [[ $have_rdkafka -eq 1 ]]; then
	client librdkafka-consumer-protocol node "$work/rdkafka/index.js" "$broker" rdkafka-kip848
fi
if [[ -n "$py" ]]; then
	client kafka-python "$py" "$root/scripts/clients/kafka-python/check.py" "$broker" kafka-python
	client kafka-python-0.10.2 "$py" "$root/scripts/clients/kafka-python/check.py" "$broker" kafka-python-0_10_2 300 60 0.10.2
fi

# --- SASL ---------------------------------------------------------------------------------
# A second gateway requires SASL. sarama at 2.8 logs in with PLAIN as the store's root user
# iggy/iggy and sets that user's own SCRAM-SHA-256 and SCRAM-SHA-512 credentials (password iggy)
# with UpsertUserScramCredentials; then every client produces and consumes one record with each
# of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (sarama also at 0.10.2, with SaslHandshake v0 and
# bare tokens). kcat-interop.sh checks librdkafka 2.0 and franz-go the same way, over TLS too.
start_gateway sasl --sasl
if [[ $have_sarama -eq 1 ]]; then
	client sarama-2.8.0-sasl "$work/sarama" -broker "$broker" -version 2.8.0 -topic sarama-sasl -sasl
	client sarama-0.10.2.0-sasl "$work/sarama" -broker "$broker" -version 0.10.2.0 -topic sarama-sasl-v0 -sasl
else
	fail "SASL: no SCRAM credentials set (sarama sets them and did not build)"
fi
if [[ $have_kafkajs -eq 1 ]]; then
	client kafkajs-sasl node "$work/kafkajs/sasl.js" "$broker" kafkajs-sasl
fi
if [[ $have_rdkafka -eq 1 ]]; then
	client librdkafka-sasl node "$work/rdkafka/sasl.js" "$broker" rdkafka-sasl
fi
if [[ -n "$py" ]]; then
	client kafka-python-sasl "$py" "$root/scripts/clients/kafka-python/sasl.py" "$broker" kafka-python-sasl
fi

names=(groups sasl)
for i in 0 1; do
	name=${names[$i]}
	if ! kill -0 "${gateway_pids[$i]}" 2>/dev/null; then
		fail "the $name gateway still running at the end" "$(tail -n 50 "$work/$name.log")"
	fi
	if grep -q 'level=ERROR' "$work/$name.log"; then
		echo "--- $name gateway errors ---"
		grep 'level=ERROR' "$work/$name.log" | head -n 20
	fi
	if [[ $failed -gt 0 ]]; then
		echo "--- $name.log (last 40 lines) ---"
		tail -n 40 "$work/$name.log"
	fi
done
echo "clients-interop: $((SECONDS - started))s"
echo "clients-interop: $passed passed, $failed failed"
exit $((failed > 0))
