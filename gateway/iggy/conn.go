package iggy

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// call is one request: what to send and how to read the answer.
type call struct {
	cmd  wire.Command // its code travels in the header only for reads
	body []byte       // request body after the header
	// tail follows body on the wire without being copied into the frame
	// buffer: SendBatch puts the caller's batch here.
	tail []byte
	// into, when set, receives the whole reply frame instead of the
	// connection's own buffer, so Poll can hand it to its caller.
	into *[]byte
}

// idempotent reports whether resending the call cannot change server state:
// reads (NonReplicated) are; every write is not.
func (c *call) idempotent() bool { return c.cmd.NonReplicated() }

// changesState reports whether a failed call may have changed what the server stores, which
// its error then says. A login travels as a replicated operation but only opens the session the
// failed connection took with it.
func (c *call) changesState() bool {
	return !c.idempotent() && c.cmd != wire.CmdLoginRegister && c.cmd != wire.CmdLoginRegisterWithPAT
}

// conn is one lockstep connection. It is used by one goroutine at a time
// (the pool slot owner or the Session's lock holder).
type conn struct {
	nc   net.Conn
	br   *bufio.Reader
	addr string

	client     wire.Uint128 // redrawn on every login
	prevClient wire.Uint128
	session    uint64 // 0 until login
	counter    uint64 // request counter, starts at 1
	userID     uint32

	hdr  [wire.HeaderSize]byte
	wbuf []byte // header + body of the request being written
	rbuf []byte // reply frame when the call brings no buffer

	lastUsed time.Time
	broken   bool

	raw *net.TCPConn // the socket under TLS, for the idle probe
	tls bool

	local Local // set when the connection runs requests in process (Config.Local)
}

// dialConn opens a TCP (optionally TLS) connection with TCP_NODELAY set;
// lockstep requests made of several segments would otherwise wait on
// Nagle's algorithm. Config.Dial, when set, replaces the TCP dial.
func dialConn(ctx context.Context, addr string, cfg *Config) (*conn, error) {
	if cfg.Local != nil {
		return dialLocal(cfg, addr)
	}
	var nc net.Conn
	var err error
	if cfg.Dial != nil {
		dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
		nc, err = cfg.Dial(dctx, addr)
		cancel()
	} else {
		d := net.Dialer{Timeout: cfg.DialTimeout}
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %w", ErrUnavailable, addr, err)
	}
	raw, _ := nc.(*net.TCPConn)
	if raw != nil {
		_ = raw.SetNoDelay(true)
	}
	if cfg.TLS != nil {
		tc := cfg.TLS.Clone()
		if tc.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			tc.ServerName = host
		}
		tlsConn := tls.Client(nc, tc)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("%w: TLS handshake with %s: %w", ErrUnavailable, addr, err)
		}
		nc = tlsConn
	}
	c := &conn{
		nc:       nc,
		br:       bufio.NewReaderSize(nc, 64<<10),
		addr:     addr,
		counter:  1,
		wbuf:     make([]byte, 0, 4096),
		raw:      raw,
		tls:      cfg.TLS != nil,
		lastUsed: time.Now(),
	}
	c.newClientID()
	return c, nil
}

func (c *conn) newClientID() {
	var b [16]byte
	for c.client.IsZero() || c.client == c.prevClient {
		_, _ = rand.Read(b[:])
		c.client = wire.Uint128{Lo: binary.LittleEndian.Uint64(b[:]), Hi: binary.LittleEndian.Uint64(b[8:])}
	}
	c.prevClient = c.client
}

func (c *conn) close() error {
	c.broken = true
	return c.nc.Close()
}

// abort closes a connection that may hold a request not yet delivered: the socket is reset
// and whatever it still had to send is dropped. A plain close would leave the kernel sending
// it for minutes, so a write given up on (a timeout through a network partition) could reach
// the server after the caller had answered its client and the write had been made again
// elsewhere: a produce stored twice once the link healed.
func (c *conn) abort() error {
	c.broken = true
	if c.raw != nil {
		_ = c.raw.SetLinger(0)
	}
	return c.nc.Close()
}

// requestNumber applies the numbering rules of the protocol (4.3): Register
// sends 0, metadata writes and Logout take the counter and advance it, reads
// and partition writes send the counter as it is.
func (c *conn) requestNumber(op wire.Operation) uint64 {
	switch {
	case op == wire.OpRegister:
		return 0
	case op == wire.OpNonReplicated || op.Partition():
		return c.counter
	default:
		n := c.counter
		c.counter++
		return n
	}
}

// alive reports whether a pooled connection can take a request. One that
// sat idle is probed for a peer close first (a restarted server, an idle
// timeout), so that a write is not spent on a dead socket where its outcome
// would be unknown.
func (c *conn) alive() bool {
	if c.broken || (c.br != nil && c.br.Buffered() > 0) {
		// Bytes nobody asked for mean the stream is out of step.
		return false
	}
	if p, ok := c.nc.(peerProber); ok {
		return p.PeerOpen()
	}
	if time.Since(c.lastUsed) < idleProbeAfter || c.raw == nil {
		return true
	}
	return peerOpen(c.raw, c.tls)
}

