package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeGroups is a GroupCoordinator that records the calls it gets. Methods a test does not set
// are the nil interface's, so an unexpected call panics the handler and closes the connection.
type fakeGroups struct {
	GroupCoordinator

	mu    sync.Mutex
	calls []string
	ids   []Identity
	// commit, when set, runs inside OffsetCommit before it answers.
	commit func()
	// left closes at the first LeaveGroup.
	left     chan struct{}
	leftOnce sync.Once
}

func (f *fakeGroups) record(name string, id Identity) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	f.ids = append(f.ids, id)
}

func (f *fakeGroups) seen() ([]string, []Identity) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...), append([]Identity(nil), f.ids...)
}

func (f *fakeGroups) OffsetCommit(ctx context.Context, id Identity, req *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitResponse, error) {
	f.record("OffsetCommit start", id)
	if f.commit != nil {
		f.commit()
	}
	f.record("OffsetCommit end", id)
	return req.ResponseKind().(*kmsg.OffsetCommitResponse), nil
}

func (f *fakeGroups) LeaveGroup(ctx context.Context, id Identity, req *kmsg.LeaveGroupRequest) (*kmsg.LeaveGroupResponse, error) {
	f.record("LeaveGroup", id)
	f.leftOnce.Do(func() { close(f.left) })
	return req.ResponseKind().(*kmsg.LeaveGroupResponse), nil
}

var groupKeys = []int16{offsetCommitKey, offsetFetchKey, findCoordinatorKey, joinGroupKey, heartbeatKey,
	leaveGroupKey, syncGroupKey, describeGroupsKey, listGroupsKey, deleteGroupsKey, offsetDeleteKey}

func TestGroupKeysAdvertisedOnlyWithCoordinator(t *testing.T) {
	for _, withGroups := range []bool{false, true} {
		t.Run(fmt.Sprintf("groups=%v", withGroups), func(t *testing.T) {
			fg := &fakeGroups{left: make(chan struct{})}
			ts := startServer(t, func(c *Config) {
				if withGroups {
					c.Groups = fg
				}
			})
			conn := dialRaw(t, ts.addr)
			resp := conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
			listed := map[int16]int16{}
			for _, k := range resp.ApiKeys {
				listed[k.ApiKey] = k.MaxVersion
			}
			for _, k := range groupKeys {
				max, ok := listed[k]
				if ok != withGroups {
					t.Errorf("%s advertised: %v", kmsg.NameForKey(k), ok)
				}
				// Exactly what the handler file serves: kmsg's newest version where the handler
				// serves it, lower where a newer version needs what the gateway lacks (topic ids).
				if want := groupVersions[k].max; ok && max != want {
					t.Errorf("%s advertised up to v%d, the handler serves up to v%d", kmsg.NameForKey(k), max, want)
				}
				if r := groupVersions[k]; r.min != 0 || r.max > kmsg.RequestForKey(k).MaxVersion() {
					t.Errorf("%s registered v%d-%d, want from v0 to at most kmsg's v%d", kmsg.NameForKey(k), r.min, r.max, kmsg.RequestForKey(k).MaxVersion())
				}
			}
			for _, k := range []int16{produceKey, fetchKey, metadataKey} {
				if _, ok := listed[k]; !ok {
					t.Errorf("%s not advertised", kmsg.NameForKey(k))
				}
			}

			leave := kmsg.NewPtrLeaveGroupRequest()
			leave.Version = 3
			leave.Group = "g"
			got := conn.roundTrip(t, leave).(*kmsg.LeaveGroupResponse)
			calls, _ := fg.seen()
			if withGroups {
				if got.ErrorCode != 0 || len(calls) != 1 || calls[0] != "LeaveGroup" {
					t.Fatalf("with a coordinator: error %d, calls %v", got.ErrorCode, calls)
				}
				return
			}
			if got.ErrorCode != kerr.UnsupportedVersion.Code {
				t.Fatalf("without a coordinator: error %d, want UNSUPPORTED_VERSION", got.ErrorCode)
			}
			// The connection is still in step.
			conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
		})
	}
}

