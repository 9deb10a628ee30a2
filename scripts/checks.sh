# Shared by the interop scripts (sourced, not run): PASS/FAIL lines with their counts, and a
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

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null ||
		echo $((20000 + RANDOM % 40000))
}
