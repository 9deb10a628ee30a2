// Package logread is the operator commands' reader of the coordinator log: it reads
// `<stream>.meta` straight from Iggy, never through a gateway, and hands out each message as an
// Entry, decoded by package record. It owns no rule of its own: the gap rule, the last valid
// checkpoint and the feeds of announcements and drain requests are package logio's, the ones the
// gateways read by, so that a command sees the log as a gateway does.
//
// The two types to know are Log, the reader (Read and ReadAcross for a range, ReadBatches to
// decode and fold on two cores, Follow to keep reading as records arrive, View for the lease
// group, announcements and drain requests as a fleet.View), and Entry, one message: its
// partition, offset, record or decode error.
package logread
