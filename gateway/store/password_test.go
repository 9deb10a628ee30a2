package store

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

// A password change ends the user's other sessions, so whoever holds them learns the old
// password is gone; the session that changed it stays.
func TestChangePasswordEndsOtherSessions(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	root := loggedIn(t, s)
	perms := wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}}
	ok(t, root.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "bob", Password: "pass1", Status: userActive, Permissions: &perms}).AppendTo(nil)))
	first, second := dial(t, s), dial(t, s)
	ok(t, first.login("bob", "pass1"))
	ok(t, second.login("bob", "pass1"))
	ok(t, first.do(wire.CmdGetStreams, nil))
	ok(t, second.do(wire.CmdGetStreams, nil))

	ok(t, first.do(wire.CmdChangePassword, (&wire.ChangePassword{User: wire.NamedID("bob"), CurrentPassword: "pass1", NewPassword: "pass2"}).AppendTo(nil)))
	ok(t, first.do(wire.CmdGetStreams, nil))
	wantStatus(t, second.do(wire.CmdGetStreams, nil), wire.Unauthenticated)
	ok(t, root.do(wire.CmdGetStreams, nil))
}

// A user's hash keeps the PBKDF2 count it was made with: a store started again with another
// PasswordIterations still logs in the users of the first, and a hash stored before the count
// was kept is checked with the default count.
func TestPasswordIterationsKeptPerUser(t *testing.T) {
	dir := t.TempDir()
	first, err := New(Config{Listen: "127.0.0.1:0", DataDir: dir, Fsync: partlog.FsyncNever, Logger: slog.New(slog.DiscardHandler), PasswordIterations: 100})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = first.Serve(context.Background()) }()
	root := loggedIn(t, first)
	ok(t, root.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "bob", Password: "pass1", Status: userActive}).AppendTo(nil)))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `"iterations": 100`); n != 2 {
		t.Fatalf("the metadata holds %d users hashed with 100 iterations, want 2 (root, bob)", n)
	}
	s := startServer(t, dir, nil) // the default count
	loggedIn(t, s)
	bob := dial(t, s)
	ok(t, bob.login("bob", "pass1"))
	wantEviction(t, dial(t, s).login("bob", "pass2"), wire.EvictInvalidCredentials)

	salt, hash, err := hashPassword("old", pbkdf2Iterations)
	if err != nil {
		t.Fatal(err)
	}
	old := user{salt: salt, hash: hash} // read from a document without "iterations"
	if !checkPassword(&old, "old") || checkPassword(&old, "other") {
		t.Fatal("a hash stored without its count is not checked with the default count")
	}
}
