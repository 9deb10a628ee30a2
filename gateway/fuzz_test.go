package gateway

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzRequest sends arbitrary bytes as one request (behind a correct size prefix) to a gateway
// backed by the embedded store. The gateway must neither panic nor stop serving: after every
// input a second, long-lived connection still gets its ApiVersions answered.
func FuzzRequest(f *testing.F) {
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	g := startGateway(f, nil)
	addr := g.Addr().String()
	health, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		f.Fatal(err)
	}
	defer health.Close()
	corr := int32(0)

	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(append(frame, body...)); err == nil {
			// Take whatever answer comes quickly; a long poll is abandoned when we hang up.
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			io.Copy(io.Discard, c)
		}
		c.Close()

		corr++
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		health.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := health.Write(frameRequest(req, corr)); err != nil {
			t.Fatalf("health connection write: %v", err)
		}
		var size [4]byte
		if _, err := io.ReadFull(health, size[:]); err != nil {
			t.Fatalf("health connection read: %v", err)
		}
		answer := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(health, answer); err != nil {
			t.Fatalf("health connection read: %v", err)
		}
		if got := int32(binary.BigEndian.Uint32(answer)); got != corr {
			t.Fatalf("health answer correlation %d, want %d", got, corr)
		}
	})
}

// frameRequest encodes a whole request frame with client id "fuzz".
func frameRequest(req kmsg.Request, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = append(b, requestBody(req, corr)...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// requestBody is a request without its size prefix: the header and the body.
func requestBody(req kmsg.Request, corr int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 4, 'f', 'u', 'z', 'z')
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

// fuzzSeeds are valid requests of every served key, so mutations start from the real shapes.
func fuzzSeeds() [][]byte {
	meta := kmsg.NewPtrMetadataRequest()
	meta.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("fuzz")
	meta.Topics = append(meta.Topics, mt)

	create := kmsg.NewPtrCreateTopicsRequest()
	create.Version = 7
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "fuzz", 2, 1
	create.Topics = append(create.Topics, ct)

	produce := kmsg.NewPtrProduceRequest()
	produce.Version = 9
	produce.Acks = -1
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "fuzz"
	pp := kmsg.NewProduceRequestTopicPartition()
	rb := kmsg.NewRecordBatch()
	rb.Magic = 2
	rb.NumRecords = 1
	rb.ProducerID, rb.ProducerEpoch, rb.FirstSequence = -1, -1, -1
	rec := kmsg.NewRecord()
	rec.Key, rec.Value = []byte("k"), []byte("v")
	rb.Records = rec.AppendTo(nil)
	pp.Records = rb.AppendTo(nil)
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)

	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 11
	fetch.MaxWaitMillis = 10
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "fuzz"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)

	list := kmsg.NewPtrListOffsetsRequest()
	list.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "fuzz"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	list.Topics = append(list.Topics, lt)

	configs := kmsg.NewPtrDescribeConfigsRequest()
	configs.Version = 4
	cr := kmsg.NewDescribeConfigsRequestResource()
	cr.ResourceType, cr.ResourceName = kmsg.ConfigResourceTypeTopic, "fuzz"
	configs.Resources = append(configs.Resources, cr)

	alter := kmsg.NewPtrAlterConfigsRequest()
	alter.Version = 2
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeTopic, "fuzz"
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "compression.type", kmsg.StringPtr("zstd")
	ar.Configs = append(ar.Configs, ac)
	alter.Resources = append(alter.Resources, ar)

	incAlter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	incAlter.Version = 1
	ir := kmsg.NewIncrementalAlterConfigsRequestResource()
	ir.ResourceType, ir.ResourceName = kmsg.ConfigResourceTypeTopic, "fuzz"
	ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	ic.Name, ic.Op, ic.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("60000")
	ir.Configs = append(ir.Configs, ic)
	incAlter.Resources = append(incAlter.Resources, ir)

	parts := kmsg.NewPtrCreatePartitionsRequest()
	parts.Version = 3
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = "fuzz", 3
	parts.Topics = append(parts.Topics, cpt)

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 4
	del.TopicNames = []string{"fuzz"}

	epoch := kmsg.NewPtrOffsetForLeaderEpochRequest()
	epoch.Version = 4
	et := kmsg.NewOffsetForLeaderEpochRequestTopic()
	et.Topic = "fuzz"
	et.Partitions = append(et.Partitions, kmsg.NewOffsetForLeaderEpochRequestTopicPartition())
	epoch.Topics = append(epoch.Topics, et)

	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 2
	auth.SASLAuthBytes = []byte("\x00iggy\x00iggy")
	cluster := kmsg.NewPtrDescribeClusterRequest()
	cluster.Version = 1
	pid := kmsg.NewPtrInitProducerIDRequest()
	pid.Version = 4
	versions := kmsg.NewPtrApiVersionsRequest()
	versions.Version = 3

	var seeds [][]byte
	for i, req := range []kmsg.Request{versions, meta, create, produce, fetch, list, configs, alter, incAlter, parts, epoch, hs, auth, cluster, pid, del} {
		seeds = append(seeds, requestBody(req, int32(i)))
	}
	return seeds
}
