package kafka

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// Defaults of the limits that bound what an unauthenticated or misbehaving peer costs.
const (
	defaultReadTimeout     = 5 * time.Second
	defaultIdleTimeout     = 10 * time.Minute // Kafka's connections.max.idle.ms
	defaultAuthIdleTimeout = 10 * time.Second
	defaultBufferBudget    = 32 << 20
	defaultFetchMaxBytes   = 4 << 20
)

// errFrameDone ends the read loop without a log line of its own: the cause was logged where it
// was seen, or the peer simply left.
var errFrameDone = errors.New("kafka: connection read ends")

// readFrame waits for the next request and returns its body, in a pooled buffer. The wait for
// a request's first byte is bounded by the idle timeout (the shorter one before SASL
// authentication); from that byte the whole frame must arrive within ReadTimeout. A request above
// framebuf.FreeBytes is charged to the server's budget as its bytes arrive, so a peer that
// claims a large size and sends little costs little, and stays charged until the caller
// releases it: while the requests being read and handled hold the budget, the connection reads
// nothing more and its peer's sends back up.
func (c *conn) readFrame() (framebuf.Frame, error) {
	cfg := &c.s.cfg
	idle := cfg.IdleTimeout
	if cfg.SASL && !c.authed {
		idle = cfg.AuthIdleTimeout
	}
	// Deadlines are set before the stop check: stopReading sets its own after closing stopped,
	// so either this sees stopped or that deadline overrides this one.
	c.nc.SetReadDeadline(time.Now().Add(idle))
	if c.isStopped() {
		return framebuf.Frame{}, errFrameDone
	}
	if _, err := c.br.Peek(1); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !c.isStopped() {
			c.s.log.Info("kafka connection idle past its timeout; closing", append(c.logAttrs(), "idle", idle, "authenticated", c.authed || !cfg.SASL)...)
		} else if !c.isStopped() && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.s.log.Debug("kafka connection read failed", append(c.logAttrs(), "err", err)...)
		}
		return framebuf.Frame{}, errFrameDone
	}
	deadline := time.Now().Add(cfg.ReadTimeout)
	c.nc.SetReadDeadline(deadline)
	if c.isStopped() {
		return framebuf.Frame{}, errFrameDone
	}
	var sizeBuf [4]byte
	if _, err := io.ReadFull(c.br, sizeBuf[:]); err != nil {
		c.frameFailed(err)
		return framebuf.Frame{}, errFrameDone
	}
	size := int32(binary.BigEndian.Uint32(sizeBuf[:]))
	if size < 0 || size > cfg.MaxRequestBytes {
		c.s.log.Warn("kafka request size refused; closing connection",
			append(c.logAttrs(), "size", size, "max", cfg.MaxRequestBytes)...)
		return framebuf.Frame{}, errFrameDone
	}
	f, err := c.s.budget.Read(c.br, c.nc, nil, int(size), deadline, c.stopped)
	if err != nil {
		c.frameFailed(err)
		return framebuf.Frame{}, errFrameDone
	}
	return f, nil
}

// frameFailed logs why a request stopped arriving part way.
func (c *conn) frameFailed(err error) {
	var ne net.Error
	switch {
	case c.isStopped() || errors.Is(err, framebuf.ErrStopped):
	case errors.Is(err, framebuf.ErrBudget):
		c.s.log.Warn("kafka request not finished within the read timeout while the request buffer budget was spent; closing connection",
			append(c.logAttrs(), "read_timeout", c.s.cfg.ReadTimeout, "budget", c.s.budget.Limit())...)
	case errors.As(err, &ne) && ne.Timeout():
		c.s.log.Warn("kafka request not finished within the read timeout; closing connection",
			append(c.logAttrs(), "read_timeout", c.s.cfg.ReadTimeout)...)
	default:
		c.s.log.Debug("kafka connection closed mid-request", append(c.logAttrs(), "err", err)...)
	}
}

// closingRequest names why req closes its connection unanswered, or is empty. Kafka closes on a
// key it does not know: there is no response header the client could expect.
func closingRequest(req *request) string {
	if kmsg.RequestForKey(req.key) == nil {
		return "request with an unknown API key"
	}
	return ""
}
