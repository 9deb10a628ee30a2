#!/usr/bin/env bash
# Checks that Apache Kafka's Java client, Kafka's own command-line tools and Kafka Streams (4.4.0,
# from Maven Central) and Kafka Connect (4.3.1) work against the gateway: once against one
# `iggy-kafka serve` (with a second one started with --sasl for the SCRAM checks), then against a
# fleet of three (a store and three gateways, each its own process; the real Iggy server in place
# of the store when IGGY_KAFKA_TEST_IGGY_SERVER names one).
# The checks are one Java program, scripts/clients/java (a Maven project):
#   - the idempotent producer (acks=all) over every codec, read back exactly (keys, values,
#     headers, offsets);
#   - a consumer in a classic group and one with group.protocol=consumer (KIP-848) that read,
#     commit, and a second member that resumes at the commit;
#   - the Admin client: topics, partitions, configs, the cluster, consumer groups and their
#     offsets, DeleteRecords, SCRAM credentials (a user's own, and one the administrator iggy
#     provisions for the Iggy user java-prov with kafka-configs --entity-type users), ACLs
#     (kafka-acls and the Admin client granting, listing and deleting the Iggy user java-acl's);
#   - in the fleet, a classic and a KIP-848 group that stay through a SIGTERM and a SIGKILL of
#     their coordinating gateways without a revocation, and read every acknowledged record;
#   - the tools run as kafka-*.sh runs them (`java -cp JARS org.apache.kafka.tools.X`):
#     kafka-topics, kafka-configs, kafka-console-producer and -consumer, kafka-get-offsets,
#     kafka-consumer-groups (describe with lag, reset offsets, delete offsets, delete), and
#     kafka-producer-perf-test / kafka-consumer-perf-test;
#   - Kafka Connect, its workers run as connect-standalone.sh and connect-distributed.sh run them
#     (over the classpath of scripts/clients/java/connect/pom.xml): a standalone worker and a
#     distributed one (its topics created compacted, the connectors given through its REST API)
#     each move a file through FileStreamSource and FileStreamSink;
#   - Kafka Streams: a word count (state store, changelog, repartition topic, at_least_once)
#     whose newest count per word is exact, in the fleet also across a drain of its group's
#     coordinator (`iggy-kafka drain node N --yes --wait`, then --undo).
#   - transactions, against the one gateway, started with --transactions (the fleet's first
#     gateways and the --sasl one are not, and the checks there see a transactional producer refused):
#     the transactional producer (commit, abort, read_committed and read_uncommitted consumers,
#     sendOffsetsToTransaction with the consumer's group metadata in a classic and a KIP-848
#     group, fencing by a second instance, the abort of a transaction left open past its
#     timeout, with how long after its deadline printed), kafka-transactions (list, describe,
#     describe-producers, find-hanging) over an open transaction, kafka-transactions abort
#     --topic --partition --start-offset of a transaction whose producer went away without ending
#     it (the last stable offset then past its abort marker), and the word count with
#     exactly_once_v2 in a JVM of its own, whose counts read with read_committed are exactly
#     1..n per word, also after a SIGKILL mid-run and a restart;
#   - Streams' exactly_once_v2 in the fleet: three gateways started with --transactions on the
#     fleet's store in place of the first three, the word count running in one JVM while lines are
#     written and the gateway coordinating its transactional id is drained and the drain undone,
#     then SIGKILLed and started again on its port: the application neither fails nor rebalances,
#     and its counts read with read_committed are exactly 1..n per word; how long no output was
#     committed after each fault is printed.
# Every check prints PASS or FAIL (nothing is skipped); the last line is "java-interop: N passed,
# M failed" and the exit status is 1 when a check failed. The gateways are stopped on exit.
#
# Usage: scripts/java-interop.sh
#   JAVA_INTEROP_KEEP=1 keeps the temporary directory (the built program, data, gateway logs,
#   Connect's worker logs and files, Streams' state).
#
# Java (17 or later) and Maven come from the Debian packages openjdk-17-jdk-headless and maven
# when missing; Maven keeps what it downloads in ~/.m2, so only the first run on a machine
# fetches the jars. A missing Java or Maven is a FAIL, never a skip.
set -uo pipefail

cd "$(dirname "$0")/.."
started=$SECONDS
work="$(mktemp -d)"
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do stop_pid "$pid"; done
	stop_iggy
	if [[ "${JAVA_INTEROP_KEEP:-}" == 1 ]]; then
		echo "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

. scripts/checks.sh

finish() {
	echo "java-interop: $((SECONDS - started))s"
	echo "java-interop: $passed passed, $failed failed"
	exit $((failed > 0))
}

# --- Java and Maven -------------------------------------------------------------------------
if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
	echo "java, javac or mvn not found: installing the Debian packages openjdk-17-jdk-headless and maven"
	sudo=""
	if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
		sudo="sudo -n"
	fi
	if command -v apt-get >/dev/null 2>&1; then
		($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jdk-headless maven) >"$work/apt.log" 2>&1 || true
	fi
