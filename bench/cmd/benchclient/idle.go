package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
)

// idleDialers bounds the dials in flight, so that a thousand connections do
// not overrun the broker's accept backlog.
const idleDialers = 32

// eachParallel runs fn(i) for i in [0, n) on idleDialers goroutines and
// returns the first error.
func eachParallel(n int, fn func(i int) error) error {
	next := make(chan int)
	errs := make([]error, idleDialers)
	var wg sync.WaitGroup
	for w := range idleDialers {
		wg.Go(func() {
			for i := range next {
				if errs[w] == nil {
					errs[w] = fn(i)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// idleKafka are raw Kafka connections that have each sent one ApiVersions
// request and read its answer: what a client that connected and went quiet
// leaves on a broker.
type idleKafka struct{ conns []net.Conn }

func openIdleKafka(ctx context.Context, addr string, n int) (*idleKafka, error) {
	ik := &idleKafka{conns: make([]net.Conn, n)}
	var d net.Dialer
	err := eachParallel(n, func(i int) error {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("idle connection %d: %w", i, err)
		}
		ik.conns[i] = c
		return apiVersions(c, 1)
	})
	if err != nil {
		ik.close()
		return nil, err
	}
	return ik, nil
}

// check asks every connection once more, proving that the broker kept it.
func (ik *idleKafka) check(context.Context) error {
	return eachParallel(len(ik.conns), func(i int) error {
		if err := apiVersions(ik.conns[i], 2); err != nil {
			return fmt.Errorf("idle connection %d did not last the phases: %w", i, err)
		}
		return nil
	})
}

func (ik *idleKafka) close() {
	for _, c := range ik.conns {
		if c != nil {
			c.Close()
		}
	}
}

// apiVersions sends ApiVersions v0 (request header v1, empty body) with
// correlation id corr and reads the answer, checking only its framing.
func apiVersions(c net.Conn, corr int32) error {
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	const clientID = "bench-idle"
	req := binary.BigEndian.AppendUint32(nil, uint32(2+2+4+2+len(clientID)))
	req = binary.BigEndian.AppendUint16(req, 18) // ApiVersions
	req = binary.BigEndian.AppendUint16(req, 0)
	req = binary.BigEndian.AppendUint32(req, uint32(corr))
	req = binary.BigEndian.AppendUint16(req, uint16(len(clientID)))
	req = append(req, clientID...)
	if _, err := c.Write(req); err != nil {
		return err
	}
	var head [8]byte
	if _, err := io.ReadFull(c, head[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(head[:4])
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != corr || size < 4 || size > 1<<20 {
		return fmt.Errorf("ApiVersions answer of %d bytes for correlation id %d, want %d", size, got, corr)
	}
	if _, err := io.CopyN(io.Discard, c, int64(size-4)); err != nil {
		return err
	}
	return c.SetDeadline(time.Time{})
}

// idleIggy are Iggy connections logged in with a personal access token
// (a password login hashes on the server, which a thousand logins would
// turn into seconds of broker CPU) and left silent.
type idleIggy struct {
	admin   *iggy.Client
	token   string
	clients []*iggy.Client
	ids     []uint32 // each connection's client id on the server
}

func openIdleIggy(ctx context.Context, admin *iggy.Client, addr, name string, n int) (*idleIggy, error) {
	ii := &idleIggy{admin: admin, clients: make([]*iggy.Client, n), ids: make([]uint32, n)}
	if n == 0 {
		return ii, nil
	}
	tok, err := admin.CreateToken(ctx, name, -1)
	if err != nil {
		return nil, fmt.Errorf("token for the idle connections: %w", err)
	}
	ii.token = name
	err = eachParallel(n, func(i int) error {
		cl, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{addr}, Token: tok, PoolSize: 1})
		if err != nil {
			return fmt.Errorf("idle connection %d: %w", i, err)
		}
		ii.clients[i] = cl
		me, err := cl.Me(ctx)
		if err != nil {
			return fmt.Errorf("idle connection %d: %w", i, err)
		}
		ii.ids[i] = me.ClientID
		return nil
	})
	if err != nil {
		ii.close()
		return nil, err
	}
	return ii, nil
}

// check asks every connection who it is: a client that had to redial
// (the server shed its connection) comes back with a new client id.
func (ii *idleIggy) check(ctx context.Context) error {
	return eachParallel(len(ii.clients), func(i int) error {
		me, err := ii.clients[i].Me(ctx)
		if err == nil && me.ClientID != ii.ids[i] {
			err = fmt.Errorf("client id %d, was %d: the connection was redialled", me.ClientID, ii.ids[i])
		}
		if err != nil {
			return fmt.Errorf("idle connection %d did not last the phases: %w", i, err)
		}
		return nil
	})
}

func (ii *idleIggy) close() {
	for _, cl := range ii.clients {
		if cl != nil {
			cl.Close()
		}
	}
	if ii.token != "" {
		_ = ii.admin.DeleteToken(context.Background(), ii.token)
	}
}
