package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Mistyped commands and flags get the nearest one; extra arguments and contradicting flags
// exit 2.
func TestCommandLineManners(t *testing.T) {
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"claim"}, `unknown command "claim" (did you mean "claims"?)`},
		{[]string{"clains", "--watch"}, `(did you mean "claims"?)`},
		{[]string{"claims", "--wach"}, "unknown flag: --wach (did you mean --watch?)"},
		{[]string{"drain", "node", "2", "--dry-rn"}, "(did you mean --dry-run?)"},
		{[]string{"serve", "--node-di", "2"}, "(did you mean --node-id?)"},
		{[]string{"claims", "extra"}, `takes no arguments, got "extra"`},
		{[]string{"inspect", "extra"}, `unknown command "extra"`},
		{[]string{"version", "extra"}, `takes no arguments`},
		{[]string{"claims", "--history", "2", "--group", "g"}, "--history and --group do not go together"},
		{[]string{"claims", "--watch", "--nodes"}, "do not go together"},
		{[]string{"claims", "--transactions", "--group", "g"}, "--transactions and --group do not go together"},
		{[]string{"drain", "node", "2", "--dry-run", "--yes"}, "--dry-run and --yes do not go together"},
	} {
		code, _, stderr := runCLI(t, env, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	version, commit, date = "1.2.3", "abc123", "2026-01-02"
	defer func() { version, commit, date = "", "", "" }()
	code, out, _ := runCLI(t, nil, "version", "-o", "json")
	var doc struct {
		Kind string     `json:"kind"`
		Data versionDoc `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != exitOK || doc.Kind != "version" || doc.Data.Version != "1.2.3" || doc.Data.Commit != "abc123" || doc.Data.Go == "" {
		t.Fatalf("exit %d %v\n%s", code, err, out)
	}
}

// Shell completion offers the values of -o and of the log levels, the log partitions, and the
// fleet's node ids with their state.
func TestCompletionOfValues(t *testing.T) {
	addr, _ := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	c, err := iggy.Dial(t.Context(), iggy.Config{Addrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := wire.NamedID(fleet.MetaStream("kafka"))
	for _, n := range []int32{1, 2, 3} {
		msg := iggy.Message{Payload: announcement(n, "localhost:909"+string(rune('0'+n)), time.Now(), map[int]uint64{int(n): 1})}
		if _, err := c.SendMessages(t.Context(), meta, wire.NamedID(fleet.OwnersTopic), 0, []iggy.Message{msg}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"claims", "-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"version", "-o", ""}, []string{"text", "json", "yaml"}},
		{[]string{"serve", "--log-level", ""}, []string{"debug", "info", "warn", "error"}},
		{[]string{"store", "--fsync", ""}, []string{"always", "interval", "never"}},
		{[]string{"claims", "--history", ""}, []string{"0", "7", "15"}},
		{[]string{"inspect", "--partition", ""}, []string{"0", "15"}},
		{[]string{"replay", ""}, []string{"partition"}},
		{[]string{"replay", "partition", ""}, []string{"0", "15"}},
		{[]string{"drain", ""}, []string{"node"}},
		{[]string{"drain", "node", ""}, []string{"1\tserving localhost:9091", "2\tserving localhost:9092", "3\tserving localhost:9093"}},
		{[]string{"drain", "node", "2", ""}, []string{"1\tserving", "3\tserving"}},
	} {
		code, out, stderr := runCLI(t, env, append([]string{"__complete"}, tc.args...)...)
		if code != exitOK {
			t.Errorf("%v: exit %d %s", tc.args, code, stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: completions %q lack %q", tc.args, out, w)
			}
		}
		if tc.args[0] == "drain" && len(tc.args) == 4 && strings.Contains(out, "2\t") {
			t.Errorf("%v: offers node 2 again: %q", tc.args, out)
		}
	}
}

// A read that times out says it was a read: only a write may have been applied.
func TestTimedOutReadSaysRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // silent: never answers
		}
	}()
	code, _, stderr := runCLI(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "claims", "--iggy", ln.Addr().String(), "--request-timeout", "300ms")
	if code != exitFailed || strings.Contains(stderr, "may or may not have been applied") || !strings.Contains(stderr, "no answer from the store at "+ln.Addr().String()) {
		t.Fatalf("exit %d stderr %s", code, stderr)
	}
}

// The operator commands' Iggy settings are their own: an operator's IGGY_KAFKA_OPERATOR_IGGY
// (or operator-iggy in the config file) does not reach serve, and serve's IGGY_KAFKA_IGGY does
// not reach the operator commands.
func TestOperatorSettingsApartFromServe(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("operator-iggy: 10.0.0.9:8090\noperator-stream: other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_OPERATOR_IGGY=10.0.0.7:8090", "IGGY_KAFKA_CONFIG=" + cfg}
	code, out, stderr := runCLI(t, env, "serve", "--print-config")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && (f[0] == "iggy" || f[0] == "stream") && f[2] != "default" {
			t.Errorf("serve took an operator setting: %q", l)
		}
		if len(f) > 0 && strings.HasPrefix(f[0], "operator-") {
			t.Errorf("serve lists %q", l)
		}
	}
	addr, _ := operatorStore(t)
	code, _, stderr = runCLI(t, []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_IGGY=" + addr}, "claims", "--request-timeout", "500ms", "--iggy", "127.0.0.1:1")
	if code != exitFailed || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("claims with --iggy: exit %d %s", code, stderr)
	}
	if code, _, stderr = runCLI(t, []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_OPERATOR_IGGY=" + addr}, "claims", "--nodes"); code != exitOK {
		t.Fatalf("claims with IGGY_KAFKA_OPERATOR_IGGY: exit %d %s", code, stderr)
	}
}
