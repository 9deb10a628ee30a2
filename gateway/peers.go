package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// peerTimeout bounds one request to another gateway, its dial included: a transaction's end and a
// transactional write's check are tried again rather than held by a gateway that went away.
const peerTimeout = 5 * time.Second

// peers sends Kafka requests to the other gateways of the fleet, at the addresses they announce
// on the coordinator log: the markers of a transaction for the groups another gateway
// coordinates (WriteTxnMarkers) and the check of a transactional write against a transaction
// another gateway coordinates (AddPartitionsToTxn v4). One franz-go client per address, made on
// first use and closed with the gateway. With SASL on, a gateway logs in to another with SASL
// PLAIN as its own Iggy user (the other checks CLUSTER_ACTION, Iggy's manage-servers, of it);
// with TLS on, it dials TLS and checks the other's certificate against tlsRoots (the system's
// when nil) and the host it announced.
type peers struct {
	user     string
	password string
	sasl     bool
	tls      bool
	tlsRoots *tls.Config

	mu      sync.Mutex
	clients map[string]*kgo.Client
	closed  bool
}

func (p *peers) send(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := p.client(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("gateway: no broker for %s", addr)
	}
	return seeds[0].Request(ctx, req)
}

func (p *peers) client(addr string) (*kgo.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("gateway: closed")
	}
	if cl := p.clients[addr]; cl != nil {
		return cl, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTimeout(peerTimeout), kgo.ClientID("iggy-kafka-gateway")}
	if p.sasl {
		opts = append(opts, kgo.SASL(plain.Auth{User: p.user, Pass: p.password}.AsMechanism()))
	}
	if p.tls {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		tc := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		if p.tlsRoots != nil {
			tc.RootCAs = p.tlsRoots.RootCAs
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("gateway: a client of gateway %s: %w", addr, err)
	}
	if p.clients == nil {
		p.clients = map[string]*kgo.Client{}
	}
	p.clients[addr] = cl
	return cl, nil
}

func (p *peers) close() {
	p.mu.Lock()
	cls := p.clients
	p.clients, p.closed = nil, true
	p.mu.Unlock()
	for _, cl := range cls {
		cl.Close()
	}
}
