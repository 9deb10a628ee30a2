package kafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// selfSigned returns a server config and a client config that trusts it, for 127.0.0.1.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "iggy-kafka test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
}

func TestTLSListener(t *testing.T) {
	serverTLS, clientTLS := selfSigned(t)
	ts := startServer(t, func(c *Config) { c.TLS = serverTLS })
	cl := ts.client(t, kgo.DialTLSConfig(clientTLS))
	createTopic(t, cl, "sealed", 1)
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "sealed", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A plaintext client gets nowhere, and does not disturb the listener.
	plain := ts.client(t, kgo.RequestRetries(0), kgo.DialTimeout(2*time.Second))
	if err := plain.Ping(testCtx(t)); err == nil {
		t.Fatal("plaintext client was served by a TLS listener")
	}
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}
