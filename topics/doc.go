// Package topics measures the fleet's Kafka topics for the console's topics pane: per partition
// the end offset, the bytes stored, the records and bytes per second written and read, and the
// groups reading it.
//
// The two types to know are Reading, what one look at the fleet finds (each partition's end
// offset and size from Iggy's topic details, each group's committed offsets from the coordinator
// log), and Meter, which turns successive readings into Rows: records in per second are the end
// offset's growth, bytes in the size's, records out the growth of the groups' committed offsets
// summed over the groups, and bytes out those records at the partition's mean record size. A
// rate needs two readings, so the first shows none. Sampler reads and measures in one call, for
// the console's engine.
package topics