// peerProber is a connection that can tell cheaply, without a syscall,
// whether its peer is still there and silent, such as an in-process pipe
// from Config.Dial; it is asked before every use.
type peerProber interface{ PeerOpen() bool }

// exchange writes one request and reads its reply, returning the reply
// body with the result section already stripped. The returned body aliases
// a buffer of c (or *cl.into) and is valid until the next exchange.
//
// Any failure that leaves the byte stream at an unknown position marks the
// connection broken; the caller drops it.
func (c *conn) exchange(ctx context.Context, cl *call, timeout time.Duration) (body []byte, err error) {
	if c.broken {
		return nil, ErrConnectionLost
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if size := wire.HeaderSize + len(cl.body) + len(cl.tail); size > wire.MaxFrameSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, size)
	}
	op := cl.cmd.Operation()
	if op.Replicated() && c.session == 0 {
		// The server evicts a replicated request without a session; the
		// official SDK refuses it locally, and so do we.
		return nil, wire.Unauthenticated
	}
	if c.local != nil {
		req := c.requestNumber(op)
		c.encodeHeader(cl, op, req)
		return c.exchangeLocal(ctx, cl, req)
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// A cancelled context must unblock I/O in progress; the mutex keeps a
	// late callback from moving the deadline of a later request.
	var mu sync.Mutex
	finished := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			_ = c.nc.SetDeadline(time.Now())
		}
	})
	_ = c.nc.SetDeadline(deadline)
	defer func() {
		stop()
		mu.Lock()
		finished = true
		mu.Unlock()
		c.lastUsed = time.Now()
		if c.broken {
			return
		}
		_ = c.nc.SetDeadline(time.Time{})
	}()

	req := c.requestNumber(op)
	c.encodeHeader(cl, op, req)
	var notAccepted time.Time // when the node first refused the request as not its to accept
	for {
		if err := c.write(cl); err != nil {
			return nil, c.ioFailure(ctx, cl, "write", err)
		}
		if err := c.awaitReply(op, deadline); err != nil {
			return nil, c.ioFailure(ctx, cl, "read", err)
		}
		frame, err := c.readFrame(cl)
		for err == nil && wire.FrameCommand(frame) == wire.CommandReply && replyRequest(frame) < req {
			// A late answer to an earlier request number (a server that answered a request
			// twice): request numbers never go down on a connection, so it is not this
			// request's; read on.
			frame, err = c.readFrame(cl)
		}
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				_ = c.close()
				return nil, err
			}
			return nil, c.ioFailure(ctx, cl, "read", err)
		}
		body, err := c.decodeReply(req, frame)
		if errors.Is(err, wire.TransientNotAccepted) {
			// This node does not take the request: a follower, or a leader that lost its
			// standing. Past notAcceptedRecheck the connection is given up so the caller asks
			// the cluster for its leader; the request was not applied, so it may go anywhere.
			if notAccepted.IsZero() {
				notAccepted = time.Now()
			} else if time.Since(notAccepted) >= notAcceptedRecheck {
				_ = c.close()
				// ErrUnavailable: not applied, and no node took it yet; the pool dials again
				// with backoff and the bridge answers Kafka clients with a retriable error.
				return nil, fmt.Errorf("iggy: %s at %s not accepted for %v: %w: %w: %w", cl.cmd, c.addr, notAcceptedRecheck, ErrUnavailable, errNotAccepted, err)
			}
		}
		again, err := resendTransient(ctx, cl, err)
		if again {
			continue
		}
		return body, err
	}
}

// A request the server dropped gets no reply (a full queue, a metadata submit that did not
// take, a restarted node that lost the connection's registration). A login without a reply
// within loginNoReply fails as a lost connection, which the pool dials again. Other requests
// wait for their whole deadline: the real server answers a resent metadata request from its
// client table, but the embedded store keeps no such table and would apply it twice, and a
// partition write has none on either. A reply to an earlier request number that comes late is
// skipped.
var loginNoReply = 2 * time.Second

// awaitReply waits for the first byte of the reply to a login, and fails when none came within
// loginNoReply. It never reads past the first byte of a frame, so the stream stays in step. The
// read deadline is the call's deadline when it returns.
func (c *conn) awaitReply(op wire.Operation, deadline time.Time) error {
	if op != wire.OpRegister || c.br.Buffered() > 0 {
		return nil
	}
	short := time.Now().Add(loginNoReply)
	if short.After(deadline) {
		return nil
	}
	_ = c.nc.SetReadDeadline(short)
	_, err := c.br.Peek(1)
	_ = c.nc.SetReadDeadline(deadline)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("no reply to the login within %v: %w", loginNoReply, err)
	}
	return err
}

// replyRequest is the request number a reply frame echoes.
func replyRequest(frame []byte) uint64 {
	var h wire.ReplyHeader
	if h.Decode(frame) != nil {
		return ^uint64(0)
	}
	return h.Request
}

