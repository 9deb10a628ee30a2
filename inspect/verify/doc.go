// Package verify is `inspect --verify`, an fsck of the coordinator log: it reads every record
// of the partitions from their start, folds them by the gateways' own validity rule (package
// record), and reports what a healthy log does not hold: void records (fenced, or written under
// no claim), undecodable ones, claims that repeat or go back, and checkpoints that disagree with
// the fold of what precedes them.
//
// The two types to know are Finding, one problem at one offset (its Kind is one of the Finding*
// constants, an interface), and Summary, the verdict of a run: what was read and how much was
// found. Checker checks one partition's entries as they come, for a caller that reads the log
// itself.
package verify
