package fleettest

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rejoinCodes are the answers that make a member join again: ILLEGAL_GENERATION (22),
// UNKNOWN_MEMBER_ID (25), REBALANCE_IN_PROGRESS (27), FENCED_INSTANCE_ID (82), and for KIP-848
// members FENCED_MEMBER_EPOCH (110), UNRELEASED_INSTANCE_ID (111) and STALE_MEMBER_EPOCH (113).
// Seeing one means the group rebalanced or lost a member.
var rejoinCodes = map[int16]string{22: "ILLEGAL_GENERATION", 25: "UNKNOWN_MEMBER_ID", 27: "REBALANCE_IN_PROGRESS", 82: "FENCED_INSTANCE_ID",
	110: "FENCED_MEMBER_EPOCH", 111: "UNRELEASED_INSTANCE_ID", 113: "STALE_MEMBER_EPOCH"}

// groupKeys are the API keys whose answers the tap decodes: the group APIs, ConsumerGroupHeartbeat
// (68) among them.
var groupKeys = map[int16]bool{8: true, 9: true, 10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 68: true}

// answer is one error code a gateway gave in a group response.
type answer struct {
	at     time.Time
	client string
	addr   string
	key    int16
	code   int16
}

func (a answer) String() string {
	return fmt.Sprintf("%s %s from %s: key %d (%s) code %d", a.at.Format("15:04:05.000"), a.client, a.addr,
		a.key, kmsg.NameForKey(a.key), a.code)
}

// tap sees every response the clients it dials for read, and keeps the non-zero error codes of
// the group APIs. kgo has no hook on response contents, so the tap reads the Kafka framing of
// each connection itself: the request header gives key and version per correlation id, and the
// response is decoded with kmsg.
type tap struct {
	mu      sync.Mutex
	answers []answer
	joins   []answer // successful JoinGroup answers (code 0), to spot generations bumped
	// beats are the successful ConsumerGroupHeartbeat answers, with the member epoch as code.
	beats []answer
	// dialFor, when set, is how the client of each name dials (the partition harness's
	// namespaces); a plain dial otherwise.
	dialFor func(name string) func(ctx context.Context, network, host string) (net.Conn, error)
}

// beatsSince is the successful ConsumerGroupHeartbeat answers to clients whose name starts with
// prefix after t, their member epochs as codes.
func (tp *tap) beatsSince(prefix string, t time.Time) []answer {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []answer
	for _, a := range tp.beats {
		if strings.HasPrefix(a.client, prefix) && a.at.After(t) {
			out = append(out, a)
		}
	}
	return out
}

// dialer is a kgo.Dialer for a client named name.
func (tp *tap) dialer(name string) kgo.Opt {
	return kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		dial := (&net.Dialer{Timeout: 2 * time.Second}).DialContext
		if tp.dialFor != nil {
			dial = tp.dialFor(name)
		}
		c, err := dial(ctx, network, host)
		if err != nil {
			return nil, err
		}
		return &tapConn{Conn: c, tap: tp, client: name, addr: host, inflight: make(map[int32][2]int16)}, nil
	})
}

func (tp *tap) record(a answer) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if a.code == 0 {
		tp.joins = append(tp.joins, a)
		return
	}
	tp.answers = append(tp.answers, a)
}

// rejoins is every answer with a code of rejoinCodes given after since.
func (tp *tap) rejoins(since time.Time) []answer {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []answer
	for _, a := range tp.answers {
		if _, bad := rejoinCodes[a.code]; bad && !a.at.Before(since) {
			out = append(out, a)
		}
	}
	return out
}

// joinsSince is the successful JoinGroup answers of clients whose name starts with prefix after t.
func (tp *tap) joinsSince(prefix string, t time.Time) []answer {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []answer
	for _, a := range tp.joins {
		if strings.HasPrefix(a.client, prefix) && a.at.After(t) {
			out = append(out, a)
		}
	}
	return out
}

