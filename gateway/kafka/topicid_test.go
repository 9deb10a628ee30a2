package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic ids are never zero wherever they are answered (Metadata v10+, CreateTopics v7,
// DeleteTopics v6), are the Storage's, and name topics where a request may name them by id.
func TestTopicIDsAnswered(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)

	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version = 7
	for _, name := range []string{"ids-a", "ids-b"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, rt)
	}
	created := conn.roundTrip(t, create).(*kmsg.CreateTopicsResponse)
	ids := map[string][16]byte{}
	for _, st := range created.Topics {
		info, err := ts.storage.Topic(testCtx(t), st.Topic, false)
		if err != nil || st.ErrorCode != 0 {
			t.Fatalf("create %s: code %d, %v", st.Topic, st.ErrorCode, err)
		}
		if st.TopicID == ([16]byte{}) || st.TopicID != info.ID {
			t.Fatalf("CreateTopics answered id %x for %s, the storage says %x", st.TopicID, st.Topic, info.ID)
		}
		ids[st.Topic] = info.ID
	}

	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	all := conn.roundTrip(t, meta).(*kmsg.MetadataResponse)
	for _, st := range all.Topics {
		if st.TopicID == ([16]byte{}) {
			t.Fatalf("Metadata lists %s with a zero id", *st.Topic)
		}
		if want, ok := ids[*st.Topic]; ok && st.TopicID != want {
			t.Fatalf("Metadata lists %s with id %x, the storage says %x", *st.Topic, st.TopicID, want)
		}
	}
	if len(all.Topics) != 3 {
		t.Fatalf("Metadata listed %d topics, want the two and __consumer_offsets", len(all.Topics))
	}

	byID := kmsg.NewPtrMetadataRequest()
	byID.Version = 12
	for _, id := range [][16]byte{ids["ids-b"], {0xee}} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		byID.Topics = append(byID.Topics, rt)
	}
	got := conn.roundTrip(t, byID).(*kmsg.MetadataResponse)
	if len(got.Topics) != 2 || got.Topics[0].ErrorCode != 0 || got.Topics[0].Topic == nil || *got.Topics[0].Topic != "ids-b" ||
		got.Topics[0].TopicID != ids["ids-b"] || len(got.Topics[0].Partitions) != 1 {
		t.Fatalf("Metadata by the id of ids-b answered %+v", got.Topics)
	}
	if got.Topics[1].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("Metadata by an unknown id: code %d, want UNKNOWN_TOPIC_ID", got.Topics[1].ErrorCode)
	}

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 6
	byName := kmsg.NewDeleteTopicsRequestTopic()
	byName.Topic = kmsg.StringPtr("ids-a")
	byIDDel := kmsg.NewDeleteTopicsRequestTopic()
	byIDDel.TopicID = ids["ids-b"]
	del.Topics = append(del.Topics, byName, byIDDel)
	deleted := conn.roundTrip(t, del).(*kmsg.DeleteTopicsResponse)
	for i, name := range []string{"ids-a", "ids-b"} {
		st := deleted.Topics[i]
		if st.ErrorCode != 0 || st.Topic == nil || *st.Topic != name || st.TopicID != ids[name] {
			t.Fatalf("DeleteTopics of %s answered code %d, name %v, id %x; want 0, its name and id %x", name, st.ErrorCode, st.Topic, st.TopicID, ids[name])
		}
		if _, err := ts.storage.Topic(testCtx(t), name, false); err == nil {
			t.Fatalf("%s still exists", name)
		}
	}
}
