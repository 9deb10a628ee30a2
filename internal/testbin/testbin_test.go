package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 2, "b\nc"},
		{"a\nb\n", 5, "a\nb"},
		{"", 3, ""},
	} {
		if got := Tail(tc.in, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 1); got != "three" {
		t.Errorf("TailFile = %q, want %q", got, "three")
	}
	if got := TailFile(filepath.Join(t.TempDir(), "missing"), 1); !strings.HasPrefix(got, "(no log: ") {
		t.Errorf("TailFile of a missing file = %q", got)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "module github.com/iggy-kafka/iggy-kafka\n") {
		t.Errorf("%s/go.mod is not the iggy-kafka module", root)
	}
}

// The executable Path returns is iggy-kafka, the same file on every call.
func TestPathBuildsOnce(t *testing.T) {
	bin := Path(t)
	if again := Path(t); again != bin {
		t.Errorf("second Path = %q, first %q", again, bin)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), "iggy-kafka") {
		t.Errorf("version printed %q", out)
	}
}
