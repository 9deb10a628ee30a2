package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// handoverRow matches partition 4's move from node 2 to node 3 under claim 2 in the console's
// handover pane (TIME PART FROM TO CLAIM REASON ...).
var handoverRow = regexp.MustCompile(`(?m)^ *\S+ +4 +2 +3 +2 +(crash|lease|stop|drain) `)

// claims --watch in a real terminal (a tmux pane of 80x24) shows a handover once its claim
// record is in the log.
func TestClaimsWatchInTerminal(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		// The test command (scripts/test.sh) installs tmux and sets this, so CI never skips.
		if os.Getenv("IGGY_TEST_REQUIRE_TMUX") != "" {
			t.Fatal("tmux is not installed and IGGY_TEST_REQUIRE_TMUX is set")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	bin := testbin.Path(t)
	addr, put := operatorStore(t)
	session := "claims-watch-" + filepath.Base(dir)
	sock := filepath.Join(dir, "tmux.sock")
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	cmd := bin + " claims --watch --iggy " + addr
	if out, err := tm("new-session", "-d", "-s", session, "-x", "80", "-y", "24", "env", "XDG_CONFIG_HOME="+dir, "TERM=xterm-256color", "sh", "-c", cmd+" 2>"+filepath.Join(dir, "stderr")); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	screen := func() (string, error) { return tm("capture-pane", "-p", "-t", session) }
	checkfor.Eventually(t, 20*time.Second, "the view", func() error {
		s, err := screen()
		if err != nil {
			return err
		}
		if !strings.Contains(s, "16/16 owned") {
			b, _ := os.ReadFile(filepath.Join(dir, "stderr"))
			return errors.New("screen:\n" + s + "\nstderr: " + string(b))
		}
		return nil
	})
	put(4, record.Record{Type: record.TypeClaim, Claim: 2, Time: time.Now(), ClaimInfo: &record.Claim{Number: 2, Node: 3, Addr: "localhost:9093"}})
	written := time.Now()
	checkfor.Eventually(t, 10*time.Second, "the handover on screen", func() error {
		s, err := screen()
		if err != nil {
			return err
		}
		if !handoverRow.MatchString(s) {
			return errors.New("screen:\n" + s)
		}
		return nil
	})
	t.Logf("handover on screen %v after its claim record was appended", time.Since(written).Round(time.Millisecond))
	if _, err := tm("send-keys", "-t", session, "q"); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "q quits", func() error {
		if _, err := tm("has-session", "-t", session); err == nil {
			return errors.New("session still running")
		}
		return nil
	})
}
