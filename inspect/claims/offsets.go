package claims

// GroupOffset is one group's committed offset on one Kafka partition, as the coordinator log
// holds it. JSON field names are an interface.
type GroupOffset struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// GroupOffsets lists every committed offset the model holds, over the 16 log partitions, by
// group, topic and partition.
func (m *Model) GroupOffsets() []GroupOffset {
	var out []GroupOffset
	for _, t := range m.Parts {
		st := t.State
		for _, g := range st.GroupNames() {
			for _, o := range st.GroupOffsets(g) {
				out = append(out, GroupOffset{Group: g, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset})
			}
		}
	}
	return out
}
