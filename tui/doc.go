// Package tui holds the live terminal views of the operator commands, as bubbletea models
// styled with lipgloss. It renders and never talks to the network: package inspect reads the
// log and sends each change in as a message, so a view is a pure function of the messages it
// got, which is what lets its View() be compared with golden files at a fixed size.
//
// The two types to know are Claims, the model of `claims --watch` (the 16 partitions, what the
// last update changed, a pane of recent handovers, a filter and help), and UpdateMsg, the
// message a watcher sends it.
package tui
