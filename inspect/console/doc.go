// Package console is the engine of the live console (`claims --watch` on a terminal): it loads
// the fleet's model (package claims), follows the log into it on one goroutine, and sends a
// Sink snapshots of the tables with the changes and handovers since the last one, and status
// beats. It says when the store stops answering and reloads until it answers again, probes
// each announced gateway (package dial), and runs the console's drains and undos through the
// rules `drain` obeys (package drainplan), following each to its end with package drainwatch,
// as `drain --wait` does.
//
// The two types to know are Console, the engine (Run, and the actions the view's keys call:
// PlanDrain, Drain, CheckUndo, Undo, Groups, Group, GroupOffsets, Transactions), and Snapshot, the fleet at
// one instant with its Status. A new pane adds an action method that reads the model between
// two polls through the same session (Console.do), as GroupOffsets does.
package console