// summary counts the non-zero codes per key and code.
func (tp *tap) summary() string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	n := map[string]int{}
	for _, a := range tp.answers {
		n[fmt.Sprintf("%s=%d", kmsg.NameForKey(a.key), a.code)]++
	}
	var parts []string
	for k, v := range n {
		parts = append(parts, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

type tapConn struct {
	net.Conn
	tap    *tap
	client string
	addr   string

	mu       sync.Mutex
	inflight map[int32][2]int16 // correlation id -> key, version

	// write side: the header being gathered, then the body bytes left to pass
	whdr  []byte
	wskip int
	// read side
	rhdr  []byte
	rbody []byte
	rleft int
	rkeep bool
	rkey  [2]int16
}

func (c *tapConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.scanRequests(b)
	c.mu.Unlock()
	return c.Conn.Write(b)
}

// scanRequests follows the request stream: size (4), key (2), version (2), correlation id (4).
func (c *tapConn) scanRequests(b []byte) {
	for len(b) > 0 {
		if c.wskip > 0 {
			n := min(c.wskip, len(b))
			c.wskip -= n
			b = b[n:]
			continue
		}
		need := 12 - len(c.whdr)
		n := min(need, len(b))
		c.whdr = append(c.whdr, b[:n]...)
		b = b[n:]
		if len(c.whdr) < 12 {
			return
		}
		size := int(int32(binary.BigEndian.Uint32(c.whdr)))
		key := int16(binary.BigEndian.Uint16(c.whdr[4:]))
		ver := int16(binary.BigEndian.Uint16(c.whdr[6:]))
		corr := int32(binary.BigEndian.Uint32(c.whdr[8:]))
		c.inflight[corr] = [2]int16{key, ver}
		c.wskip = size - 8
		c.whdr = c.whdr[:0]
	}
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.scanResponses(b[:n])
		c.mu.Unlock()
	}
	return n, err
}

// scanResponses follows the response stream: size (4), correlation id (4), body; the bodies of
// group APIs are kept and decoded, the others passed over.
func (c *tapConn) scanResponses(b []byte) {
	for len(b) > 0 {
		if c.rleft > 0 {
			n := min(c.rleft, len(b))
			if c.rkeep {
				c.rbody = append(c.rbody, b[:n]...)
			}
			c.rleft -= n
			b = b[n:]
			if c.rleft == 0 && c.rkeep {
				c.decode(c.rkey[0], c.rkey[1], c.rbody)
				c.rbody = c.rbody[:0]
			}
			continue
		}
		need := 8 - len(c.rhdr)
		n := min(need, len(b))
		c.rhdr = append(c.rhdr, b[:n]...)
		b = b[n:]
		if len(c.rhdr) < 8 {
			return
		}
		size := int(int32(binary.BigEndian.Uint32(c.rhdr)))
		corr := int32(binary.BigEndian.Uint32(c.rhdr[4:]))
		c.rhdr = c.rhdr[:0]
		kv, ok := c.inflight[corr]
		delete(c.inflight, corr)
		c.rkey, c.rkeep, c.rleft = kv, ok && groupKeys[kv[0]], size-4
		if c.rleft == 0 && c.rkeep {
			c.decode(kv[0], kv[1], nil)
		}
	}
}

func (c *tapConn) decode(key, version int16, body []byte) {
	resp := kmsg.ResponseForKey(key)
	if resp == nil {
		return
	}
	resp.SetVersion(version)
	if resp.IsFlexible() {
		// The flexible response header ends with tagged fields.
		count, n := binary.Uvarint(body)
		if n <= 0 {
			return
		}
		body = body[n:]
		for range count {
			_, n := binary.Uvarint(body)
			if n <= 0 {
				return
			}
			body = body[n:]
			size, n := binary.Uvarint(body)
			if n <= 0 || uint64(len(body)-n) < size {
				return
			}
			body = body[n+int(size):]
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return
	}
	now := time.Now()
	if hb, ok := resp.(*kmsg.ConsumerGroupHeartbeatResponse); ok && hb.ErrorCode == 0 {
		c.tap.mu.Lock()
		c.tap.beats = append(c.tap.beats, answer{at: now, client: c.client, addr: c.addr, key: key, code: int16(hb.MemberEpoch)})
		c.tap.mu.Unlock()
		return
	}
	for _, code := range responseCodes(resp) {
		c.tap.record(answer{at: now, client: c.client, addr: c.addr, key: key, code: code})
	}
}

// responseCodes lists the error codes of a group response: the top-level one and those of its
// members, groups and partitions. A successful JoinGroup yields a single 0.
func responseCodes(r kmsg.Response) []int16 {
	var codes []int16
	add := func(c int16) {
		if c != 0 {
			codes = append(codes, c)
		}
	}
	switch r := r.(type) {
	case *kmsg.JoinGroupResponse:
		if r.ErrorCode == 0 {
			return []int16{0}
		}
		add(r.ErrorCode)
	case *kmsg.SyncGroupResponse:
		add(r.ErrorCode)
	case *kmsg.HeartbeatResponse:
		add(r.ErrorCode)
	case *kmsg.ConsumerGroupHeartbeatResponse:
		add(r.ErrorCode)
	case *kmsg.LeaveGroupResponse:
		add(r.ErrorCode)
		for _, m := range r.Members {
			add(m.ErrorCode)
		}
	case *kmsg.OffsetCommitResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				add(p.ErrorCode)
			}
		}
	case *kmsg.OffsetFetchResponse:
		add(r.ErrorCode)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				add(p.ErrorCode)
			}
		}
		for _, g := range r.Groups {
			add(g.ErrorCode)
			for _, t := range g.Topics {
				for _, p := range t.Partitions {
					add(p.ErrorCode)
				}
			}
		}
	case *kmsg.FindCoordinatorResponse:
		add(r.ErrorCode)
		for _, c := range r.Coordinators {
			add(c.ErrorCode)
		}
	case *kmsg.DescribeGroupsResponse:
		for _, g := range r.Groups {
			add(g.ErrorCode)
		}
	}
	return codes
}
