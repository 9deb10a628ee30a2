package iggy

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testcert"
)

func TestTLS(t *testing.T) {
	cert, pool := testcert.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := serveFake(t, tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}))
	// The address host (127.0.0.1) is verified when ServerName is empty.
	c := dialFake(t, f, Config{TLS: &tls.Config{RootCAs: pool}})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	c2 := dialFake(t, f, Config{TLS: &tls.Config{RootCAs: pool, ServerName: "localhost"}})
	if err := c2.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	_, err = Dial(testContext(t), Config{Addrs: []string{f.addr()}, TLS: &tls.Config{RootCAs: pool, ServerName: "other.example"}})
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("wrong server name: %v, want a certificate verification error", err)
	}
}

func TestSessionKeepAliveAndBreak(t *testing.T) {
	old := keepAliveInterval
	keepAliveInterval = 20 * time.Millisecond
	t.Cleanup(func() { keepAliveInterval = old })

	f := newFakeServer(t, "")
	var pings atomicCounter
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Code == wire.CmdGetClusterMetadata {
			return nil, wire.FeatureUnavailable, true
		}
		return nil, wire.OK, true
	}
	f.onPing = pings.inc
	c := dialFake(t, f, Config{})
	s, err := c.Session(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkfor.Eventually(t, 5*time.Second, "keep-alive pings on an idle session", func() error {
		n := pings.get()
		return checkfor.True(n >= 3, "%d pings so far", n)
	})

	// The session's connection breaks: it stays broken.
	f.close()
	checkfor.Eventually(t, 5*time.Second, "the session noticing the break", func() error {
		return checkfor.True(s.Err() != nil, "the session still reports no error")
	})
	if err := s.Ping(testContext(t)); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("ping on a broken session: %v", err)
	}
	_ = s.Close()
	if err := s.Ping(testContext(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("ping on a closed session: %v", err)
	}
}
