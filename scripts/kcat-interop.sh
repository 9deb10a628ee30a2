#!/usr/bin/env bash
# Checks that librdkafka, the C client behind kcat and the Confluent clients, works against
# `iggy-kafka serve` with the embedded store (or the real Iggy server: IGGY_KAFKA_TEST_IGGY_SERVER). It builds the binary into a temporary directory,
# starts a gateway on free loopback ports, waits until it answers, and drives it with kcat:
# metadata, produce and consume round trips with every codec (keys, headers, exact offsets),
# several partitions, consuming from the middle and from the end, offset and timestamp queries,
# a large message and the size limit, the idempotent producer, null keys, values and headers,
# consumer groups (kcat -G: consume, commit, resume where the group left off), and SASL (PLAIN,
# SCRAM-SHA-256, SCRAM-SHA-512, with credentials franz-go sets through AlterUserScramCredentials)
# against two more gateways started with --sasl, one of them over TLS.
# Every check prints PASS or FAIL (nothing is skipped); the last line is "kcat-interop: N passed, M failed"
# and the exit status is 1 when a check failed. The gateway is stopped on exit.
#
# Usage: scripts/kcat-interop.sh
#   KCAT_INTEROP_KEEP=1 keeps the temporary directory (binaries, data, gateway logs main.log,
#   sasl-tcp.log and sasl-tls.log, franz-go's sasl-*-kgo.log, the last kcat stderr).
#
# kcat comes from the Debian package kcat; when it is missing the script installs it with
# apt-get, and fails (exit 1, saying why) when that is impossible: a missing client is not a pass.
set -uo pipefail

cd "$(dirname "$0")/.."

if ! command -v kcat >/dev/null 2>&1; then
	echo "kcat not found: installing the Debian package kcat"
	sudo=""
	if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then
		sudo="sudo -n"
	fi
	if command -v apt-get >/dev/null 2>&1; then
		($sudo apt-get update -qq && $sudo apt-get install -y -qq kcat) >/dev/null 2>&1 || true
	fi
fi
if ! command -v kcat >/dev/null 2>&1; then
	echo "kcat-interop: 0 passed, 1 failed (kcat is not installed and could not be installed with apt-get: no apt-get, no root, or no network)"
	exit 1
fi

started=$SECONDS
work="$(mktemp -d)"
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do stop_pid "$pid"; done
	stop_iggy
	if [[ "${KCAT_INTEROP_KEEP:-}" == 1 ]]; then
		echo "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

. scripts/checks.sh
# expect NAME WANT GOT: passes when GOT is exactly WANT.
expect() {
	if [[ "$2" == "$3" ]]; then
		pass "$1"
	else
		fail "$1" "diff want got:" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | head -n 20)"
	fi
}


echo "kcat: $(kcat -V 2>&1 | grep -o 'Version.*librdkafka [0-9.]*' | head -n 1)"
echo "building ./cmd/iggy-kafka and the gateway/kafka tests"
if ! go build -o "$work/iggy-kafka" ./cmd/iggy-kafka ||
	! go test -c -o "$work/kafka.test" ./gateway/kafka; then
	echo "kcat-interop: 0 passed, 1 failed (build)"
	exit 1
fi

