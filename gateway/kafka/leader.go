package kafka

// leaderIndex picks the broker that Metadata names as leader of partition index of topic, among
// n brokers sorted by node id: FNV-1a (32-bit) of the topic name, plus the partition index,
// modulo n. Adding the index spreads one topic's partitions round-robin over the fleet, and the
// hash starts each topic at a different broker. Any gateway can serve any partition, so the
// choice only spreads client load; it must merely be the same on every gateway.
func leaderIndex(topic string, partition int32, n int) int {
	if n <= 0 {
		return 0
	}
	h := uint32(2166136261)
	for i := 0; i < len(topic); i++ {
		h ^= uint32(topic[i])
		h *= 16777619
	}
	return int((uint64(h) + uint64(uint32(partition))) % uint64(n))
}
