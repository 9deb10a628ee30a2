package kafka

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CloseUser closes the connections of one SASL user, however they authenticated, and only those.
func TestCloseUserClosesOnlyThatUsersConnections(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.SASL = true
		c.Authenticate = func(context.Context, string, string) (Storage, error) { return c.Storage, nil }
	})
	login := func(user string, version int16) *rawConn {
		raw := dialRaw(t, ts.addr)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version = version
		hs.Mechanism = "PLAIN"
		raw.roundTrip(t, hs)
		token := []byte("\x00" + user + "\x00secret")
		if version == 0 {
			raw.write(t, append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...))
			raw.readFrame(t)
		} else {
			auth := kmsg.NewPtrSASLAuthenticateRequest()
			auth.Version = 1
			auth.SASLAuthBytes = token
			if r := raw.roundTrip(t, auth).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
				t.Fatalf("%s authenticates: %d", user, r.ErrorCode)
			}
		}
		raw.roundTrip(t, kmsg.NewPtrMetadataRequest())
		return raw
	}
	alice, aliceV0, bob := login("alice", 1), login("alice", 0), login("bob", 1)
	if n := ts.s.CloseUser("alice"); n != 2 {
		t.Fatalf("CloseUser closed %d connections, want 2", n)
	}
	alice.expectClosed(t)
	aliceV0.expectClosed(t)
	bob.roundTrip(t, kmsg.NewPtrMetadataRequest())
	if n := ts.s.CloseUser("alice"); n != 0 {
		t.Fatalf("CloseUser found %d connections of alice after closing them", n)
	}
}
