// Package iggy is the gateway's client for Apache Iggy servers speaking the
// VSR-framed binary protocol, version 0.11.0 (the protocol of the official Go
// SDK; see iggy-protocol.md in the design folder).
//
// Two types matter. A Client is a pool of logged-in TCP connections: each
// connection is lockstep (one request in flight, the reply read before the
// next write, as the protocol demands), and the pool lets many goroutines
// call at once. Broken connections are redialled with exponential backoff and
// logged in again. A write whose connection broke after it may have reached
// the server is never resent on its own, because the client cannot know
// whether the server applied it; the caller gets an error matching
// ErrConnectionLost and decides. Reads are resent once on a fresh connection.
//
// A Session is one dedicated connection outside the pool. Iggy ties
// consumer-group membership to the session that joined, so anything that
// joins a group (the coordinator log uses group assignment as a lease) must
// keep using the same connection; a Session never reconnects, since its
// membership died with its connection, and it pings the server while idle so
// the server does not evict it as stale.
//
// Errors the server reports, as a reply status, a result entry or an
// eviction, come back as wire.Code values, so errors.Is(err,
// wire.StreamIDNotFound) works. Empty replies the protocol uses for "not
// found" on reads are mapped to the same codes the official SDK uses.
//
// Messages travel as batch records built by package message. SendBatch writes
// the request header, the send metadata and the caller's batch with one
// vectored write, without copying the batch; Poll returns the raw batch
// records in a pooled buffer that the caller may hand back with Release.
package iggy