// resendTransient reports whether a reply error is transient: the server did not get to apply
// the request, so the very same frame (same request number) is sent again after a pause, within
// the call's deadline, as the official SDK does. It returns err otherwise, or the error of a
// context that ended during the pause.
func resendTransient(ctx context.Context, cl *call, err error) (bool, error) {
	var code wire.Code
	if !errors.As(err, &code) || !code.Transient() {
		return false, err
	}
	t := time.NewTimer(transientRetry)
	defer t.Stop()
	select {
	case <-t.C:
		return true, nil
	case <-ctx.Done():
		return false, fmt.Errorf("iggy: %s still transient when the context ended: %w: %w", cl.cmd, code, ctx.Err())
	}
}

// encodeHeader writes the request header of cl into c.hdr.
func (c *conn) encodeHeader(cl *call, op wire.Operation, req uint64) {
	h := wire.RequestHeader{
		FrameHeader: wire.FrameHeader{Size: uint32(wire.HeaderSize + len(cl.body) + len(cl.tail))},
		Client:      c.client,
		Request:     req,
		Operation:   op,
		Session:     c.session,
	}
	if op == wire.OpNonReplicated {
		h.Code = cl.cmd
	}
	h.Encode(&c.hdr)
}

// decodeReply checks a reply frame against the request it answers, in the
// order the official SDK does, and strips the result section of framed
// replies.
func (c *conn) decodeReply(req uint64, frame []byte) ([]byte, error) {
	switch wire.FrameCommand(frame) {
	case wire.CommandReply:
	case wire.CommandEviction:
		// Eviction is session-terminal and answers whatever was in flight.
		var eh wire.EvictionHeader
		_ = eh.Decode(frame)
		_ = c.close()
		c.session = 0
		if eh.Code() == wire.IncompatibleProtocolVersion {
			return nil, fmt.Errorf("iggy: the Iggy server at %s speaks binary protocol %s (it accepts clients from %s) and refuses this gateway's %s: %w",
				c.addr, wire.VersionString(eh.ServerProtocolVersion), wire.VersionString(eh.ServerProtocolVersionMin),
				wire.VersionString(wire.ProtocolVersion), eh.Code())
		}
		return nil, fmt.Errorf("iggy: %s evicted the session (%s): %w", c.addr, eh.Reason, eh.Code())
	default:
		_ = c.close()
		return nil, protocolError("unexpected frame command %d", wire.FrameCommand(frame))
	}
	var h wire.ReplyHeader
	if err := h.Decode(frame); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if h.Request != req {
		// Every later reply would pair with the wrong request.
		_ = c.close()
		return nil, protocolError("reply echoes request %d, want %d", h.Request, req)
	}
	if h.Status != wire.OK {
		return nil, h.Status
	}
	if !h.Operation.Known() {
		return nil, protocolError("reply with unknown operation %d", h.Operation)
	}
	body := frame[wire.HeaderSize:]
	if h.Operation == wire.OpSendMessages && len(body) == 0 {
		return nil, fmt.Errorf("iggy: empty send confirmation: %w", wire.InvalidCommand)
	}
	if !h.Operation.ReplyFramed() || (h.Operation == wire.OpRegister && len(body) == 0) {
		return body, nil
	}
	payload, err := wire.StripResult(body)
	var code wire.Code
	if err != nil && !errors.As(err, &code) {
		return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return payload, err
}

func (c *conn) write(cl *call) error {
	c.wbuf = append(append(c.wbuf[:0], c.hdr[:]...), cl.body...)
	if len(cl.tail) == 0 {
		_, err := c.nc.Write(c.wbuf)
		return err
	}
	// One vectored write: the batch goes from the caller's memory to the
	// socket without passing through our frame buffer.
	bufs := net.Buffers{c.wbuf, cl.tail}
	_, err := bufs.WriteTo(c.nc)
	return err
}

// readFrame reads one whole frame into the call's buffer or the
// connection's own one.
func (c *conn) readFrame(cl *call) ([]byte, error) {
	buf := &c.rbuf
	if cl.into != nil {
		buf = cl.into
	}
	frame, err := wire.ReadFrame(c.br, *buf)
	if err != nil {
		if errors.Is(err, wire.ErrFrame) {
			return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		return nil, err
	}
	*buf = frame
	return frame, nil
}

// ioFailure turns a read or write error into the error the caller sees and
// marks the connection broken.
func (c *conn) ioFailure(ctx context.Context, cl *call, phase string, err error) error {
	_ = c.abort()
	what := "read"
	if cl.changesState() {
		what = "write (it may or may not have been applied)"
	} else if !cl.idempotent() {
		what = "login"
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("iggy: %s of %s to %s interrupted: %w: %w", phase, what, c.addr, ErrConnectionLost, ctxErr)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("iggy: no reply to %s from %s in time: %w: %w", what, c.addr, ErrConnectionLost, context.DeadlineExceeded)
	}
	return fmt.Errorf("iggy: %s of %s to %s failed: %w: %w", phase, what, c.addr, ErrConnectionLost, err)
}
