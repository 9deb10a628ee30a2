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

// Transactions is Model.Transactions on the console's model, read between two polls: the open
// transactions `claims --transactions` lists, as of now.
func (c *Console) Transactions(ctx context.Context) ([]claims.TxnRow, error) {
	var out []claims.TxnRow
	err := c.do(ctx, func(s *session) error {
		out = s.m.Transactions(c.Log.Clock().Now(), true)
		return nil
	})
	return out, err
}
