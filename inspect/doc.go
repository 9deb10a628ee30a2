// Package inspect is `iggy-kafka inspect`: the coordinator log's records as rows, read from a
// range of offsets or times, for one group or partition, or followed as they arrive. The
// packages under it are the rest of the operator library, one idea each:
//
//	logread     the reader of the log over package logio: entries, positions, the fleet view
//	stateview   the fold's groups, members, offsets and transactions as typed views
//	verify      the log's fsck (inspect --verify)
//	replay      one partition's state rebuilt from the log (replay)
//	claims      the fleet's model: claims, nodes, handovers and their rows (claims, claims --watch)
//	drainplan   what a drain or an undo moves, and the rules that refuse one (drain)
//	livegroups  the log's groups compared with what the gateways answer (replay --diff-live,
//	            claims --group, group describe)
//	dial        which gateway addresses the commands dial, and probing each alone
//	console     the live console's engine: the model followed, status beats, drains and undos
//
// None of them renders: package output prints their rows as tables, JSON or YAML, and package
// tui shows them live.
//
// The two types to know are Query, which records to show (ParseFrom reads where `--from`
// starts), and RecordRow, one record: its place in the log, its header, whether the fold found
// it valid, and its own fields (RecordFields), written as JSON without reflection where a
// million records go out.
package inspect
