package logread

import "context"

// batchEntries is how many decoded entries travel between the reading and the folding
// goroutine at a time.
const batchEntries = 1024

// ReadBatches is Read with decoding and the caller's work on two goroutines: one polls and
// decodes while the other folds, so a replay uses two cores. fn gets entries in log order, in
// batches it must not keep (their Payload is nil: the poll buffer is gone by then).
func (l *Log) ReadBatches(ctx context.Context, partition int, from, end uint64, fn func([]Entry) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan []Entry, 2)
	free := make(chan []Entry, 3)
	for range 3 {
		free <- make([]Entry, 0, batchEntries)
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(full)
		var cur []Entry
		take := func() bool {
			select {
			case cur = <-free:
				cur = cur[:0]
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !take() {
			readErr <- ctx.Err()
			return
		}
		err := l.Read(ctx, partition, from, end, func(e *Entry) error {
			x := *e
			x.Payload = nil
			cur = append(cur, x)
			if len(cur) < batchEntries {
				return nil
			}
			select {
			case full <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !take() {
				return ctx.Err()
			}
			return nil
		})
		if err == nil && len(cur) > 0 {
			select {
			case full <- cur:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		readErr <- err
	}()
	var fnErr error
	for b := range full {
		if fnErr == nil {
			if fnErr = fn(b); fnErr != nil {
				cancel()
			}
		}
		select {
		case free <- b:
		default:
		}
	}
	err := <-readErr
	if fnErr != nil {
		return fnErr
	}
	return err
}
