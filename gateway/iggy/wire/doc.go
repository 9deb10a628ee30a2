// Package wire is the codec for the Apache Iggy TCP binary protocol (VSR
// framing, protocol 0.11.0), shared by the gateway's Iggy client and by the
// embedded Iggy-compatible store.
//
// Every frame, in both directions, is a 256-byte header followed by a body;
// the header's size field is the whole frame length. Three header kinds reach
// a client: RequestHeader (command byte 5), ReplyHeader (8) and EvictionHeader
// (13). ReadFrame reads exactly one frame from a stream and is the only
// function either side needs to split a connection into frames.
//
// A request names what it does by its Operation byte; reads travel as
// OpNonReplicated with a Command code in the header. Command.Operation and
// Operation.ReplyFramed encode that contract so the client and the server
// cannot disagree about which reply bodies begin with a result section.
//
// Each request and reply body is a Go struct with two methods:
// AppendTo(dst) appends its encoding and Decode(b) parses it. Both sides use
// both directions, so a round trip through the same struct is the main
// correctness test. Encoders never fail: they trust their input (validate
// names with ValidName first); decoders never panic and report malformed
// input as a *DecodeError, which matches InvalidFormat under errors.Is.
// Like the official server, decoders ignore bytes after the last field a
// body defines, except where a body's last field runs to the end (options
// blocks, message batches).
//
// Decoded []byte fields alias the input buffer, so a caller that keeps a
// decoded value beyond the life of its frame must copy them; strings are
// always copies. Message batches stay opaque []byte here: their layout
// belongs to package message.
//
// Error codes share one numeric space on the wire (the reply status field and
// result entries). Code is that number and is itself an error, so a status
// can be returned as is and tested with errors.Is(err, wire.StreamIDNotFound).
package wire
