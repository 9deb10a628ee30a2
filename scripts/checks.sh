# Shared by the interop scripts (sourced, not run): PASS/FAIL lines with their counts, stopping
# a process, the Iggy server a gateway runs against (iggy_flags, store_flags), and a
# free loopback port.

passed=0
failed=0
pass() {
	passed=$((passed + 1))
	printf 'PASS  %s\n' "$1"
}
# fail NAME [DETAIL...]: each detail is indented below the FAIL line, at most 3000 bytes.
fail() {
	failed=$((failed + 1))
	printf 'FAIL  %s\n' "$1"
	shift
	local line
	for line in "$@"; do
		printf '%s\n' "$line" | head -c 3000 | sed 's/^/      /'
	done
}

# stop_pid PID: SIGTERM, then SIGKILL when it has not exited within 10 s; reaps it.
stop_pid() {
	local pid=$1
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

# settle_partitions: while the gateways of a fleet join, coordinator partitions move between
# them; waits (60 s at most) until none has changed hands for 3 s, as each gateway logs those it
# serves or stops in $work/gateway-*.log, and sets $last to the count of those lines.
settle_partitions() {
	local quiet=0 now _
	last=""
	for _ in $(seq 1 240); do
		now="$(cat "$work"/gateway-*.log | grep -c 'msg="partition \(serving\|stopped\)"' || true)"
		if [[ "$now" == "$last" && "$now" != 0 ]]; then
			quiet=$((quiet + 1))
			[[ $quiet -ge 12 ]] && break
		else
			quiet=0
		fi
		last="$now"
		sleep 0.25
	done
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null ||
		echo $((20000 + RANDOM % 40000))
}

# fleet_ports N: sets the array ports to N distinct free ports and list to the --brokers list of
# nodes 1..N on them (1@127.0.0.1:P1,2@127.0.0.1:P2,...).
fleet_ports() {
	local n p brokers=()
	ports=()
	for ((n = 1; n <= $1; n++)); do
		p="$(free_port)"
		while [[ " ${ports[*]} " == *" $p "* ]]; do p="$(free_port)"; done
		ports+=("$p")
		brokers+=("$n@127.0.0.1:$p")
	done
	list="$(IFS=,; echo "${brokers[*]}")"
}

# iggy_flags NAME [IGGYTARGET FLAGS...]: sets the array iggy_flags to the flags that point a
# `serve` at its Iggy server. Without IGGY_KAFKA_TEST_IGGY_SERVER, the embedded store inside the
# gateway's process (a free port, data in $work/NAME-data, no fsync). With it, the real
# iggy-server (IGGY_KAFKA_TEST_IGGY_NODES=3 for a cluster) that scripts/iggytarget starts, its
# data and logs in $work/NAME-iggy; stop_iggy stops it. Needs $work and $work/iggy-kafka.
# store_flags NAME is the same for a script that wants a separate server even on the embedded
# store (a fleet): iggytarget runs `iggy-kafka store` then.
iggy_pids=()
iggy_flags() {
	local name=$1
	shift
	if [[ -z "${IGGY_KAFKA_TEST_IGGY_SERVER:-}" ]]; then
		iggy_flags=(--store-listen "127.0.0.1:$(free_port)" --data "$work/$name-data" --fsync never)
		return 0
	fi
	store_flags "$name" "$@"
}
store_flags() {
	local name=$1 line i
	shift
	if [[ ! -x "$work/iggytarget" ]]; then
		go build -o "$work/iggytarget" ./scripts/iggytarget || return 1
	fi
	mkdir -p "$work/$name-iggy"
	"$work/iggytarget" --dir "$work/$name-iggy" --iggy-kafka "$work/iggy-kafka" "$@" \
		>"$work/$name-iggy/addr" 2>"$work/$name-iggy/iggytarget.log" &
	iggy_pids+=($!)
	for i in $(seq 1 700); do
		line="$(head -n 1 "$work/$name-iggy/addr")"
		if [[ "$line" == iggy\ * ]]; then
			iggy_flags=(--iggy "${line#iggy }")
			echo "$name: Iggy server (${IGGY_KAFKA_TEST_IGGY_SERVER:-embedded store}) on ${line#iggy }"
			return 0
		fi
		if ! kill -0 "${iggy_pids[-1]}" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	echo "$name: the Iggy server did not start:" >&2
	cat "$work/$name-iggy/iggytarget.log" >&2
	tail -n 30 "$work/$name-iggy"/*.log >&2
	return 1
}
# stop_iggy: stops every server iggy_flags and store_flags started (the gateways first).
stop_iggy() {
	local pid
	for pid in "${iggy_pids[@]}"; do stop_pid "$pid"; done
}
