package kafka

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControlFunc is a request hook (see the package doc, "Request hooks"). It returns handled
// false to let the request go on (to the next hook, then to its handler), or handled true with
// the answer to write (resp; nil writes none) or an error that closes the connection once the
// answers before it are written.
type ControlFunc func(r *Controlled) (resp kmsg.Response, err error, handled bool)

// ControlKey adds a hook for the requests of one API key (kmsg.Produce, ...), or of every key
// when key is -1. The hooks of a key run in the order they were added, before those added for
// every key. A hook that handles a request is removed, unless it called Keep.
func (s *Server) ControlKey(key int16, fn ControlFunc) {
	cs := &s.controls
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.byKey == nil {
		cs.byKey = make(map[int16][]*control)
	}
	cs.byKey[key] = append(cs.byKey[key], &control{key: key, fn: fn})
	cs.n.Add(1)
}

// Control adds a hook for every request.
func (s *Server) Control(fn ControlFunc) { s.ControlKey(-1, fn) }

// Controlled is one request as a hook sees it. Its methods are for the hook's own goroutine,
// while the hook runs.
type Controlled struct {
	cs         *controls
	c          *conn
	req        *request
	keep, drop bool
}

// Request is the decoded request; a hook that changes it and returns handled false changes
// what the handler serves.
func (r *Controlled) Request() kmsg.Request { return r.req.kreq }

// ClientID is the client id of the request's header.
func (r *Controlled) ClientID() string {
	if r.req.clientID == nil {
		return ""
	}
	return *r.req.clientID
}

// Remote is the address of the connection's peer.
func (r *Controlled) Remote() net.Addr { return r.c.nc.RemoteAddr() }

// Keep keeps the hook after it handles this request.
func (r *Controlled) Keep() { r.keep = true }

// Drop removes the hook after this request even when it does not handle it; it wins over Keep.
func (r *Controlled) Drop() { r.drop = true }

// Sleep blocks the request until wakeup returns, letting other hooks run meanwhile, on this
// connection and others. It reports false when the connection closed or the server began
// shutting down first; wakeup then still runs to its end, in the background.
func (r *Controlled) Sleep(wakeup func()) bool {
	woke := make(chan struct{})
	go func() {
		wakeup()
		close(woke)
	}()
	r.cs.run.Unlock()
	defer r.cs.run.Lock()
	select {
	case <-woke:
		return true
	case <-r.req.ctx.Done():
	case <-r.c.s.draining:
	}
	return false
}

// Handle runs the request's handler now, once the requests it is ordered behind are done, and
// returns its answer, for a hook that changes or delays answers rather than requests. Other
// hooks run meanwhile. The hook should then return handled true.
func (r *Controlled) Handle() (kmsg.Response, error) {
	r.cs.run.Unlock()
	defer r.cs.run.Lock()
	for _, ch := range r.req.after {
		select {
		case <-ch:
		case <-r.req.ctx.Done():
			return nil, errConnClosing
		}
	}
	return r.c.handle(r.req)
}

// controls are a server's hooks. Without any, a request costs one atomic load here.
type controls struct {
	n     atomic.Int32 // hooks registered
	mu    sync.Mutex   // guards byKey
	byKey map[int16][]*control
	// run is held while a hook runs, so hooks run one at a time (as in kfake) unless they
	// sleep; that makes "a hook handles one request" exact under concurrency.
	run sync.Mutex
}

type control struct {
	key     int16
	fn      ControlFunc
	removed bool // guarded by controls.mu
}

func (cs *controls) list(key int16) []*control {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]*control(nil), cs.byKey[key]...)
}

func (cs *controls) remove(ctl *control) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if ctl.removed {
		return
	}
	ctl.removed = true
	l := cs.byKey[ctl.key]
	for i, x := range l {
		if x == ctl {
			cs.byKey[ctl.key] = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	cs.n.Add(-1)
}

func (cs *controls) isRemoved(ctl *control) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return ctl.removed
}

// intercept runs the hooks for req. Requests that were not decoded (keys or versions not
// served) reach no hook.
func (cs *controls) intercept(c *conn, req *request) (kmsg.Response, error, bool) {
	if cs.n.Load() == 0 || req.kreq == nil {
		return nil, nil, false
	}
	cs.run.Lock()
	defer cs.run.Unlock()
	for _, key := range [2]int16{req.key, -1} {
		for _, ctl := range cs.list(key) {
			if cs.isRemoved(ctl) {
				continue
			}
			r := &Controlled{cs: cs, c: c, req: req}
			resp, err, handled := ctl.fn(r)
			if r.drop || (handled && !r.keep) {
				cs.remove(ctl)
			}
			if !handled {
				continue
			}
			if resp != nil && resp.Key() == req.key {
				resp.SetVersion(req.kreq.GetVersion())
			}
			return resp, err, true
		}
	}
	return nil, nil, false
}