// TestGroupRequestsOfOneConnectionInOrder pipelines an OffsetCommit and a LeaveGroup. The commit
// is held in the coordinator until the LeaveGroup has been read and handed to its goroutine (its
// hook has seen it), and then for a while longer: were the two not ordered, the LeaveGroup would
// reach the coordinator in that window, before the commit ends.
func TestGroupRequestsOfOneConnectionInOrder(t *testing.T) {
	fg := &fakeGroups{left: make(chan struct{})}
	ts := startServer(t, func(c *Config) { c.Groups = fg })
	leaveSeen := make(chan struct{})
	ts.s.ControlKey(leaveGroupKey, func(r *Controlled) (kmsg.Response, error, bool) {
		close(leaveSeen)
		return nil, nil, false
	})
	fg.commit = func() {
		<-leaveSeen
		// A window for an unordered LeaveGroup to show itself; it passes in full only when the
		// ordering holds.
		select {
		case <-fg.left:
		case <-time.After(100 * time.Millisecond):
		}
	}

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version = 8
	commit.Group = "g"
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 4
	leave.Group = "g"
	conn := dialRaw(t, ts.addr)
	conn.write(t, append(encodeRequest(commit, 1), encodeRequest(leave, 2)...))
	for corr := int32(1); corr <= 2; corr++ {
		if got := int32(binary.BigEndian.Uint32(conn.readFrame(t))); got != corr {
			t.Fatalf("answer with correlation %d, want %d", got, corr)
		}
	}
	calls, ids := fg.seen()
	if want := "[OffsetCommit start OffsetCommit end LeaveGroup]"; fmt.Sprint(calls) != want {
		t.Fatalf("coordinator saw %v, want %s", calls, want)
	}
	for _, id := range ids {
		if id.User != "" || id.ClientID != "t" || id.ClientHost != "127.0.0.1" || id.Storage != Storage(ts.storage) {
			t.Fatalf("identity %+v", id)
		}
	}
}

// TestFetchWaitsForEarlierProduceOnItsConnection pipelines a Produce and a Fetch (MaxWait 0) of
// the same partition on one connection. The produce is held until the fetch has been read and
// started, then until the fetch reached the storage or a window passed: an unordered fetch reads
// before the write and answers empty.
func TestFetchWaitsForEarlierProduceOnItsConnection(t *testing.T) {
	var fetchedEarly sync.Once
	fetchReached := make(chan struct{})
	ts := startServer(t, func(c *Config) {
		c.Storage = &fetchSpy{memStorage: c.Storage.(*memStorage), reached: func() { fetchedEarly.Do(func() { close(fetchReached) }) }}
	})
	ts.storage.CreateTopic(context.Background(), "rw", 2, nil, false)
	fetchSeen := make(chan struct{})
	ts.s.ControlKey(fetchKey, func(r *Controlled) (kmsg.Response, error, bool) {
		close(fetchSeen)
		return nil, nil, false
	})
	ts.s.ControlKey(produceKey, func(r *Controlled) (kmsg.Response, error, bool) {
		r.Sleep(func() {
			<-fetchSeen
			select {
			case <-fetchReached:
			case <-time.After(100 * time.Millisecond):
			}
		})
		return nil, nil, false
	})

	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.Acks = 1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "rw"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = testBatch(1)
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	fetch := longPoll("rw", 0)

	conn := dialRaw(t, ts.addr)
	conn.write(t, append(encodeRequest(produce, 1), encodeRequest(fetch, 2)...))
	conn.readFrame(t)
	body := conn.readFrame(t)
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = fetch.Version
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch after the produce on the same connection: error %d, high watermark %d, %d bytes",
			p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
}

// fetchSpy tells when a fetch reaches the storage.
type fetchSpy struct {
	*memStorage
	reached func()
}

func (f *fetchSpy) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (FetchResult, error) {
	f.reached()
	return f.memStorage.Fetch(ctx, topic, partition, offset, maxBytes, version)
}
