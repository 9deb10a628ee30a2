// Package crashtest holds the crash test of the embedded store: it runs the
// real iggy-kafka binary as `iggy-kafka store --fsync always`, drives it with
// several clients, kills it with SIGKILL at a random moment, restarts it on
// the same data and checks that every acknowledged message is still there,
// exactly once, at the offset it was acknowledged with and with a valid
// checksum.
//
// It is a test of the whole path a message takes (client, wire protocol,
// server, partition log, recovery), so it lives in a package of its own with
// no code besides the test.
package crashtest
