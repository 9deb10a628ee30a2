// Package testbin owns the iggy-kafka executable that tests run as a child process: it builds
// cmd/iggy-kafka once per test binary, whatever package the test lives in, so that every
// process test exercises the same build the same way and no test pays for a second build. It
// also shortens a child's log for a failure message.
//
// The two things to know are Path, which a test calls for the executable, and Main, which a
// package's TestMain calls so the build is removed when the tests end. Only _test.go files may
// import this package.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Env names the variable that points the tests at an executable already built (a CI step
// testing the binary it ships) instead of building one. It stays outside the IGGY_KAFKA_
// prefix: the children inherit it, and iggy-kafka refuses an IGGY_KAFKA_ variable it does not
// know.
const Env = "TEST_IGGY_KAFKA_BIN"

const mainPackage = "github.com/iggy-kafka/iggy-kafka/cmd/iggy-kafka"

var (
	once     sync.Once
	dir      string // the temporary directory of the build, removed by Main
	path     string
	buildErr error
)

// Path returns the iggy-kafka executable, building it on the first call of the test binary.
// A failed build fails t, and every later caller with the same error.
func Path(t testing.TB) string {
	t.Helper()
	bin, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Build is Path for a TestMain, which has no t: the executable, or why there is none.
func Build() (string, error) {
	once.Do(func() { path, buildErr = build() })
	return path, buildErr
}

// Main runs the tests and then removes the build, for a package's TestMain:
// func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	return code
}

func build() (string, error) {
	if bin := os.Getenv(Env); bin != "" {
		return bin, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	dir, err = os.MkdirTemp("", "iggy-kafka-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "iggy-kafka")
	cmd := exec.Command("go", "build", "-o", bin, mainPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", mainPackage, err, out)
	}
	return bin, nil
}

// ModuleRoot is the nearest directory above the working directory (a test's package) holding
// go.mod, so that a test keeps working when its package moves.
func ModuleRoot() (string, error) {
	dir, err := filepath.Abs(".")
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test directory")
		}
		dir = parent
	}
}

// Tail is the last n lines of s, without a trailing newline: enough of a child's log to explain
// a failure without burying it.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TailFile is Tail of the file at path, or a line saying why it could not be read.
func TailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return Tail(string(b), n)
}
