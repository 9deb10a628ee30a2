package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// TestMain removes the iggy-kafka build that the process tests share.
func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// runCLI runs one command line in-process with the given environment.
func runCLI(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, environ, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUnknownEnvironmentVariableIsRefused(t *testing.T) {
	code, _, stderr := runCLI(t, []string{"IGGY_KAFKA_LOG_LEVLE=debug"}, "version")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
	}
	if !strings.Contains(stderr, "IGGY_KAFKA_LOG_LEVLE") || !strings.Contains(stderr, "IGGY_KAFKA_LOG_LEVEL") {
		t.Fatalf("stderr %q should name the variable and IGGY_KAFKA_LOG_LEVEL", stderr)
	}
}

func TestBadValuesNameSettingAndSource(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		want    []string
	}{
		{"flag duration", nil, []string{"store", "--fsync-interval", "5x", "--print-config"}, []string{"fsync-interval", "flag --fsync-interval", "duration"}},
		{"env enum", []string{"IGGY_KAFKA_FSYNC=sometimes"}, []string{"store", "--print-config"}, []string{"fsync", "env IGGY_KAFKA_FSYNC", "always, interval, never"}},
		{"env port", []string{"IGGY_KAFKA_BIND=:99999"}, []string{"serve", "--print-config"}, []string{"bind", "IGGY_KAFKA_BIND", "port"}},
		{"flag bool", nil, []string{"serve", "--auto-create-topics=maybe"}, []string{"auto-create-topics"}},
		{"brokers", nil, []string{"serve", "--brokers", "1@localhost", "--data", "x"}, []string{"brokers", "host:port"}},
		{"node not in fleet", nil, []string{"serve", "--brokers", "1@localhost:9092", "--node-id", "3"}, []string{"node-id", "not in --brokers"}},
		{"unknown flag", nil, []string{"serve", "--bnid", ":1"}, []string{"bnid"}},
		{"unknown command", nil, []string{"serev"}, []string{"serev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.environ, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

func TestPrintConfigShowsSourcesAndRedactsSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("bind: \":19092\"\nstream: fromfile\nfsync: never\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"IGGY_KAFKA_CONFIG=" + file, "IGGY_KAFKA_ROOT_PASSWORD=hunter2", "IGGY_KAFKA_STREAM=fromenv"}
	code, out, stderr := runCLI(t, environ, "serve", "--print-config", "--fsync", "always")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "hunter2") {
		t.Fatalf("secret printed:\n%s", out)
	}
	for _, want := range []string{
		"bind", ":19092", "file " + file, // file beats default
		"fromenv", "env IGGY_KAFKA_STREAM", // env beats file
		"always", "flag --fsync", // flag beats file
		"<redacted>", "env IGGY_KAFKA_ROOT_PASSWORD",
		"node-id", "default",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfigFileProblemsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("bnid: \":1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, nil, "serve", "--config", typo, "--print-config")
	if code != exitUsage || !strings.Contains(stderr, `"bnid"`) || !strings.Contains(stderr, `"bind"`) {
		t.Fatalf("exit %d stderr %q: want 2 naming bnid and bind", code, stderr)
	}
	code, _, stderr = runCLI(t, nil, "serve", "--config", filepath.Join(dir, "missing.yaml"), "--print-config")
	if code != exitUsage || !strings.Contains(stderr, "missing.yaml") {
		t.Fatalf("exit %d stderr %q: want 2 naming the missing file", code, stderr)
	}
}

func TestDefaultConfigFileFromXDG(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "iggy-kafka"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "iggy-kafka", "config.yaml"), []byte("listen: 127.0.0.1:18090\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, []string{"XDG_CONFIG_HOME=" + dir}, "store", "--print-config")
	if code != exitOK || !strings.Contains(out, "127.0.0.1:18090") {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

func TestHelpListsWorkingCommandsOnly(t *testing.T) {
	code, out, _ := runCLI(t, nil, "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	root := newRootCmd(nil)
	var listed []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			listed = append(listed, c.Name())
		}
	}
	want := []string{"claims", "completion", "drain", "group", "inspect", "replay", "serve", "store", "tail", "transactions", "version"}
	if strings.Join(listed, " ") != strings.Join(want, " ") {
		t.Fatalf("commands %v, want %v", listed, want)
	}
	for _, name := range want {
		if !strings.Contains(out, name) {
			t.Errorf("help lacks %s", name)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, nil, "version")
	if code != exitOK || !strings.HasPrefix(out, "iggy-kafka ") || !strings.Contains(out, "commit: ") {
		t.Fatalf("exit %d out %q", code, out)
	}
	version, commit, date = "1.2.3", "abc123", "2026-01-02"
	defer func() { version, commit, date = "", "", "" }()
	_, out, _ = runCLI(t, nil, "version")
	if !strings.Contains(out, "iggy-kafka 1.2.3") || !strings.Contains(out, "abc123") || !strings.Contains(out, "2026-01-02") {
		t.Fatalf("ldflags values not shown: %q", out)
	}
}

// The committed completion scripts must match the command tree; regenerate them with
// `go generate ./completions`.
func TestCompletionsAreCurrent(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, stderr := runCLI(t, nil, "completion", shell)
		if code != exitOK {
			t.Fatalf("completion %s: exit %d %s", shell, code, stderr)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "completions", "iggy-kafka."+shell))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("completions/iggy-kafka.%s is stale: run go generate ./completions", shell)
		}
	}
	if code, _, _ := runCLI(t, nil, "completion", "tcsh"); code != exitUsage {
		t.Errorf("unknown shell: exit %d, want %d", code, exitUsage)
	}
}

// The configuration table (docs/configuration.md) must list every setting with its environment variable.
func TestConfigurationPageListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings.All() {
		row := "| `--" + s.FlagName() + "` | `" + s.Env() + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("docs/configuration.md lacks the row for %s (%q)", s.Name, row)
		}
	}
}
