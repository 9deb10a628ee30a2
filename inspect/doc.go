// Package inspect is the operator library behind `iggy-kafka inspect`, `claims`, `replay` and
// `drain`: it reads the coordinator log straight from Iggy (never through a gateway), folds it
// with record.State exactly as the coordinator does, checks it like an fsck, and asks gateways
// through kadm where a command compares the log with what they serve. It talks to the network
// and renders nothing: every result is a typed row (rows.go) that package output prints as a
// table, JSON or YAML, and that package tui shows live.
//
// The two types to know are Log, the reader of `<stream>.meta` (the 16 partitions of
// `coordinators`, the announcements on `coordinator_owners`, Iggy's `kafka-gateways` assignment),
// and Entry, one log message decoded: its partition, offset, record or decode error, and whether
// the fold found it valid. Log reads through package logio, the gateways' own reader (its gap
// rule, its feeds of announcements and drain requests), and a drain or an undo is followed by
// package drainwatch, as `drain --wait` follows it. Verify, Replay, Claims and Watch are built on
// Log and Entry, and so is Console, the engine of the live console: it follows the log into a
// Model on one goroutine, sends snapshots and status beats, says when the store stops answering
// and reloads until it answers again, and runs the console's drains and undos through PlanDrain
// and CheckUndo, the rules `drain` obeys. DialGateways is the one rule of which Kafka addresses
// the operator commands dial (those given, else those the gateways announce), and Prober asks each
// address alone, so that an address that does not answer is named with its node.
package inspect
