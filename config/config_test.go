package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func testRegistry() *Registry {
	return NewRegistry(
		Setting{Name: ConfigKey},
		Setting{Name: "log-level", Kind: Enum, Default: "info", Enum: []string{"debug", "info"}},
		Setting{Name: "timeout", Kind: Duration, Default: "1s", Commands: []string{"serve"}},
		Setting{Name: "addr", Kind: HostPort, Default: ":9092", Commands: []string{"serve"}},
		Setting{Name: "size", Kind: Bytes, Default: "1MiB", Commands: []string{"serve"}},
		Setting{Name: "peers", Kind: List, Commands: []string{"serve"}},
		Setting{Name: "secret", Default: "s", Secret: true, Commands: []string{"serve"}},
		Setting{Name: "on", Kind: Bool, Default: "false", Commands: []string{"serve"}},
		Setting{Name: "count", Kind: Int, Default: "3", Commands: []string{"other"}},
	)
}

func flags(r *Registry, command string, args ...string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(command, pflag.ContinueOnError)
	r.AddFlags(fs, command, true)
	r.AddFlags(fs, command, false)
	if err := fs.Parse(args); err != nil {
		panic(err)
	}
	return fs
}

func TestPrecedence(t *testing.T) {
	r := testRegistry()
	file := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(file, []byte("timeout: 5s\naddr: \"h:1\"\nsize: 2MiB\npeers: [a, b]\n"), 0o600)
	env := []string{"IGGY_KAFKA_CONFIG=" + file, "IGGY_KAFKA_ADDR=e:2"}
	v, err := r.Load("serve", flags(r, "serve", "--size", "3KiB"), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Duration("timeout"); got != 5*time.Second || v.Source("timeout").Kind != "file" {
		t.Errorf("timeout %v from %v, want 5s from file", got, v.Source("timeout"))
	}
	if got := v.String("addr"); got != "e:2" || v.Source("addr").String() != "env IGGY_KAFKA_ADDR" {
		t.Errorf("addr %q from %v, want env", got, v.Source("addr"))
	}
	if got := v.Bytes("size"); got != 3<<10 || v.Source("size").Kind != "flag" {
		t.Errorf("size %d from %v, want flag 3KiB", got, v.Source("size"))
	}
	if got := v.List("peers"); strings.Join(got, "|") != "a|b" {
		t.Errorf("peers %v", got)
	}
	if got := v.String("log-level"); got != "info" || v.Source("log-level").Kind != "default" {
		t.Errorf("log-level %q from %v", got, v.Source("log-level"))
	}
	for _, val := range v.All() {
		if val.Setting.Name == "secret" && val.Shown() != "<redacted>" {
			t.Errorf("secret shown as %q", val.Shown())
		}
		if val.Setting.Name == "count" {
			t.Errorf("a setting of another command was resolved")
		}
	}
}

func TestBadValues(t *testing.T) {
	r := testRegistry()
	for _, tc := range []struct {
		env  string
		want string
	}{
		{"IGGY_KAFKA_TIMEOUT=10", "timeout"},
		{"IGGY_KAFKA_ADDR=nohost", "addr"},
		{"IGGY_KAFKA_ADDR=h:70000", "70000"},
		{"IGGY_KAFKA_SIZE=lots", "size"},
		{"IGGY_KAFKA_ON=yes please", "on"},
		{"IGGY_KAFKA_LOG_LEVEL=loud", "debug, info"},
	} {
		_, err := r.Load("serve", flags(r, "serve"), []string{tc.env})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "env IGGY_KAFKA_") {
			t.Errorf("%s: err %v, want a usage error naming %q and its source", tc.env, err, tc.want)
		}
	}
}

func TestUnknownEnvironmentSuggestsClosest(t *testing.T) {
	r := testRegistry()
	err := r.CheckEnvironment([]string{"PATH=/bin", "IGGY_KAFKA_TIMEUOT=1s", "IGGY_KAFKA_ZZZZZZZZZZZZZZZZZZZZ=1"})
	if err == nil {
		t.Fatal("unknown variables accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "IGGY_KAFKA_TIMEUOT (did you mean IGGY_KAFKA_TIMEOUT?)") || !strings.Contains(msg, "IGGY_KAFKA_ZZZZZZZZZZZZZZZZZZZZ") {
		t.Fatalf("message %q", msg)
	}
	if err := r.CheckEnvironment([]string{"IGGY_KAFKA_COUNT=1"}); err != nil {
		t.Fatalf("a known variable of another command refused: %v", err)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1048576": 1 << 20, "512KiB": 512 << 10, "100MiB": 100 << 20, "1GiB": 1 << 30, "2 MB": 2e6, "7B": 7} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1TiB", "MiB", "1.5GiB", "99999999999GiB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "abc", 0}, {"levle", "level", 2}, {"kitten", "sitting", 3}, {"", "abc", 3}} {
		if got := distance(tc.a, tc.b); got != tc.d {
			t.Errorf("distance(%q,%q)=%d want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestTestHarnessVariablesIgnored(t *testing.T) {
	r := testRegistry()
	if err := r.CheckEnvironment([]string{"IGGY_KAFKA_TEST_IGGY_SERVER=/bin/iggy-server", "IGGY_KAFKA_TEST_IGGY_NODES=3"}); err != nil {
		t.Fatalf("the test harness's variables refused: %v", err)
	}
	if err := r.CheckEnvironment([]string{"IGGY_KAFKA_TESTX=1"}); err == nil {
		t.Fatal("IGGY_KAFKA_TESTX, outside IGGY_KAFKA_TEST_, accepted")
	}
}
