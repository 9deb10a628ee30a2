package console

import (
	"context"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
)

// GroupOffsets is Model.GroupOffsets on the console's model, read between two polls.
func (c *Console) GroupOffsets(ctx context.Context) ([]claims.GroupOffset, error) {
	var out []claims.GroupOffset
	err := c.do(ctx, func(s *session) error {
		out = s.m.GroupOffsets()
		return nil
	})
	return out, err
}
