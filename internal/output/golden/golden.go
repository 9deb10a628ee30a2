// Package golden compares test output with files under testdata/ and rewrites them when the
// test runs with -update. It serves the operator commands' text output and the terminal views,
// whose exact layout is the thing under test. The one function to know is Assert.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -update flag is shared with charmbracelet's golden package (teatest uses it), which
// declares it unconditionally and is initialised first; declare it only where it is missing.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/ with the output seen")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Assert compares got with testdata/<name>.golden, or writes it there under -update.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", strings.ReplaceAll(name, "/", "_")+".golden")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
