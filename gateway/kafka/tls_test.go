package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/testcert"
)

func TestTLSListener(t *testing.T) {
	serverTLS, clientTLS := testcert.Configs(t, "127.0.0.1")
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
