package iggy

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// fakeServer answers frames well enough to test the connection machinery
// (framing, login, pool, reconnect, leader following) without the embedded
// store. handle, when set, answers everything except login and logout; it
// returns the reply body, a status, and whether to answer at all.
type fakeServer struct {
	t        *testing.T
	ln       net.Listener
	password string
	nodes    []byte       // cluster metadata reply body; nil answers status 5
	evictOn  wire.Command // answered with Eviction 13 (StaleClient)
	onPing   func()
	handle   func(h *wire.RequestHeader, body []byte) (reply []byte, status wire.Code, answer bool)
	// observe, when set, sees every request before it is answered.
	observe func(h *wire.RequestHeader, body []byte)
	// register, when set, answers every login with its reply body instead
	// of checking the credentials.
	register func(body []byte) []byte
	// copies, when set, says how many times to send the reply to a request: 0 drops it (the
	// connection stays), 2 answers it twice.
	copies func(h *wire.RequestHeader) int
	// window, when set, refuses every login as a server speaking another protocol does:
	// an IncompatibleProtocol eviction carrying its version and the oldest it accepts.
	window [2]uint32

	mu       sync.Mutex
	conns    []net.Conn
	requests atomic.Int64
	logins   atomic.Int64
	wg       sync.WaitGroup
}

func newFakeServer(t *testing.T, addr string) *fakeServer {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return serveFake(t, ln)
}

func serveFake(t *testing.T, ln net.Listener) *fakeServer {
	f := &fakeServer{t: t, ln: ln, password: "iggy"}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *fakeServer) addr() string { return f.ln.Addr().String() }

func (f *fakeServer) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// dropConns closes every open connection but keeps listening, like a
// server that timed out its idle clients.
func (f *fakeServer) dropConns() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}

func (f *fakeServer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(c)
	}
}

func (f *fakeServer) serve(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	var buf []byte
	var session uint64
	for {
		frame, err := wire.ReadFrame(c, buf)
		if err != nil {
			return
		}
		buf = frame
		var h wire.RequestHeader
		if err := h.Decode(frame); err != nil {
			return
		}
		f.requests.Add(1)
		body := frame[wire.HeaderSize:]
		if f.observe != nil {
			f.observe(&h, body)
		}
		var reply []byte
		status := wire.OK
		switch {
		case h.Operation == wire.OpRegister && f.window[0] != 0:
			var out [wire.HeaderSize]byte
			eh := wire.EvictionHeader{Client: h.Client, Reason: wire.EvictIncompatibleProtocol,
				ServerProtocolVersion: f.window[0], ServerProtocolVersionMin: f.window[1]}
			eh.Encode(&out)
			_, _ = c.Write(out[:])
			return
		case h.Operation == wire.OpRegister && f.register != nil:
			reply = f.register(body)
		case h.Operation == wire.OpRegister:
			if !f.checkLogin(body) {
				var out [wire.HeaderSize]byte
				eh := wire.EvictionHeader{Client: h.Client, Reason: wire.EvictInvalidCredentials}
				eh.Encode(&out)
				_, _ = c.Write(out[:])
				return
			}
			session = uint64(f.logins.Add(1))
			reply = binary.LittleEndian.AppendUint32(nil, 0)
			reply = binary.LittleEndian.AppendUint32(reply, 0) // user id
			reply = binary.LittleEndian.AppendUint64(reply, session)
			reply = binary.LittleEndian.AppendUint32(reply, wire.ProtocolVersion)
			reply = append(reply, 4, 't', 'e', 's', 't')
		case f.evictOn != 0 && h.Operation == wire.OpNonReplicated && h.Code == f.evictOn:
			var out [wire.HeaderSize]byte
			eh := wire.EvictionHeader{Client: h.Client, Reason: wire.EvictStaleClient}
			eh.Encode(&out)
			_, _ = c.Write(out[:])
			return
		case h.Operation == wire.OpLogout:
			session = 0
		case h.Operation == wire.OpNonReplicated && h.Code == wire.CmdPing:
			if f.onPing != nil {
				f.onPing()
			}
		case h.Operation == wire.OpNonReplicated && h.Code == wire.CmdGetClusterMetadata && f.handle == nil:
			if f.nodes == nil {
				status = wire.FeatureUnavailable
			} else {
				reply = f.nodes
			}
		case f.handle != nil:
			var answer bool
			reply, status, answer = f.handle(&h, body)
			if !answer {
				return
			}
		default:
			status = wire.InvalidCommand
		}
		rh := wire.ReplyTo(&h, status)
		if status != wire.OK {
			reply = nil
		}
		rh.Size = uint32(wire.HeaderSize + len(reply))
		var out [wire.HeaderSize]byte
		rh.Encode(&out)
		n := 1
		if f.copies != nil {
			n = f.copies(&h)
		}
		for range n {
			if _, err := c.Write(append(out[:], reply...)); err != nil {
				return
			}
		}
	}
}

// checkLogin accepts the password shape with the fake's password, and any
// PAT equal to "token".
func (f *fakeServer) checkLogin(body []byte) bool {
	r := wire.NewReader(body)
	r.U32("version")
	r.Name("sdk")
	r.Name("sdk version")
	first := r.String8("user or token")
	if r.Len() == 4 {
		return first == "token"
	}
	pass := r.String8("password")
	return r.Err() == nil && first == "iggy" && pass == f.password
}

// clusterReply encodes a cluster metadata body (11.3).
func clusterReply(nodes ...fakeNode) []byte {
	put32 := func(b []byte, s string) []byte {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...)
	}
	b := put32(nil, "test-cluster")
	b = binary.LittleEndian.AppendUint32(b, uint32(len(nodes)))
	for i, n := range nodes {
		host, port, _ := net.SplitHostPort(n.addr)
		var p int
		for _, ch := range port {
			p = p*10 + int(ch-'0')
		}
		b = put32(b, "node-"+string(rune('a'+i)))
		b = put32(b, host)
		b = binary.LittleEndian.AppendUint16(b, uint16(p))
		b = append(b, 0, 0, 0, 0, 0, 0)
		b = append(b, n.role, n.status)
	}
	return b
}

type fakeNode struct {
	addr         string
	role, status uint8
}

func isCode(err error, c wire.Code) bool { return errors.Is(err, c) }

type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) inc()       { c.n.Add(1) }
func (c *atomicCounter) get() int64 { return c.n.Load() }
