package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzServeRequest feeds arbitrary bytes, behind a correct size prefix, to servers backed by the
// in-memory Storage, one without and one with SASL. No input may panic a server or disturb
// another connection, which must still get its ApiVersions answered.
func FuzzServeRequest(f *testing.F) {
	for _, req := range []kmsg.Request{
		kmsg.NewPtrApiVersionsRequest(),
		kmsg.NewPtrMetadataRequest(),
		kmsg.NewPtrCreateTopicsRequest(),
		kmsg.NewPtrProduceRequest(),
		kmsg.NewPtrFetchRequest(),
		kmsg.NewPtrListOffsetsRequest(),
		kmsg.NewPtrSASLHandshakeRequest(),
		kmsg.NewPtrSASLAuthenticateRequest(),
		kmsg.NewPtrDescribeConfigsRequest(),
		deleteRecordsSeed(),
		describeProducersSeed(),
		alterConfigsSeed(),
		incrementalAlterConfigsSeed(),
	} {
		req.SetVersion(versions[req.Key()].max)
		body := encodeRequest(req, 1)[4:]
		f.Add(body, false)
		f.Add(body, true)
	}
	plain := startServer(f, nil)
	secure := startServer(f, func(c *Config) {
		c.SASL = true
		c.Authenticate = func(ctx context.Context, user, pass string) (Storage, error) {
			if user == "u" && pass == "p" {
				return c.Storage, nil
			}
			return nil, errors.New("invalid credentials")
		}
	})
	healthPlain := dialRaw(f, plain.addr)
	healthSecure := dialRaw(f, secure.addr)

	f.Fuzz(func(t *testing.T, body []byte, useSASL bool) {
		addr, health := plain.addr, healthPlain
		if useSASL {
			addr, health = secure.addr, healthSecure
		}
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		if _, err := c.Write(append(frame, body...)); err == nil {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			io.Copy(io.Discard, c)
		}
		c.Close()
		health.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	})
}

// deleteRecordsSeed deletes the records of two partitions, one of them up to the end.
func deleteRecordsSeed() kmsg.Request {
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "t"
	for p, off := range []int64{3, -1} {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = int32(p), off
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

// describeProducersSeed describes a topic's partitions, one past its count, and
// __consumer_offsets'.
func describeProducersSeed() kmsg.Request {
	req := kmsg.NewPtrDescribeProducersRequest()
	for _, name := range []string{"t", "__consumer_offsets"} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = name, []int32{0, 1, 99}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// alterConfigsSeed sets two configs of a topic and one of the broker.
func alterConfigsSeed() kmsg.Request {
	req := kmsg.NewPtrAlterConfigsRequest()
	for _, r := range []struct {
		typ        kmsg.ConfigResourceType
		name, conf string
	}{{kmsg.ConfigResourceTypeTopic, "t", "retention.ms"}, {kmsg.ConfigResourceTypeTopic, "t", "compression.type"}, {kmsg.ConfigResourceTypeBroker, "1", "broker.id"}} {
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.typ, r.name
		rc := kmsg.NewAlterConfigsRequestResourceConfig()
		rc.Name, rc.Value = r.conf, kmsg.StringPtr("1")
		rr.Configs = append(rr.Configs, rc)
		req.Resources = append(req.Resources, rr)
	}
	return req
}

// incrementalAlterConfigsSeed uses every operation on a topic.
func incrementalAlterConfigsSeed() kmsg.Request {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
	for op, name := range []string{"retention.ms", "retention.bytes", "cleanup.policy", "cleanup.policy"} {
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Op, rc.Value = name, kmsg.IncrementalAlterConfigOp(op), kmsg.StringPtr("delete")
		rr.Configs = append(rr.Configs, rc)
	}
	req.Resources = append(req.Resources, rr)
	return req
}
