// Package replay is `iggy-kafka replay partition N`: one log partition's group state rebuilt
// from the log with the gateways' own fold (record.State), from the last valid checkpoint (as a
// gateway takes a partition over) or from offset 0, up to the end or to a past offset or time.
// The log is read and decoded on one goroutine and folded on another (logread.ReadBatches).
//
// The two things to know are Run and Result, what the fold ended with: the claim the partition
// is held under, its groups (stateview.GroupView), transactions, and how many records were read
// and how fast. JSON field names are an interface.
package replay
