package fleettest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// requireJavaEnv, set (the test command sets it), makes a missing Java or Maven fail the tests
// that drive the Java client instead of skipping them.
const requireJavaEnv = "IGGY_TEST_REQUIRE_JAVA"

// javaFamilies are the Java client's groups, classic and KIP-848 (group.protocol=consumer), run
// by scripts/clients/java's GroupMembers as a child process.
func javaFamilies() []groupFamily {
	var out []groupFamily
	for _, proto := range []string{"classic", "consumer"} {
		name := "Java classic"
		if proto == "consumer" {
			name = "Java KIP-848"
		}
		out = append(out, groupFamily{name: name, slug: "java-" + proto,
			start: func(t *testing.T, f *fleet, group string, rec *groupRecorder) func() {
				return startJavaGroup(t, f, group, proto, rec)
			}})
	}
	return out
}

// startJavaGroup runs GroupMembers for group and feeds what it prints to rec.
func startJavaGroup(t *testing.T, f *fleet, group, proto string, rec *groupRecorder) func() {
	t.Helper()
	java, cp := javaGroupMembers(t)
	logPath := filepath.Join(f.home, group+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-Xmx256m", "-cp", cp, "interop.GroupMembers",
		strings.Join(f.seeds(), ","), group, topic, proto, strconv.Itoa(groupMembers))
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the Java group members: %v", err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			javaEvent(sc.Text(), rec)
		}
		io.Copy(io.Discard, stdout)
	}()
	exited := make(chan error, 1)
	go func() {
		<-read
		exited <- cmd.Wait()
		logf.Close()
	}()
	var stopped bool
	return func() {
		if stopped {
			return
		}
		stopped = true
		stdin.Close()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the Java group members of %s exited: %v\n%s", group, err, testbin.TailFile(logPath, tailLines))
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("the Java group members of %s did not leave within 60 s\n%s", group, testbin.TailFile(logPath, tailLines))
		}
	}
}

// javaEvent feeds one line of GroupMembers' output to rec.
func javaEvent(line string, rec *groupRecorder) {
	f := strings.SplitN(line, " ", 5)
	if len(f) < 3 {
		rec.failed("java", "unreadable line: "+line)
		return
	}
	member := f[1]
	num := func(i int) int64 {
		if i >= len(f) {
			return -1
		}
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return -1
		}
		return n
	}
	switch f[0] {
	case "R":
		if len(f) == 5 {
			rec.read(member, int32(num(2)), num(3), f[4])
		}
	case "C":
		rec.committed(int32(num(2)), num(3))
	case "A":
		rec.assignment(member, "assigned", partsOf(f[2]))
	case "V":
		rec.assignment(member, "revoked", partsOf(f[2]))
	case "L":
		rec.assignment(member, "lost", partsOf(f[2]))
	case "G":
		if g := num(2); g > 0 {
			rec.generation(member, int32(g))
		}
	case "E":
		rec.failed(member, strings.Join(f[2:], " "))
	default:
		rec.failed(member, "unreadable line: "+line)
	}
}

// javaGroupMembers builds scripts/clients/java once per version of its sources (Maven, with the
// jars from Maven Central kept in ~/.m2) into the user cache, ~/.cache/iggy-kafka, and returns
// the java executable and the classpath that runs GroupMembers. Without Java or Maven the test
// skips, or fails when requireJavaEnv is set.
func javaGroupMembers(t *testing.T) (java, classpath string) {
	t.Helper()
	java, errJ := exec.LookPath("java")
	mvn, errM := exec.LookPath("mvn")
	if errJ != nil || errM != nil {
		if os.Getenv(requireJavaEnv) != "" {
			t.Fatalf("java or mvn not found while %s is set: the Java client's group is not measured", requireJavaEnv)
		}
		t.Skip("the Java client needs java and mvn (Debian's openjdk-17-jdk-headless and maven)")
	}
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "scripts", "clients", "java")
	files := []string{"pom.xml"}
	err = filepath.WalkDir(filepath.Join(src, "src"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(src, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	h := sha256.New()
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "iggy-kafka", "java-clients", hex.EncodeToString(h.Sum(nil))[:16])
	cpFile := filepath.Join(dir, "classpath.txt")
	if _, err := os.Stat(cpFile); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "build-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		for _, name := range files {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err == nil {
				err = os.MkdirAll(filepath.Dir(filepath.Join(tmp, name)), 0o755)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(tmp, name), b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(mvn, "-B", "-q", "compile", "dependency:build-classpath", "-Dmdep.outputFile="+filepath.Join(tmp, "classpath.txt"))
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building scripts/clients/java with Maven: %v\n%s", err, testbin.Tail(string(out), 30))
		}
		// Another test binary may have built the same sources meanwhile: either copy serves.
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(cpFile); serr != nil {
				t.Fatalf("keeping the Java build: %v", err)
			}
		}
	}
	jars, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	return java, filepath.Join(dir, "target", "classes") + ":" + strings.TrimSpace(string(jars))
}