# start_gateway NAME [KCAT ARGS -- SERVE ARGS]: starts `serve` on free loopback ports with its
# own data directory and log ($work/NAME.log), waits until kcat (with KCAT ARGS) gets metadata
# from it, and sets $broker and $pid; exits the script when it does not come up in 30 s.
start_gateway() {
	local name=$1 port store_port deadline
	shift
	local kargs=()
	while [[ $# -gt 0 && "$1" != -- ]]; do
		kargs+=("$1")
		shift
	done
	[[ $# -gt 0 ]] && shift
	port="$(free_port)"
	broker="127.0.0.1:$port"
	if ! iggy_flags "$name"; then
		echo "kcat-interop: $passed passed, $((failed + 1)) failed ($name Iggy server start)"
		exit 1
	fi
	"$work/iggy-kafka" serve \
		--bind "$broker" \
		"${iggy_flags[@]}" \
		--log-level warn \
		"$@" >"$work/$name.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	echo "waiting for the $name gateway on $broker"
	deadline=$((SECONDS + 30))
	until kcat -b "$broker" "${kargs[@]}" -L -m 2 >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "the $name gateway exited before accepting connections:" >&2
			cat "$work/$name.log" >&2
			echo "kcat-interop: $passed passed, $((failed + 1)) failed ($name gateway start)"
			exit 1
		fi
		if ((SECONDS >= deadline)); then
			echo "the $name gateway did not answer within 30s:" >&2
			tail -n 50 "$work/$name.log" >&2
			echo "kcat-interop: $passed passed, $((failed + 1)) failed ($name gateway start)"
			exit 1
		fi
		sleep 0.1
	done
}

# Three partitions for auto-created topics: kcat cannot create topics, and the multi-partition
# checks need them; the single-partition checks produce to partition 0 and read all three, so
# they also read two empty partitions to their end.
start_gateway main -- --default-partitions 3
main_pid=$pid

# The checks get 100 s (a passing run needs about 25): once they are spent, every remaining
# kcat call fails at once, so that a gateway that hangs every consumer still ends the script
# in under 2 minutes.
budget_end=$((SECONDS + 100))
out_of_time() {
	if ((SECONDS >= budget_end)); then
		echo "not run: the checks' 100 s are spent" >"$work/kcat.err"
		return 0
	fi
	return 1
}

# kc ARGS...: kcat against the gateway, bounded in time, stderr to $work/kcat.err.
kc() {
	out_of_time && return 1
	timeout 15 kcat -b "$broker" "$@" 2>"$work/kcat.err"
}

# consume NAME ARGS...: kcat -C -e with ARGS into $out; fails NAME (and returns 1) unless kcat
# exits by itself at the end of the partitions within $eof_limit seconds.
eof_limit=5
out=""
consume() {
	local name=$1 rc t0 ms
	shift
	out=""
	if out_of_time; then
		fail "$name" "$(cat "$work/kcat.err")"
		return 1
	fi
	t0=${EPOCHREALTIME/./}
	out="$(timeout $((eof_limit + 1)) kcat -b "$broker" -C -e "$@" 2>"$work/kcat.err")"
	rc=$?
	ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
	if [[ $rc -ne 0 ]]; then
		fail "$name" "kcat -C -e exit status $rc after ${ms}ms (124: still running, never saw the end of the partitions)" "$(tail -n 5 "$work/kcat.err")"
		return 1
	fi
	if ((ms > eof_limit * 1000)); then
		fail "$name" "kcat -C -e took ${ms}ms to reach the end of the partitions (limit ${eof_limit}s)"
		return 1
	fi
	return 0
}

pad="$(printf 'x%.0s' $(seq 1 200))"

# --- metadata -------------------------------------------------------------------------------
if out="$(kc -L)" && grep -q "broker 0 at $broker" <<<"$out"; then
	pass "metadata -L lists broker 0 at $broker"
else
	fail "metadata -L lists broker 0 at $broker" "$out" "$(cat "$work/kcat.err")"
fi
if out="$(kc -L -J)" && grep -q "\"brokers\":\[{\"id\":0,\"name\":\"$broker\"}\]" <<<"$out" &&
	{ ! command -v python3 >/dev/null || python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$out"; }; then
	pass "metadata -L -J is JSON naming broker 0"
else
	fail "metadata -L -J is JSON naming broker 0" "$out" "$(cat "$work/kcat.err")"
fi
# A metadata request for an unknown topic creates it (auto-create), with 3 partitions.
if out="$(kc -L -t auto-created)" && grep -q 'topic "auto-created" with 3 partitions' <<<"$out"; then
	pass "metadata -L -t auto-creates a topic with 3 partitions"
else
	fail "metadata -L -t auto-creates a topic with 3 partitions" "$out" "$(cat "$work/kcat.err")"
fi
# The regression: a fetch answer for an empty partition used to carry a null record set, which
# librdkafka refuses, so kcat -e never saw the end of the partition.
if consume "consume an empty topic (3 empty partitions) exits at the end" -t auto-created -o beginning -f '%p|%o|%k|%s\n'; then
	expect "consume an empty topic (3 empty partitions) exits at the end" "" "$out"
fi

# --- codecs ---------------------------------------------------------------------------------
# Two producer runs of three records each per codec, keys and headers on every record, values
# compressible enough that librdkafka keeps the compressed batch.
for z in none gzip snappy lz4 zstd; do
	topic="codec-$z"
	want=""
	ok=1
	codecs=""
	for run in 1 2; do
		input=""
		for i in 1 2 3; do
			n=$(((run - 1) * 3 + i))
			input+="k$n:v$n-$pad"$'\n'
			want+="0|$((n - 1))|k$n|v$n-$pad|h1=a,codec=$z"$'\n'
		done
		if ! printf '%s' "$input" | kc -P -t "$topic" -p 0 -K: -z "$z" -H h1=a -H "codec=$z" -d msg; then
			ok=0
			fail "produce with $z (run $run)" "$(grep -v '^%7' "$work/kcat.err" | tail -n 5)"
		fi
		codecs+="$(grep 'Produce MessageSet' "$work/kcat.err" | sed -E 's/.*, ([a-z0-9]+)\)$/\1/')"$'\n'
		unsupported="$(grep -o "Broker does not support compression type $z" "$work/kcat.err" | head -n 1)"
	done
	[[ $ok -eq 1 ]] && pass "produce with $z: 2 runs of 3 records"
	wire="$z"
	[[ "$z" == none ]] && wire=uncompressed
	got_codecs="$(sort -u <<<"${codecs%$'\n'}")"
	# librdkafka enables LZ4 only when the broker lists FindCoordinator, which the gateway
	# serves now that it has groups: every codec must go out as asked.
	if [[ "$got_codecs" == "$wire" ]]; then
		pass "produce with $z: batches went out $wire"
	else
		fail "produce with $z: batches went out $wire" "librdkafka sent: ${got_codecs//$'\n'/,}" "$unsupported"
	fi
	if consume "consume $z from the beginning" -t "$topic" -o beginning -f '%p|%o|%k|%s|%h\n'; then
		expect "consume $z from the beginning: 6 records, offsets 0-5, keys, values, headers" "${want%$'\n'}" "$out"
	fi
done

# The same codecs written by franz-go, so that librdkafka also reads back batches it would not
# write itself (LZ4 above).
if ! out_of_time && KCAT_INTEROP_BROKER="$broker" timeout 30 "$work/kafka.test" -test.run '^TestKcatInteropSeed$' -test.count=1 >"$work/seed.log" 2>&1; then
	for z in none gzip snappy lz4 zstd; do
		want=""
		for n in 1 2 3 4 5; do want+="0|$((n - 1))|k$n|v$n-$pad|src=kgo"$'\n'; done
		if consume "consume franz-go $z batches" -t "kgo-$z" -o beginning -f '%p|%o|%k|%s|%h\n' -d fetch; then
			expect "consume franz-go $z batches: 5 records, offsets 0-4" "${want%$'\n'}" "$out"
			wire="$z"
			[[ "$z" == none ]] && wire=uncompressed
			got="$(grep -o 'aborted msgsets, [a-z0-9]*)' "$work/kcat.err" | sed -E 's/.*, ([a-z0-9]+)\)/\1/' | sort -u | paste -sd,)"
			expect "consume franz-go $z batches: librdkafka decoded $wire batches" "$wire" "$got"
		fi
	done
else
	fail "seed topics with franz-go (TestKcatInteropSeed in gateway/kafka)" "$(tail -n 20 "$work/seed.log")"
fi

# --- several partitions ---------------------------------------------------------------------
all=""
for p in 0 1 2; do
	input=""
	want=""
	for i in $(seq 1 $((p + 2))); do
		input+="p${p}k$i:p${p}v$i"$'\n'
		want+="$p|$((i - 1))|p${p}k$i|p${p}v$i"$'\n'
	done
	all+="$want"
	if printf '%s' "$input" | kc -P -t parts -p "$p" -K:; then
		pass "produce $((p + 2)) records to parts [$p]"
	else
		fail "produce $((p + 2)) records to parts [$p]" "$(cat "$work/kcat.err")"
	fi
	if consume "consume parts [$p] alone" -t parts -p "$p" -o beginning -f '%p|%o|%k|%s\n'; then
		expect "consume parts [$p] alone: exactly its records" "${want%$'\n'}" "$out"
	fi
done
if consume "consume all partitions of parts" -t parts -o beginning -f '%p|%o|%k|%s\n'; then
	expect "consume all partitions of parts: 9 records" "$(sort <<<"${all%$'\n'}")" "$(sort <<<"$out")"
fi
if out="$(kc -L -t parts)" && grep -q 'topic "parts" with 3 partitions' <<<"$out"; then
	pass "metadata -L -t parts: 3 partitions"
else
	fail "metadata -L -t parts: 3 partitions" "$out"
fi

# Keyed records through librdkafka's murmur2 partitioner, twice: each key must land in one
# partition both times, and every partition's offsets must run 0, 1, 2, ... in produce order.
input=""
for i in $(seq 1 40); do input+="key$i:val$i"$'\n'; done
ok=1
for run in 1 2; do
	printf '%s' "$input" | kc -P -t keyed -K: -X topic.partitioner=murmur2 || ok=0
done
if [[ $ok -eq 1 ]]; then
	pass "produce 2 x 40 keyed records with the murmur2 partitioner"
else
	fail "produce 2 x 40 keyed records with the murmur2 partitioner" "$(cat "$work/kcat.err")"
fi
if consume "consume keyed" -t keyed -o beginning -f '%p %o %k %s\n'; then
	verdict="$(awk '
		{ n++; k = $3; if (k in part && part[k] != $1) bad = bad "key " k " in partitions " part[k] " and " $1 "; "
		  part[k] = $1; seen[k]++
		  if ($2 != next_off[$1] + 0) bad = bad "partition " $1 " offset " $2 " after " next_off[$1] "; "
		  next_off[$1] = $2 + 1; used[$1] = 1
		  if ($4 != "val" substr(k, 4)) bad = bad "key " k " value " $4 "; " }
		END { for (k in seen) if (seen[k] != 2) bad = bad "key " k " seen " seen[k] " times; "
		      np = 0; for (p in used) np++
		      if (n != 80) bad = bad n " records; "
		      if (np < 2) bad = bad "only " np " partition used; "
		      print (bad == "" ? "ok" : bad) }' <<<"$out")"
	expect "consume keyed: 80 records, each key in one partition, offsets contiguous, >1 partition" "ok" "$verdict"
fi

# --- offsets and timestamps -----------------------------------------------------------------
# Two producer runs (offsets 0-4, then 5-9) so that the timestamp query below has a boundary.
for run in 0 1; do
	input=""
	for i in 0 1 2 3 4; do
		n=$((run * 5 + i))
		input+="k$n:m$n"$'\n'
	done
	printf '%s' "$input" | kc -P -t offs -p 0 -K: || fail "produce offs run $run" "$(cat "$work/kcat.err")"
done
if consume "consume offs -o 5" -t offs -p 0 -o 5 -f '%o|%k|%s\n'; then
	expect "consume offs -o 5: offsets 5-9" "$(for n in 5 6 7 8 9; do echo "$n|k$n|m$n"; done)" "$out"
fi
if consume "consume offs -o -2" -t offs -p 0 -o -2 -f '%o|%k|%s\n'; then
	expect "consume offs -o -2: the last 2 records" "$(printf '8|k8|m8\n9|k9|m9')" "$out"
fi
if consume "consume offs -o end" -t offs -p 0 -o end -f '%o|%k|%s\n'; then
	expect "consume offs -o end: nothing" "" "$out"
fi
if consume "consume offs -o 10 (the high watermark)" -t offs -p 0 -o 10 -f '%o|%k|%s\n'; then
	expect "consume offs -o 10: nothing" "" "$out"
fi
if consume "consume offs as JSON" -t offs -p 0 -o beginning -J; then
	now_ms=$(($(date +%s) * 1000))
	verdict="$(sed -E 's/.*"offset":([0-9]+),"tstype":"([a-z]+)","ts":([0-9]+).*/\1 \2 \3/' <<<"$out" |
		awk -v now="$now_ms" '{ if ($2 != "create") bad = bad "offset " $1 " tstype " $2 "; "
			d = $3 - now; if (d < -600000 || d > 600000) bad = bad "offset " $1 " ts " $3 " far from now " now "; " ; n++ }
			END { if (n != 10) bad = bad n " records; "; print (bad == "" ? "ok" : bad) }')"
	expect "consume offs as JSON: 10 records with create timestamps near now" "ok" "$verdict"
	# Timestamp query: the first offset whose timestamp is at least that of offset 5.
	ts5="$(grep '"offset":5,' <<<"$out" | sed -E 's/.*"ts":([0-9]+).*/\1/')"
	first="$(sed -E 's/.*"offset":([0-9]+),"tstype":"[a-z]+","ts":([0-9]+).*/\1 \2/' <<<"$out" |
		awk -v t="$ts5" '$2 >= t { print $1; exit }')"
fi
if out="$(kc -Q -t offs:0:-1)"; then
	expect "query offs [0] end offset (-Q -t offs:0:-1)" "offs [0] offset 10" "$out"
else
	fail "query offs [0] end offset (-Q -t offs:0:-1)" "$(cat "$work/kcat.err")"
fi
if out="$(kc -Q -t offs:0:-2)"; then
	expect "query offs [0] start offset (-Q -t offs:0:-2)" "offs [0] offset 0" "$out"
else
	fail "query offs [0] start offset (-Q -t offs:0:-2)" "$(cat "$work/kcat.err")"
fi
if [[ -n "${ts5:-}" && -n "${first:-}" ]] && out="$(kc -Q -t "offs:0:$ts5")"; then
	expect "query offs [0] by the timestamp of offset 5" "offs [0] offset $first" "$out"
else
	fail "query offs [0] by the timestamp of offset 5" "ts5=${ts5:-} first=${first:-}" "$(cat "$work/kcat.err")"
fi
if out="$(kc -Q -t "offs:0:$((($(date +%s) + 3600) * 1000))")"; then
	expect "query offs [0] by a timestamp an hour ahead: -1" "offs [0] offset -1" "$out"
else
	fail "query offs [0] by a timestamp an hour ahead: -1" "$(cat "$work/kcat.err")"
fi
if out="$(kc -Q -J -t offs:0:-1 -t parts:2:-1)" &&
	grep -q '"offs":{"topic":"offs","0":{"partition":0,"offset":10}}' <<<"$out" &&
	grep -q '"parts":{"topic":"parts","2":{"partition":2,"offset":4}}' <<<"$out"; then
	pass "query -Q -J for two topics"
else
	fail "query -Q -J for two topics" "$out" "$(cat "$work/kcat.err")"
fi

# --- null keys, values and headers ----------------------------------------------------------
if printf 'k1:\n:v2\nk3:v3\n' | kc -P -t nulls -p 0 -K: -Z -H nh -H e=; then
	pass "produce null value, null key, null and empty header values"
else
	fail "produce null value, null key, null and empty header values" "$(cat "$work/kcat.err")"
fi
if consume "consume nulls as JSON" -t nulls -p 0 -o beginning -J; then
	got="$(sed -E 's/.*"offset":([0-9]+),.*("headers":.*)\}$/\1 \2/' <<<"$out")"
	expect "consume nulls: nulls kept apart from empty" "$(printf '%s\n' \
		'0 "headers":["nh",null,"e",""],"key":"k1","payload":null' \
		'1 "headers":["nh",null,"e",""],"key":null,"payload":"v2"' \
		'2 "headers":["nh",null,"e",""],"key":"k3","payload":"v3"')" "$got"
fi

# --- idempotent producer --------------------------------------------------------------------
# Small batches so that several are in flight with consecutive sequence numbers; the second run
# is a new producer id, compressed.
ok=1
for run in 0 1; do
	input=""
	for i in $(seq 1 100); do
		n=$((run * 100 + i))
		input+="i$n:iv$n"$'\n'
	done
	zflag=none
	[[ $run -eq 1 ]] && zflag=zstd
	if ! printf '%s' "$input" | kc -P -t idem -p 0 -K: -z "$zflag" -X enable.idempotence=true -X batch.num.messages=10 -X linger.ms=5 -d eos; then
		ok=0
		fail "idempotent produce run $run" "$(grep -v '^%7' "$work/kcat.err" | tail -n 5)"
	elif ! grep -q 'Acquired PID{Id:' "$work/kcat.err"; then
		ok=0
		fail "idempotent produce run $run: got a producer id" "$(grep -i pid "$work/kcat.err" | tail -n 5)"
	fi
done
[[ $ok -eq 1 ]] && pass "idempotent produce: 2 producers x 100 records in batches of 10"
if consume "consume idem" -t idem -p 0 -o beginning -f '%o %k %s\n'; then
	verdict="$(awk '{ n++; if ($1 != n - 1 || $2 != "i" n || $3 != "iv" n) { bad = "record " n ": " $0; exit } }
		END { if (bad == "" && n != 200) bad = n " records"; print (bad == "" ? "ok" : bad) }' <<<"$out")"
	expect "consume idem: 200 records in order at offsets 0-199" "ok" "$verdict"
fi

# --- large messages -------------------------------------------------------------------------
# librdkafka's own message.max.bytes (1000000) is raised so that the gateway's limit is what is
# tested: Kafka's default max.message.bytes, 1048588 bytes, per record.
head -c 750000 /dev/urandom | base64 -w0 >"$work/big1" # 1,000,000 bytes
head -c 1125000 /dev/urandom | base64 -w0 >"$work/big2" # 1,500,000 bytes
if { printf 'big:'; cat "$work/big1"; echo; } | kc -P -t big -p 0 -K: -X message.max.bytes=2000000; then
	pass "produce a 1,000,000-byte record"
else
	fail "produce a 1,000,000-byte record" "$(cat "$work/kcat.err")"
fi
if consume "consume the 1,000,000-byte record" -t big -p 0 -o beginning -f '%o %k %S %s\n'; then
	want="0 big 1000000 $(cat "$work/big1")"
	if [[ "$out" == "$want" ]]; then
		pass "consume the 1,000,000-byte record: same bytes"
	else
		fail "consume the 1,000,000-byte record: same bytes" "got $(head -c 80 <<<"$out")... (${#out} bytes)"
	fi
fi
# A partition limit far below the record: the first batch still comes whole (KIP-74).
if consume "consume the 1,000,000-byte record with fetch.message.max.bytes=65536" -t big -p 0 -o beginning -f '%o %k %S\n' -X fetch.message.max.bytes=65536; then
	expect "consume the 1,000,000-byte record with fetch.message.max.bytes=65536" "0 big 1000000" "$out"
fi
{ printf 'big:'; cat "$work/big2"; echo; } | kc -P -t big -p 0 -K: -X message.max.bytes=2000000
rc=$?
if [[ $rc -ne 0 ]] && grep -q 'Message size too large' "$work/kcat.err"; then
	pass "produce a 1,500,000-byte record: refused with MESSAGE_TOO_LARGE"
else
	fail "produce a 1,500,000-byte record: refused with MESSAGE_TOO_LARGE" "exit status $rc" "$(cat "$work/kcat.err")"
fi
if out="$(kc -Q -t big:0:-1)"; then
	expect "the refused record was not written" "big [0] offset 1" "$out"
else
	fail "the refused record was not written" "$(cat "$work/kcat.err")"
fi

# --- consumer groups ------------------------------------------------------------------------
# kcat -G is librdkafka's balanced consumer: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
# OffsetFetch, OffsetCommit (auto-commit, and on close) and LeaveGroup. A group reads the topic,
# commits, and a second run of the same group resumes after what the first one read; another
# group starts from the beginning on its own.
# group NAME GROUP ARGS...: kcat -G GROUP ... grp into $out, exiting at the end of every
# assigned partition; fails NAME unless kcat exits by itself within 20 s.
group() {
	local name=$1 g=$2 rc
	shift 2
	out=""
	if out_of_time; then
		fail "$name" "$(cat "$work/kcat.err")"
		return 1
	fi
	out="$(timeout 20 kcat -b "$broker" -G "$g" -X auto.offset.reset=earliest -X auto.commit.interval.ms=100 \
		-e -f '%p|%o|%k|%s\n' "$@" grp 2>"$work/kcat.err")"
	rc=$?
	if [[ $rc -ne 0 ]]; then
		fail "$name" "kcat -G exit status $rc (124: never reached the end of its partitions)" "$(tail -n 5 "$work/kcat.err")"
		return 1
	fi
	out="$(sort <<<"$out")"
	return 0
}
first=""
for i in 1 2 3 4 5 6; do first+="gk$i:gv$i"$'\n'; done
if printf '%s' "$first" | kc -P -t grp -K:; then
	pass "produce 6 keyed records to grp (3 partitions)"
else
	fail "produce 6 keyed records to grp (3 partitions)" "$(cat "$work/kcat.err")"
fi
if group "group g1 consumes grp" g1; then
	got="$(cut -d'|' -f3,4 <<<"$out" | sort)"
	expect "group g1 consumes grp: all 6 records, once" "$(printf 'gk%d|gv%d\n' 1 1 2 2 3 3 4 4 5 5 6 6 | sort)" "$got"
	if grep -q 'assigned: grp \[0\], grp \[1\], grp \[2\]' "$work/kcat.err"; then
		pass "group g1: its one member got all 3 partitions"
	else
		fail "group g1: its one member got all 3 partitions" "$(grep -i 'rebalanced\|error' "$work/kcat.err" | head -n 5)"
	fi
fi
second=""
for i in 7 8 9 10; do second+="gk$i:gv$i"$'\n'; done
printf '%s' "$second" | kc -P -t grp -K: || fail "produce 4 more records to grp" "$(cat "$work/kcat.err")"
if group "group g1 resumes" g1; then
	got="$(cut -d'|' -f3,4 <<<"$out" | sort)"
	expect "group g1 resumes: only the 4 records after its commits" "$(printf 'gk%d|gv%d\n' 7 7 8 8 9 9 10 10 | sort)" "$got"
fi
if group "group g1 once more" g1; then
	expect "group g1 once more: nothing left (every offset committed)" "" "$out"
fi
if group "group g2 consumes grp" g2; then
	expect "group g2: a new group reads all 10 records" "10" "$(grep -c . <<<"$out")"
fi

# --- SASL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, without and with TLS -------------------------
# Two more gateways requiring SASL, one on plain TCP and one over TLS (a certificate for
# 127.0.0.1 that TestKcatInteropCert writes), each with its own store and so its root user
# iggy/iggy. At each, franz-go (TestKcatInteropSASL) logs in with PLAIN, sets the user's own
# SCRAM-SHA-256 and SCRAM-SHA-512 credentials through AlterUserScramCredentials, and produces
# and consumes with each mechanism; then kcat does the same with each mechanism, reads what
# franz-go wrote, and is refused with a wrong password. franz-go, as the administrator iggy, also
# provisions the credentials of a second Iggy user, kcat-prov (read and write, no topic
# creation), which kcat then authenticates as: it reads and writes, and creating a topic is
# refused.
main_broker=$broker
mkdir -p "$work/tls"
if ! KCAT_INTEROP_CERT_DIR="$work/tls" "$work/kafka.test" -test.run '^TestKcatInteropCert$' -test.count=1 >"$work/cert.log" 2>&1; then
	fail "write the TLS certificate (TestKcatInteropCert in gateway/kafka)" "$(tail -n 20 "$work/cert.log")"
fi
for transport in tcp tls; do
	sec=(-X security.protocol=SASL_PLAINTEXT)
	serve=(--sasl)
	ca=""
	if [[ $transport == tls ]]; then
		sec=(-X security.protocol=SASL_SSL -X "ssl.ca.location=$work/tls/cert.pem")
		serve+=(--tls-cert "$work/tls/cert.pem" --tls-key "$work/tls/key.pem")
		ca="$work/tls/cert.pem"
	fi
	start_gateway "sasl-$transport" "${sec[@]}" -X sasl.mechanisms=PLAIN -X sasl.username=iggy -X sasl.password=iggy -- "${serve[@]}"
	if ! out_of_time && KCAT_INTEROP_BROKER="$broker" KCAT_INTEROP_CA="$ca" KCAT_INTEROP_IGGY="${iggy_flags[1]}" timeout 30 "$work/kafka.test" \
		-test.run '^TestKcatInteropSASL$' -test.count=1 -test.v >"$work/sasl-$transport-kgo.log" 2>&1; then
		pass "SASL over $transport: franz-go sets its SCRAM credentials, produces and consumes with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"
	else
		fail "SASL over $transport: franz-go sets its SCRAM credentials, produces and consumes with PLAIN, SCRAM-SHA-256, SCRAM-SHA-512" \
			"$(grep -E -- '---|_test.go' "$work/sasl-$transport-kgo.log" | tail -n 20)"
	fi
	for mech in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
		auth=("${sec[@]}" -X "sasl.mechanisms=$mech" -X sasl.username=iggy)
		name="SASL $mech over $transport"
		if printf 'sk:sv-%s\n' "$mech" | kc "${auth[@]}" -X sasl.password=iggy -P -t "kcat-sasl-$mech" -p 0 -K:; then
			pass "$name: produce"
		else
			fail "$name: produce" "$(grep -v '^%7' "$work/kcat.err" | tail -n 5)"
		fi
		if consume "$name: consume" "${auth[@]}" -X sasl.password=iggy -t "kcat-sasl-$mech" -p 0 -o beginning -f '%o|%k|%s\n'; then
			expect "$name: consume" "0|sk|sv-$mech" "$out"
		fi
		if consume "$name: consume what franz-go produced" "${auth[@]}" -X sasl.password=iggy -t "kgo-sasl-$mech" -p 0 -o beginning -f '%o|%k|%s\n'; then
			expect "$name: consume what franz-go produced" "0|k|v-$mech" "$out"
		fi
		if kc "${auth[@]}" -X sasl.password=wrong -L -m 1 >/dev/null; then
			fail "$name: a wrong password gets no metadata" "kcat -L succeeded"
		elif grep -q 'SASL authentication error' "$work/kcat.err"; then
			pass "$name: a wrong password gets no metadata (SASL authentication error)"
		else
			fail "$name: a wrong password gets no metadata (SASL authentication error)" "$(cat "$work/kcat.err")"
		fi
		[[ $mech == PLAIN ]] && continue
		prov=("${sec[@]}" -X "sasl.mechanisms=$mech" -X sasl.username=kcat-prov -X sasl.password=kcat-prov-pass)
		name="SASL $mech over $transport as kcat-prov, provisioned by the administrator iggy"
		if printf 'pk:pv-%s\n' "$mech" | kc "${prov[@]}" -P -t "kgo-sasl-$mech" -p 0 -K:; then
			pass "$name: produce"
		else
			fail "$name: produce" "$(grep -v '^%7' "$work/kcat.err" | tail -n 5)"
		fi
		if consume "$name: consume" "${prov[@]}" -t "kgo-sasl-$mech" -p 0 -o beginning -f '%o|%k|%s\n'; then
			expect "$name: consume" "$(printf '0|k|v-%s\n1|pk|pv-%s' "$mech" "$mech")" "$out"
		fi
		if printf 'x\n' | kc "${prov[@]}" -P -t "kcat-prov-new-$mech" -p 0; then
			fail "$name: producing to a new topic (no permission to create it) is refused" "kcat produced"
		elif grep -q -i 'authoriz' "$work/kcat.err"; then
			pass "$name: producing to a new topic (no permission to create it) is refused (authorization failed)"
		else
			fail "$name: producing to a new topic (no permission to create it) is refused (authorization failed)" "$(grep -v '^%7' "$work/kcat.err" | tail -n 5)"
		fi
	done
	stop_pid "$pid"
done
broker=$main_broker

if ! kill -0 "$main_pid" 2>/dev/null; then
	fail "gateway still running at the end" "$(tail -n 50 "$work/main.log")"
fi
if grep -q 'level=ERROR' "$work/main.log"; then
	echo "--- gateway errors ---"
	grep 'level=ERROR' "$work/main.log" | head -n 20
fi
echo "kcat-interop: $((SECONDS - started))s"
echo "kcat-interop: $passed passed, $failed failed"
exit $((failed > 0))
