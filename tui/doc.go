// Package tui holds the live terminal views of the operator commands, as bubbletea models
// styled with lipgloss. It renders and never talks to the network: package console (under
// inspect/) follows the fleet and sends each snapshot in as a message, and the view asks for
// actions (a drain plan, a drain, an undo, a partition's groups, a group's lag) through an
// interface whose calls run in commands of their own. A view is a pure function of the messages it got, which is what lets
// its View() be compared with golden files at a fixed size.
//
// The two types to know are Console, the model of `claims --watch` (a node pane, a partition
// pane and a pane of recent handovers or of the drain under way; columns chosen by the width,
// scrolling, sorting, a filter; the drill-down into groups; drain and undo with their plan and
// confirmation; a banner when a source stops answering; the topics screen and the tail pane of
// a partition's records), and Actions, what its keys ask of console.Console, of the topics
// sampler and of the tail reader (a RecordStream the pane takes batches from when it is
// ready). It holds no rule: changes are marked by the typed fields package claims reports, drains
// are refused by package drainplan's rules, the banner says console.Status's sentences, rates are measured by
// package topics and records are read and shown by package tail.
package tui
