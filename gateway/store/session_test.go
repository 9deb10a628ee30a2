package store

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func TestOnlyPingBeforeLogin(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := dial(t, s)
	ok(t, c.do(wire.CmdPing, nil))
	wantStatus(t, c.do(wire.CmdGetStreams, nil), wire.Unauthenticated)
	wantStatus(t, c.do(wire.CmdGetClusterMetadata, nil), wire.Unauthenticated)
	// The connection is still usable after a refused read.
	ok(t, c.do(wire.CmdPing, nil))
	// A replicated operation without a session ends the connection.
	c.session = 1
	wantEviction(t, c.do(wire.CmdCreateStream, (&wire.CreateStream{Name: "x"}).AppendTo(nil)), wire.EvictNoSession)
	c.expectClosed()
}

func TestLoginLogout(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := dial(t, s)
	ok(t, c.login("iggy", "iggy"))
	first := c.session
	ok(t, c.do(wire.CmdGetStreams, nil))
	ok(t, c.do(wire.CmdLogoutUser, nil))
	c.session = 0
	wantStatus(t, c.do(wire.CmdGetStreams, nil), wire.Unauthenticated)
	c.client.Lo += 1000
	ok(t, c.login("iggy", "iggy"))
	if c.session == first {
		t.Fatalf("second login reused session %d", first)
	}
	ok(t, c.do(wire.CmdGetStreams, nil))
	// Logout without a session is an empty OK.
	d := dial(t, s)
	d.session = 1
	ok(t, d.do(wire.CmdLogoutUser, nil))
}

func TestLoginFailuresEvict(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	cases := []struct {
		name string
		body func() []byte
		code wire.Command
		want wire.EvictionReason
	}{
		{"wrong password", func() []byte {
			return (&wire.PasswordLogin{Version: wire.OurClientVersion(), Username: "iggy", Password: "nope"}).AppendTo(nil)
		}, wire.CmdLoginRegister, wire.EvictInvalidCredentials},
		{"unknown user", func() []byte {
			return (&wire.PasswordLogin{Version: wire.OurClientVersion(), Username: "nobody", Password: "iggy"}).AppendTo(nil)
		}, wire.CmdLoginRegister, wire.EvictInvalidCredentials},
		{"future protocol", func() []byte {
			v := wire.OurClientVersion()
			v.Protocol = wire.PackVersion(0, 12, 0)
			return (&wire.PasswordLogin{Version: v, Username: "iggy", Password: "iggy"}).AppendTo(nil)
		}, wire.CmdLoginRegister, wire.EvictIncompatibleProtocol},
		{"no version prefix", func() []byte { return []byte{1, 2} }, wire.CmdLoginRegister, wire.EvictMalformedLogin},
		{"unknown token", func() []byte {
			return (&wire.TokenLogin{Version: wire.OurClientVersion(), Token: "abc"}).AppendTo(nil)
		}, wire.CmdLoginRegisterWithPAT, wire.EvictInvalidToken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s)
			wantEviction(t, c.do(tc.code, tc.body()), tc.want)
			c.expectClosed()
		})
	}
	t.Run("legacy login code", func(t *testing.T) {
		c := dial(t, s)
		wantEviction(t, c.do(wire.CmdLoginUser, nil), wire.EvictMalformedLogin)
	})
}

func TestIncompatibleProtocolCarriesWindow(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := dial(t, s)
	v := wire.OurClientVersion()
	v.Protocol = wire.PackVersion(1, 0, 0)
	body := (&wire.PasswordLogin{Version: v, Username: "iggy", Password: "iggy"}).AppendTo(nil)
	if err := c.writeFrame(wire.RequestHeader{Operation: wire.OpRegister}, body); err != nil {
		t.Fatal(err)
	}
	frame, err := wire.ReadFrame(c.nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var eh wire.EvictionHeader
	if err := eh.Decode(frame); err != nil {
		t.Fatal(err)
	}
	if eh.Reason != wire.EvictIncompatibleProtocol || eh.ServerProtocolVersion != wire.ProtocolVersion ||
		eh.ServerProtocolVersionMin != wire.MinCompatibleVersion(wire.ProtocolVersion) {
		t.Fatalf("eviction %+v", eh)
	}
}

func TestNonReplicatedCodeRules(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	wantStatus(t, c.do(wire.Command(60000), nil), wire.InvalidCommand)
	// A replicated command sent as a read.
	h := wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdCreateStream, Request: c.counter, Session: c.session}
	if err := c.writeFrame(h, nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.readReply()
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, r, wire.FeatureUnavailable)
	ok(t, c.do(wire.CmdPing, nil))
}

func TestInvalidHeaderIsDropped(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	// Request number 0 on a metadata operation breaks the header rules: the
	// server answers nothing, and the next valid request is served.
	if err := c.writeFrame(wire.RequestHeader{Operation: wire.OpCreateStream, Session: c.session}, nil); err != nil {
		t.Fatal(err)
	}
	r := c.do(wire.CmdPing, nil)
	ok(t, r)
	if r.request != c.counter {
		t.Fatalf("reply to request %d, want %d", r.request, c.counter)
	}
}

func TestRequestChecksum(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	h := wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdGetStreams, Request: 1,
		Session: c.session, RequestChecksum: wire.Uint128{Lo: 12345}}
	if err := c.writeFrame(h, nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.readReply()
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, r, wire.InvalidFormat)
}
