package iggy

import (
	"errors"
	"fmt"
)

var (
	// ErrConnectionLost matches errors of requests whose connection broke
	// (or whose deadline passed) while the request was on the wire. For a
	// write the server may or may not have applied it; the client does not
	// resend writes on its own.
	ErrConnectionLost = errors.New("iggy: connection lost")
	// ErrUnavailable matches errors of requests that found no server to talk
	// to within their dial budget.
	ErrUnavailable = errors.New("iggy: no server reachable")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("iggy: client closed")
	// ErrTooLarge is returned, before anything is sent, for a request
	// larger than the protocol's 64 MiB frame limit.
	ErrTooLarge = errors.New("iggy: request exceeds the 64 MiB frame limit")
	// ErrProtocol matches replies that break the protocol (bad size, wrong
	// request echo, undecodable body). The connection is dropped.
	ErrProtocol = errors.New("iggy: protocol violation")
	// ErrUnresolved matches a send the server committed without reporting its offset (a
	// confirmation with count 0) when reading the batch back did not find it either: the batch
	// is stored, where is unknown. Like ErrConnectionLost for a write, it is not to be resent
	// blindly.
	ErrUnresolved = errors.New("iggy: stored at an unreported offset")
)

// errNotAccepted marks a request a node kept refusing as not its to accept
// (TransientNotAccepted): it was not applied, and the client sends it again on
// a connection to the leader.
var errNotAccepted = errors.New("iggy: not accepted by this node")

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
