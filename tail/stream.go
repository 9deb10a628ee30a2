package tail

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrEnded is Next on a stream whose reader stopped without an error: it was closed, or it read
// every record it was asked for.
var ErrEnded = errors.New("the tail ended")

// Stream is Run in the background for a view that takes records when it is ready for them: each
// fetch's records come out of Next as one batch, and Run waits, reading nothing more, until the
// batch is taken (a paused view simply stops asking). Close ends the reader and waits for it.
type Stream struct {
	cancel  context.CancelFunc
	batches chan []Record
	done    chan struct{}
	err     error
}

// Open starts Run(adm, opts, o) in the background.
func Open(adm *kadm.Client, opts []kgo.Opt, o Options) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Stream{cancel: cancel, batches: make(chan []Record), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		var pending []Record
		s.err = Run(ctx, adm, opts, o, func(r Record) error {
			pending = append(pending, r)
			return nil
		}, func() error {
			if len(pending) == 0 {
				return nil
			}
			select {
			case s.batches <- slices.Clip(pending):
				pending = nil
			case <-ctx.Done():
			}
			return nil
		})
	}()
	return s
}

// Next returns the next batch of records, waiting for one until ctx ends; after the reader
// stopped it returns its error, or ErrEnded.
func (s *Stream) Next(ctx context.Context) ([]Record, error) {
	select {
	case b := <-s.batches:
		return b, nil
	case <-s.done:
		if s.err != nil {
			return nil, s.err
		}
		return nil, ErrEnded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops the reader and waits until it has.
func (s *Stream) Close() {
	s.cancel()
	<-s.done
}
