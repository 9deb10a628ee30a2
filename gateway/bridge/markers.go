package bridge

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// WriteMarker appends the end of producer pid's transaction at epoch to a partition, acting as
// the Iggy identity of c: one Iggy message, which Fetch turns into Kafka's control batch (a
// commit or abort control record of that producer). Its payload is the control record's value
// (version 0, coordinator epoch 0: six zero bytes); its user headers are kafka.txn (2 commit,
// 3 abort), kafka.pid and kafka.epoch. A native Iggy reader sees it as a six-byte message with
// those headers. It returns the marker's offset. A marker at an epoch older than the one this
// gateway knows the producer at on the partition is INVALID_PRODUCER_EPOCH, and not written.
func (b *Bridge) WriteMarker(ctx context.Context, c *iggy.Client, topic string, partition int32, pid int64, epoch int16, commit bool) (int64, error) {
	as := b.guard(wrap(c))
	if partition < 0 {
		return -1, fmt.Errorf("%w: partition %d", kerr.UnknownTopicOrPartition, partition)
	}
	st, err := b.partOf(ctx, as, topic, partition)
	if err != nil {
		return -1, err
	}
	id := b.ids.ctr.Add(1) - 1
	batch, err := markerBatch(message.MakeID(id, b.ids.hi), uint64(b.clock.Now().UnixNano()/int64(time.Microsecond)), pid, epoch, commit)
	if err != nil {
		return -1, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if ps := st.producers[pid]; ps != nil && epoch < ps.epoch {
		// The producer has written here at a newer epoch, as Kafka's producer state refuses
		// a marker of an older one: nothing is written.
		return -1, fmt.Errorf("%w: producer %d is at epoch %d on %s/%d, the marker's is %d", kerr.InvalidProducerEpoch, pid, ps.epoch, topic, partition, epoch)
	}
	u, err := as.send(ctx, b.cfg.Stream, topic, uint32(partition), batch)
	if err != nil {
		st.dropProducers()
		st.next = -1
		return -1, kafkaErr(err)
	}
	base := int64(u)
	if st.next >= 0 && base != st.next {
		st.dropProducers()
	}
	st.next = base + 1
	if ps := st.producers[pid]; ps != nil {
		ps.fence(epoch)
	} else {
		st.producers[pid] = &producerState{epoch: epoch, partial: true}
	}
	st.confirmed = b.clock.Now()
	st.sawHW(base + 1)
	st.wake()
	return base, nil
}

// markerBatch is the Iggy batch of one marker message.
func markerBatch(id [16]byte, originMicros uint64, pid int64, epoch int16, commit bool) ([]byte, error) {
	kind := uint64(txnAbort)
	if commit {
		kind = txnCommit
	}
	var h []byte
	h = appendInt(h, hdrPID, kindInt64, 8, uint64(pid))
	h = appendInt(h, hdrEpoch, kindInt16, 2, uint64(uint16(epoch)))
	h = appendInt(h, hdrTxn, kindUint8, 1, kind)
	var mb message.Builder
	mb.Add(id, originMicros, markerValue, h)
	return mb.Finish()
}
