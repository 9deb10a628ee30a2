package store

import (
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Limits from protocol section 2.
const (
	maxStreams          = 1 << 20
	maxTopicsPerStream  = 4096
	maxPartitionsPerReq = 1000
	maxPATsPerUser      = 100
)

// state is the metadata the server keeps in memory; Server.mu guards it.
// Streams, topics and users are slabs indexed by id: a deleted entry leaves
// a nil hole that the next create reuses, lowest first.
type state struct {
	streams []*stream
	users   []*user
}

type stream struct {
	id        uint32
	name      string
	createdAt uint64
	topics    []*topic
}

type topic struct {
	stream      *stream
	id          uint32
	name        string
	createdAt   uint64
	opts        topicOptions
	partitions  []*partition
	groups      []*group // indexed by group id; ids are never reused
	nextGroupID uint32
	// rr is the Balanced partitioning cursor.
	rr atomic.Uint32
}

type partition struct {
	id        uint32
	createdAt uint64
	dir       string
	log       partLog
	// offsets are the stored consumer offsets, keyed by consumer.
	offsets map[consumerKey]uint64
}

// consumerKey names the owner of a stored offset: a single consumer's
// numeric key or a consumer group's id.
type consumerKey struct {
	kind wire.ConsumerKind
	id   uint32
}

type user struct {
	id        uint32
	username  string
	createdAt uint64
	status    uint8 // 1 active, 2 inactive
	salt      []byte
	hash      []byte
	iter      int // PBKDF2 iterations of hash; 0: pbkdf2Iterations
	perms     *wire.Permissions
	pats      []*pat
}

type pat struct {
	name     string
	hash     []byte // SHA-256 of the raw token
	expiryAt uint64 // µs since epoch, 0 = never
}

func nowMicros() uint64 { return uint64(time.Now().UnixMicro()) }

// freeSlot returns the lowest nil index of a slab, or its length.
func freeSlot[T any](slab []*T) int {
	for i, v := range slab {
		if v == nil {
			return i
		}
	}
	return len(slab)
}

func putSlot[T any](slab []*T, i int, v *T) []*T {
	if i == len(slab) {
		return append(slab, v)
	}
	slab[i] = v
	return slab
}

func (st *state) stream(id wire.Identifier) *stream {
	if id.IsNumeric() {
		if int(id.ID) < len(st.streams) {
			return st.streams[id.ID]
		}
		return nil
	}
	for _, s := range st.streams {
		if s != nil && s.name == id.Name {
			return s
		}
	}
	return nil
}

func (st *state) streamByName(name string) *stream {
	for _, s := range st.streams {
		if s != nil && s.name == name {
			return s
		}
	}
	return nil
}

func (s *stream) topic(id wire.Identifier) *topic {
	if id.IsNumeric() {
		if int(id.ID) < len(s.topics) {
			return s.topics[id.ID]
		}
		return nil
	}
	return s.topicByName(id.Name)
}

func (s *stream) topicByName(name string) *topic {
	for _, t := range s.topics {
		if t != nil && t.name == name {
			return t
		}
	}
	return nil
}

func (t *topic) partition(id uint32) *partition {
	if int(id) < len(t.partitions) {
		return t.partitions[id]
	}
	return nil
}

func (t *topic) group(id wire.Identifier) *group {
	if id.IsNumeric() {
		if int(id.ID) < len(t.groups) {
			return t.groups[id.ID]
		}
		return nil
	}
	for _, g := range t.groups {
		if g != nil && g.name == id.Name {
			return g
		}
	}
	return nil
}

func (st *state) user(id wire.Identifier) *user {
	if id.IsNumeric() {
		if int(id.ID) < len(st.users) {
			return st.users[id.ID]
		}
		return nil
	}
	return st.userByName(id.Name)
}

func (st *state) userByName(name string) *user {
	for _, u := range st.users {
		if u != nil && u.username == name {
			return u
		}
	}
	return nil
}

// stats sums a topic's partitions.
func (t *topic) stats() (size, messages uint64) {
	for _, p := range t.partitions {
		size += p.log.SizeBytes()
		messages += p.log.MessageCount()
	}
	return size, messages
}

func (s *stream) stats() (size, messages uint64) {
	for _, t := range s.topics {
		if t != nil {
			sz, m := t.stats()
			size += sz
			messages += m
		}
	}
	return size, messages
}

func (s *stream) topicCount() int {
	n := 0
	for _, t := range s.topics {
		if t != nil {
			n++
		}
	}
	return n
}
