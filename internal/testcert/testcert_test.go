package testcert

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"testing"
)

// A client trusting the certificate's pool completes a handshake under both names the
// certificate is for and refuses any other name; a client trusting another certificate from
// New refuses it.
func TestHandshake(t *testing.T) {
	server, client := Configs(t, "127.0.0.1")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.(*tls.Conn).Handshake()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	_, other := New(t)
	for _, tc := range []struct {
		name    string
		roots   *x509.CertPool
		wantErr bool
	}{
		{"127.0.0.1", client.RootCAs, false},
		{"localhost", client.RootCAs, false},
		{"example.com", client.RootCAs, true},
		{"127.0.0.1", other, true},
	} {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{ServerName: tc.name, RootCAs: tc.roots})
		if err == nil {
			c.Close()
		}
		if (err != nil) != tc.wantErr {
			t.Errorf("name %s, own pool %v: err %v, want an error %v", tc.name, tc.roots == client.RootCAs, err, tc.wantErr)
		}
	}
}
