// Package groupadmin is the library of `iggy-kafka group`, beyond describing one group (which is
// livegroups.DescribeGroup, the same answer as the console's group page): it lists the fleet's
// groups, and it moves a group's committed offsets.
//
// The two types to know are Target, where a seek moves each partition (the log start, the end,
// an offset, the first record at or after a time, or a shift from the commit), and Plan, what
// BuildPlan makes of a target over the partitions' bounds and commits: per partition the offset
// committed now, the new one (clamped to the partition's start and end, and said), and the
// records the group will read again or skip. Load asks the gateways for everything BuildPlan
// needs and refuses, as Kafka does, a group that has live members; Commit writes the plan as one
// OffsetCommit through the group's coordinator, so the new offsets land in the coordinator log
// like every commit, and a member that joins meanwhile makes the gateway refuse it whole.
//
// Two targets come from the coordinator log's history, read from Iggy through logread.Log and
// folded by the gateways' own fold (replay.Run): CommitAt, the offsets committed at a
// time, and Undo, the offsets the newest seek replaced, which LastSeek finds by the metadata
// every seek's commits carry (SeekMark, UndoMark). Seeker puts it together for `group seek` and
// the console: ParseTarget reads a target as both take it, Plan resolves and loads it, Seek
// commits it. Every offset is written through the gateways with kadm; nothing here writes Iggy.
package groupadmin
