// Package store is the embedded Iggy-compatible store, single-node: a TCP (or TLS)
// server that speaks the Iggy binary protocol 0.11.0 well enough for the
// official Go SDK and for our own gateway, and keeps its data on local disk.
//
// It exists so that a gateway, a test or a developer laptop can run without an
// Iggy cluster: `iggy-kafka store` runs it alone and `iggy-kafka serve` runs
// it in-process by default. It is not a replacement for an Iggy cluster: there
// is one node, no replication and no consensus, and every request on a
// connection is answered before the next one is read.
//
// Two types matter. Config says where to listen, where the data lives and how
// hard to push it to disk. Server owns the listener, the connections and the
// state; New opens or recovers the data directory and binds, Serve answers
// connections until its context ends or Close is called.
//
// # What lives where
//
// Messages go through package partlog, one directory per partition under
// DataDir/streams/<stream>/topics/<topic>/partitions/<partition>. A send
// request is read straight into a per-connection buffer, validated in place
// and handed to the log, so the batch is copied once from the socket buffer to
// the log and nothing is allocated per message.
//
// Everything else that must survive a restart (streams, topics, partition
// lists, topic options, consumer groups without their members, consumer
// offsets, users with salted PBKDF2 password hashes, and personal access
// tokens stored as SHA-256 hashes) is one JSON document, DataDir/metadata.json,
// replaced atomically (temporary file, fsync, rename, fsync of the directory).
// Metadata changes are written before they are acknowledged; consumer offsets
// are written at most a short interval after they change and at Close.
//
// Sessions and consumer-group membership are not persisted: a member is a
// logged-in session, and a restart ends every session.
//
// # Consumer groups
//
// Groups follow the official server (protocol 10.4). A join is cooperative:
// partitions move to the new member only when their current owner has
// committed what it polled, or after one heartbeat interval; until then the
// owner may commit but not poll them. A leave, logout, disconnect, staleness
// eviction or partition change reassigns everything round-robin at once.
//
// # Authorization
//
// Every command checks the caller's permissions (global, per stream, per
// topic) and answers 41 Unauthorized when they do not allow it; the root user
// (id 0) may do everything.
//
// # Protocol choices
//
// The server follows the official server where the Go SDK can tell the
// difference (see iggy-protocol.md): requests with an invalid header are
// dropped without a reply; framing errors close the connection; only Ping is
// served before login; failures are reported in the reply status with an
// empty body. Where the official server drops a malformed SendMessages batch
// without a reply, this server answers with the matching status (4027, 4039,
// 4009, 4101 or 4) so a client does not wait for a timeout.
package store
