// Package logfmt is the log output of iggy-kafka: a log/slog Handler that
// writes one logfmt line per record, plus the small helpers the commands use
// to pick a format and a level from flags.
//
// A line looks like
//
//	time=2026-11-30T09:31:39.123Z level=INFO msg="hello world" group=orders member.id=c-1
//
// The format is meant for two readers at once: an operator tailing a gateway
// with less or grep, and a log shipper that splits lines into key/value pairs.
// Both break when a value smuggles in a space, an equals sign, a quote or a
// newline, so every value that could be misread is written as a Go quoted
// string (the escapes of strconv.Quote, which also keeps invalid UTF-8
// recoverable), and keys are rewritten so they never need quoting at all.
// A record therefore always becomes exactly one line, and a reader that knows
// Go string literals gets back the bytes that were logged.
//
// Handler is the type to know. It follows the contract of the standard
// handlers: slog.HandlerOptions gives it a minimum level, an optional source
// position and a ReplaceAttr hook; WithGroup qualifies later keys with dotted
// prefixes (group.key) because logfmt has no nesting; WithAttrs formats its
// attributes once, up front. Record times are written in UTC with millisecond
// precision so lines from gateways on different hosts sort and compare
// directly.
//
// Logging sits on the hot path of the gateway, so Handle formats into a pooled
// buffer and hands it to the writer in a single Write under a mutex shared by
// every handler derived from the same New call: lines from concurrent
// goroutines never interleave, and a record of plain attributes (strings,
// numbers, booleans, durations) costs no allocation.
package logfmt