fi
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
	fail "Java and Maven are not installed and could not be installed with apt-get (no apt-get, no root, or no network)" \
		"$(tail -n 5 "$work/apt.log" 2>/dev/null)"
	finish
fi

java_major="$(java -version 2>&1 | sed -nE '1s/.*version "([0-9]+).*/\1/p')"
if [[ -z "$java_major" || "$java_major" -lt 17 ]]; then
	fail "Java 17 or later is needed (kafka-tools 4.4 and the checks): java -version says $(java -version 2>&1 | head -n 1)"
	finish
fi

# --- builds ---------------------------------------------------------------------------------
echo "building ./cmd/iggy-kafka and scripts/clients/java ($(java -version 2>&1 | head -n 1); $(mvn -v 2>/dev/null | head -n 1 | sed 's/\x1b\[[0-9;]*m//g'))"
if ! go build -o "$work/iggy-kafka" ./cmd/iggy-kafka; then
	fail "build ./cmd/iggy-kafka"
	finish
fi
# Built in a copy, so that the checkout gets no target/ directory.
mkdir -p "$work/java"
cp -r scripts/clients/java/pom.xml scripts/clients/java/src scripts/clients/java/connect "$work/java/"
if ! (cd "$work/java" && mvn -B -q compile dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt") >"$work/mvn.log" 2>&1; then
	fail "build scripts/clients/java with Maven (Maven Central, cached in ~/.m2)" "$(tail -n 30 "$work/mvn.log")"
	finish
fi
jars="$(cat "$work/classpath.txt")"
if ! (cd "$work/java/connect" && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$work/connect-classpath.txt") >"$work/mvn-connect.log" 2>&1; then
	fail "resolve scripts/clients/java/connect with Maven (Maven Central, cached in ~/.m2)" "$(tail -n 30 "$work/mvn-connect.log")"
	finish
fi
connect_jars="$(cat "$work/connect-classpath.txt")"

# wait_port NAME PID PORT LOG: until PORT accepts; false (after a FAIL) when PID exits or 30 s pass.
wait_port() {
	local name=$1 pid=$2 port=$3 log=$4
	for _ in $(seq 1 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			fail "$name exited before accepting connections" "$(tail -n 30 "$log")"
			return 1
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	fail "$name did not accept connections on 127.0.0.1:$port within 30 s" "$(tail -n 30 "$log")"
	return 1
}

# run_checks NAME ARGS...: the Java program (at most 300 s) against what ARGS name; its PASS and
# FAIL lines count, and a program that fails without saying so, or says nothing, is a FAIL.
run_checks() {
	local name=$1 rc p f
	shift
	echo "--- $name"
	mkdir -p "$work/$name-tmp"
	timeout 300 java -Djava.io.tmpdir="$work/$name-tmp" -cp "$work/java/target/classes:$jars" interop.JavaInterop --label "$name" --tools-classpath "$jars" \
		--tools-archive "$work/tools.jsa" --connect-classpath "$connect_jars" "$@" \
		2>"$work/$name.err" | tee "$work/$name.out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^PASS' "$work/$name.out")
	f=$(grep -c '^FAIL' "$work/$name.out")
	passed=$((passed + p))
	failed=$((failed + f))
	if [[ $rc -eq 124 ]]; then
		fail "$name: did not finish within 300 s" "$(tail -n 20 "$work/$name.err")"
	elif [[ $rc -ne 0 && $f -eq 0 ]]; then
		fail "$name: exit status $rc" "$(tail -n 20 "$work/$name.err")"
	elif [[ $rc -eq 0 && $p -eq 0 ]]; then
		fail "$name: no check ran" "$(tail -n 20 "$work/$name.err")"
	fi
}

# show_errors SINCE LOG...: a gateway's ERROR lines, and the tail of its log when a check failed
# since the count of failures was SINCE.
show_errors() {
	local since=$1 log
	shift
	for log in "$@"; do
		if grep -q 'level=ERROR' "$log"; then
			echo "--- $(basename "$log"): errors"
			grep 'level=ERROR' "$log" | head -n 20
		fi
		if [[ $failed -gt $since ]]; then
			echo "--- $(basename "$log") (last 40 lines)"
			tail -n 40 "$log"
		fi
	done
}

# --- one gateway, and one with --sasl ---------------------------------------------------------
port="$(free_port)"
sasl_port="$(free_port)"
while [[ "$sasl_port" == "$port" ]]; do sasl_port="$(free_port)"; done
iggy_flags single || exit 1
"$work/iggy-kafka" serve --bind "127.0.0.1:$port" "${iggy_flags[@]}" --transactions --log-level warn >"$work/gateway.log" 2>&1 &
pids+=($!)
single_pid=$!
iggy_flags sasl || exit 1
sasl_iggy="${iggy_flags[1]}"
"$work/iggy-kafka" serve --bind "127.0.0.1:$sasl_port" "${iggy_flags[@]}" --sasl --log-level warn >"$work/sasl.log" 2>&1 &
pids+=($!)
echo "waiting for the gateways on 127.0.0.1:$port and (--sasl) 127.0.0.1:$sasl_port"
if wait_port gateway "$single_pid" "$port" "$work/gateway.log" &&
	wait_port "the --sasl gateway" "${pids[1]}" "$sasl_port" "$work/sasl.log"; then
	# The Iggy user java-prov, whose SCRAM credential the administrator iggy provisions with
	# kafka-configs.
	prov=()
	# java-acl, without permissions, is given and refused ACLs.
	if go run ./scripts/iggyuser --iggy "$sasl_iggy" --user java-prov --password java-prov-iggy >"$work/iggyuser.log" 2>&1 &&
		go run ./scripts/iggyuser --iggy "$sasl_iggy" --user java-acl --password java-acl-iggy --no-permissions >>"$work/iggyuser.log" 2>&1; then
		prov=(--provisioned-user java-prov --acl-user java-acl)
	else
		fail "create the Iggy users java-prov and java-acl (scripts/iggyuser)" "$(cat "$work/iggyuser.log")"
	fi
	run_checks single --bootstrap "127.0.0.1:$port" --brokers 1 --sasl-bootstrap "127.0.0.1:$sasl_port" "${prov[@]}" --transactions true \
		--only clients,tools,connect,streams
	# The transactional checks and Streams' exactly_once_v2, a run of their own (its own 300 s).
	run_checks transactions --bootstrap "127.0.0.1:$port" --brokers 1 --transactions true --only transactions,eos
fi
show_errors 0 "$work/gateway.log" "$work/sasl.log"
for pid in "${pids[@]}"; do stop_pid "$pid"; done
pids=()
stop_iggy
iggy_pids=()

# --- a fleet of three -----------------------------------------------------------------------
# A store and three gateways, each its own process, as kgo-integration.sh --fleet starts them:
# the Streams check drains the gateway coordinating its group (and undoes the drain); the last
# check signals the gateway coordinating its groups (SIGTERM, then SIGKILL). Then three gateways
# started with --transactions on the same store, for Streams' exactly_once_v2 through a drain and
# a SIGKILL of the gateway coordinating its transactional id (which the checks start again).

# start_fleet LOG-PREFIX SERVE-FLAGS...: three gateways (node ids 1-3, free ports) on the fleet's
# store at $iggy_addr, each logging to $work/LOG-PREFIX-N.log; sets ports, list (the --brokers
# list), node_pids and fleet_pids, adds them to pids and their logs to fleet_logs, and waits until
# each accepts and the coordinator partitions have settled. False (after a FAIL) when one did not
# start.
start_fleet() {
	local prefix=$1 n
	shift
	fleet_ports 3
	node_pids=()
	fleet_pids=()
	for n in 1 2 3; do
		"$work/iggy-kafka" serve --iggy "$iggy_addr" --node-id "$n" --bind "127.0.0.1:${ports[$((n - 1))]}" \
			--brokers "$list" "$@" --log-level info >"$work/$prefix-$n.log" 2>&1 &
		pids+=($!)
		fleet_pids+=($!)
		node_pids+=("$n:$!")
		# The checks SIGKILL one: out of the job table, bash does not report it killed.
		disown $!
		fleet_logs+=("$work/$prefix-$n.log")
	done
	echo "waiting for the fleet: Iggy on $iggy_addr, gateways $list${*:+ ($*)}"
	for n in 1 2 3; do
		wait_port "gateway $n" "${fleet_pids[$((n - 1))]}" "${ports[$((n - 1))]}" "$work/$prefix-$n.log" || return 1
	done
	# While the gateways join, coordinator partitions move between them: wait until none has
	# changed hands for 3 s (each gateway logs those it serves or stops), as kgo-integration.sh.
	settle_partitions
}

failed_before=$failed
up=1
store_flags fleet || up=0
iggy_addr="${iggy_flags[1]:-}"
fleet_logs=("$work"/fleet-iggy/*.log)
if [[ $up -eq 1 ]] && start_fleet gateway; then
	run_checks fleet --bootstrap "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}" --brokers 3 \
		--node-pids "$(IFS=,; echo "${node_pids[*]}")" --iggy-kafka "$work/iggy-kafka" --iggy "$iggy_addr"
	for pid in "${fleet_pids[@]}"; do stop_pid "$pid"; done
	if start_fleet gateway-txn --transactions; then
		run_checks fleet-transactions --bootstrap "127.0.0.1:${ports[0]},127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}" --brokers 3 \
			--transactions true --only eos \
			--node-pids "$(IFS=,; echo "${node_pids[*]}")" --iggy-kafka "$work/iggy-kafka" --iggy "$iggy_addr"
	fi
fi
show_errors "$failed_before" "${fleet_logs[@]}"
finish
