package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
)

// ClientQuotas keeps the client quotas (Config.ClientQuotas) by entity, in Iggy, so every
// gateway of a fleet reads the same: entity is quota.EncodeEntity's string, the values Kafka's
// quota keys with their values as decimal strings.
type ClientQuotas interface {
	ClientQuotas(ctx context.Context) (map[string]map[string]string, error)
	SetClientQuotas(ctx context.Context, entity string, quotas map[string]string) error
}

// checkEntity is quota.CheckEntity as the protocol refuses it (INVALID_REQUEST).
func checkEntity(e []quota.Component) error {
	if err := quota.CheckEntity(e); err != nil {
		return Refuse(kerr.InvalidRequest, "%s", err)
	}
	return nil
}

// checkQuotaValue is quota.CheckValue as the protocol refuses it (INVALID_REQUEST).
func checkQuotaValue(key string, v float64) error {
	if err := quota.CheckValue(key, v); err != nil {
		return Refuse(kerr.InvalidRequest, "%s", err)
	}
	return nil
}

// clientQuotasOf is Config.ClientQuotas, or a server that keeps none.
func (s *Server) clientQuotasOf() ClientQuotas {
	if s.cfg.ClientQuotas == nil {
		return noQuotas{}
	}
	return s.cfg.ClientQuotas
}

type noQuotas struct{}

func (noQuotas) ClientQuotas(context.Context) (map[string]map[string]string, error) { return nil, nil }
func (noQuotas) SetClientQuotas(context.Context, string, map[string]string) error {
	return Refuse(kerr.InvalidRequest, "this gateway keeps no client quotas")
}
