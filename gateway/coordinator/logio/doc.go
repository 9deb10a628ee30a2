// Package logio owns how the coordinator log is laid out in Iggy and read back: the one creator
// of `<stream>.meta` and its topics (EnsureShape), the one reading loop with the one gap rule
// (Each, and Replay, the fold of a partition into record.State on top of it), the last valid
// checkpoint of a partition by record's validity rule (LastCheckpoint), and the feeds of
// coordinator_owners and coordinator_drains with their offsets (Feed). The gateways' coordinator
// and every operator command (package logread) read the log through it; the bytes of each
// message are package record's and package fleet's.
//
// The gap rule: a partition is read in consecutive offsets from where the reader starts. A
// message above the next offset expected means messages are missing (deleted, or not readable
// yet); applying what follows would silently lose what is missing (a deletion, a claim), so the
// read stops with ErrGap and the reader resyncs or fails. Each reader of the log partitions
// obeys it; the announcements of coordinator_owners are read from their recent end (each is a
// whole statement of its node), where a gap is harmless.
//
// The two things to know are Each, the reading loop, and EnsureShape, the creator.
package logio
