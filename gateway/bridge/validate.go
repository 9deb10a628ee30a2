package bridge

import (
	"bytes"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// checkedBatch is one Kafka batch of a partition's data that passed every check, with the Iggy
// batch it becomes.
type checkedBatch struct {
	kb    kbatch
	raw   []byte // the Kafka batch as the producer sent it
	batch []byte
	id    [16]byte // Iggy id of the batch's first message
}

// checkBatches splits a partition's Records into batches and converts every one before any is
// stored, as Kafka validates a partition's whole data before it appends: a client that gets an
// error retries the lot, so storing a valid prefix would duplicate it. The returned Iggy batches
// are c's memory when there is one batch and copies otherwise.
func checkBatches(c *converter, ids *idGen, records []byte, maxRecord int32) ([]checkedBatch, error) {
	var out []checkedBatch
	for len(records) > 0 {
		kb, rest, err := nextBatch(records)
		if err != nil {
			return nil, err
		}
		raw := records[:len(records)-len(rest)]
		records = rest
		if err := checkIdempotence(&kb, out); err != nil {
			return nil, err
		}
		out = append(out, checkedBatch{kb: kb, raw: raw})
	}
	for i := range out {
		batch, err := c.toIggy(&out[i].kb, ids, maxRecord)
		if err != nil {
			return nil, err
		}
		if len(batch) > maxIggyBatch {
			return nil, fmt.Errorf("%w: batch of %d bytes exceeds the %d an Iggy request carries", kerr.MessageTooLarge, len(batch), maxIggyBatch)
		}
		if len(out) > 1 {
			batch = bytes.Clone(batch)
		}
		out[i].batch = batch
		out[i].id = c.firstID
	}
	return out, nil
}

// checkIdempotence checks the producer fields of kb against the batches of the same request
// before it: a producer's batches in one request keep their epoch and follow each other, so
// that once the first is accepted against the producer's state the rest are too.
func checkIdempotence(kb *kbatch, before []checkedBatch) error {
	if kb.ProducerID < 0 {
		return nil
	}
	for i := len(before) - 1; i >= 0; i-- {
		p := &before[i].kb
		if p.ProducerID != kb.ProducerID {
			continue
		}
		if p.ProducerEpoch != kb.ProducerEpoch {
			return fmt.Errorf("%w: producer %d changes epoch within one request", kerr.InvalidProducerEpoch, kb.ProducerID)
		}
		if want := nextSeq(p.BaseSequence, p.NumRecords); kb.BaseSequence != want {
			return fmt.Errorf("%w: sequence %d follows %d records from %d in one request", kerr.OutOfOrderSequenceNumber, kb.BaseSequence, p.NumRecords, p.BaseSequence)
		}
		return nil
	}
	return nil
}
