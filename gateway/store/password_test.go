package store

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
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
