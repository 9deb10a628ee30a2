package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// Defaults of the limits that bound what an unauthenticated or misbehaving peer costs.
const (
	defaultReadTimeout  = 5 * time.Second
	defaultLoginTimeout = 10 * time.Second
	defaultBufferBudget = 32 << 20
)

// frameSizeAt is where the little-endian frame size sits in a header (protocol 2.1).
const frameSizeAt = 48

// errIdle reports a connection closed for sending nothing before it logged in.
var errIdle = errors.New("no request before the login timeout")

// readFrame reads the next request frame, header and body, in a pooled buffer. Before a session
// exists the wait for a first byte is bounded by LoginTimeout; once a frame's first byte has
// arrived the whole frame must arrive within ReadTimeout. A body above framebuf.FreeBytes is
// charged to the connection's budget as its bytes arrive, so a header that claims 64 MiB costs
// 256 bytes, and stays charged until the caller releases the frame after handling it.
func (c *conn) readFrame() (framebuf.Frame, error) {
	cfg := &c.s.cfg
	var idle time.Time
	if c.session() == nil {
		idle = time.Now().Add(cfg.LoginTimeout)
	}
	_ = c.nc.SetReadDeadline(idle)
	if _, err := c.br.Peek(1); err != nil {
		if isTimeout(err) {
			return framebuf.Frame{}, errIdle
		}
		return framebuf.Frame{}, err
	}
	deadline := time.Now().Add(cfg.ReadTimeout)
	_ = c.nc.SetReadDeadline(deadline)
	head := c.head[:]
	if _, err := io.ReadFull(c.br, head); err != nil {
		return framebuf.Frame{}, unexpectedEOF(err)
	}
	size := binary.LittleEndian.Uint32(head[frameSizeAt:])
	if size < wire.HeaderSize || size > wire.MaxFrameSize {
		return framebuf.Frame{}, fmt.Errorf("%w: size %d outside %d..%d", wire.ErrFrame, size, wire.HeaderSize, wire.MaxFrameSize)
	}
	if cmd := wire.FrameCommand(head); cmd > wire.MaxCommandByte {
		return framebuf.Frame{}, fmt.Errorf("%w: command byte %d above %d", wire.ErrFrame, cmd, wire.MaxCommandByte)
	}
	return c.budget.Read(c.br, c.nc, head, int(size)-wire.HeaderSize, deadline, c.s.closing)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// frameFailed logs why the connection stops reading.
func (c *conn) frameFailed(err error) {
	log := c.s.log
	attrs := []any{"client", c.id, "addr", c.addr}
	switch {
	case c.closed.Load() || c.s.isClosing() || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, framebuf.ErrStopped):
	case errors.Is(err, errIdle):
		log.Info("closing connection idle before login", append(attrs, "login_timeout", c.s.cfg.LoginTimeout)...)
	case errors.Is(err, framebuf.ErrBudget):
		log.Warn("closing connection: frame not finished within the read timeout while the frame buffer budget was spent",
			append(attrs, "read_timeout", c.s.cfg.ReadTimeout, "budget", c.budget.Limit())...)
	case isTimeout(err):
		log.Warn("closing connection: frame not finished within the read timeout", append(attrs, "read_timeout", c.s.cfg.ReadTimeout)...)
	default:
		log.Debug("closing connection", append(attrs, "err", err)...)
	}
}
