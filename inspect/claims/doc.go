// Package claims is the operator's model of a gateway fleet as the coordinator log and
// `<stream>.meta` show it: who claimed each of the 16 log partitions and for how long, which
// gateways announce themselves, which are drained, and the groups, offsets and transactions each
// partition holds. It folds the log with record.State and reads the announcements and drain
// requests through fleet.View, exactly as the gateways do; it decides nothing of its own.
//
// The two types to know are Model, the fleet as of the last read (LoadModel reads it,
// FollowModel keeps it current, Watch reports each change), and Tracker, one partition's fold
// and claim history, which reports a Handover when a new claim takes the partition. The rows
// (PartitionRow, NodeRow, TenureRow, TxnRow, GroupCoordinator, HandoverRow) are typed values
// that package output prints as tables, JSON or YAML and that package tui shows live; Diff and
// DiffNodes compare rows by their typed fields.
package claims
