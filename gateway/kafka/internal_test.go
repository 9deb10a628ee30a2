package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs of the internal __consumer_offsets answers the read-only configs Kafka gives
// it: kafka-topics --describe and kafka-configs --describe --entity-type topics describe it
// with every topic and failed whole on the UNKNOWN_TOPIC_OR_PARTITION it used to get.
func TestDescribeConfigsConsumerOffsets(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "__consumer_offsets"
	req.Resources = append(req.Resources, r)
	resp := conn.roundTrip(t, req).(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("answered %+v, want one resource without an error", resp.Resources)
	}
	got := map[string]string{}
	for _, c := range resp.Resources[0].Configs {
		if !c.ReadOnly || c.Value == nil || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
			t.Errorf("%s: value %v, read-only %v, source %v; want a read-only value of the topic's own", c.Name, c.Value, c.ReadOnly, c.Source)
			continue
		}
		got[c.Name] = *c.Value
	}
	if got["cleanup.policy"] != "compact" || got["compression.type"] != "producer" {
		t.Fatalf("configs %v, want cleanup.policy=compact and compression.type=producer", got)
	}
}

// ListOffsets of the internal __consumer_offsets answers as for empty partitions (kafka-get-offsets
// without --topic asks for every partition of every topic and retried the
// UNKNOWN_TOPIC_OR_PARTITION it used to get until its timeout); a partition past its 16 is
// UNKNOWN_TOPIC_OR_PARTITION.
func TestListOffsetsConsumerOffsets(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 9
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "__consumer_offsets"
	for _, p := range []struct {
		partition int32
		ts        int64
	}{{0, -2}, {15, -1}, {3, -3}, {4, 1700000000000}, {16, -1}} {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p.partition, p.ts
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := conn.roundTrip(t, req).(*kmsg.ListOffsetsResponse)
	type answer struct {
		code       int16
		offset, at int64
	}
	want := []answer{{0, 0, -1}, {0, 0, -1}, {0, -1, -1}, {0, -1, -1}, {kerr.UnknownTopicOrPartition.Code, -1, -1}}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != len(want) {
		t.Fatalf("answered %+v", resp.Topics)
	}
	for i, p := range resp.Topics[0].Partitions {
		if got := (answer{p.ErrorCode, p.Offset, p.Timestamp}); got != want[i] {
			t.Errorf("partition %d: %+v, want %+v", p.Partition, got, want[i])
		}
	}
}
