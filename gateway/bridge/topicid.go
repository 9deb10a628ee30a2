package bridge

import (
	"crypto/sha256"
	"encoding/binary"
)

// TopicID is the Kafka topic id of Iggy topic name, with Iggy topic id topicID and creation
// time createdAt (µs, as Iggy reports it), in Iggy stream stream. It is the one place the id
// is made: every user of topic ids (Metadata, CreateTopics, DeleteTopics, and whatever names
// topics by id later) takes it from here.
//
// Kafka ids are random UUIDs kept by the controller; here nothing is kept: the id is derived
// from what Iggy already keeps, so every gateway computes the same id without asking anyone, a
// restart changes nothing, and a topic deleted and created again under the same name (a new
// Iggy topic, created at another time) gets a new id. It is the first 16 bytes of
//
//	SHA-256("iggy-kafka topic id\x00" | u16 len(stream) | stream | u32 topicID | u64 createdAt | u16 len(name) | name)
//
// (integers big-endian) marked as a version-8 UUID (RFC 9562: version nibble 8, variant 10),
// which is never Kafka's reserved zero or one id.
func TopicID(stream string, topicID uint32, createdAt uint64, name string) [16]byte {
	be := binary.BigEndian
	b := make([]byte, 0, 64+len(stream)+len(name))
	b = append(b, "iggy-kafka topic id\x00"...)
	b = be.AppendUint16(b, uint16(len(stream)))
	b = append(b, stream...)
	b = be.AppendUint32(b, topicID)
	b = be.AppendUint64(b, createdAt)
	b = be.AppendUint16(b, uint16(len(name)))
	b = append(b, name...)
	sum := sha256.Sum256(b)
	var id [16]byte
	copy(id[:], sum[:])
	id[6] = id[6]&0x0f | 0x80
	id[8] = id[8]&0x3f | 0x80
	return id
}
