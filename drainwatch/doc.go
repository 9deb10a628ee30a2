// Package drainwatch owns how an operator follows a drain, and its undo, to the end: the plan's
// types (Plan, Step), the progress of each partition (Event: released, claimed, served), when a
// drain or an undo is done, when someone else undid it meanwhile, and the moves that happened
// (Move). `drain --wait`, `drain --undo --wait` and the console follow a drain through the same
// Watch, so they cannot disagree on when it ended or how.
//
// The two types to know are Plan, what draining some nodes moves (package drainplan makes it
// from the log, Plan), and Watch, which a caller feeds the fleet as its reader folds it (Snapshot:
// fleet.View and each log partition's newest claim) after every read, and asks Done, Undone and
// Moves.
//
// Which request is the later one is decided by log order, as fleet.View decides the drained set:
// a Watch knows the DrainsTopic offset of each request it follows (Requested) and compares it
// with the offset of the node's latest request in the view. The requests' times are their
// writers' clocks and decide nothing: an undo written by a machine whose clock is behind still
// undoes the drain written before it.
package drainwatch
