package kafka

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ClientQuotas keeps the client quotas (Config.ClientQuotas) by entity, in Iggy, so every
// gateway of a fleet reads the same: entity is EncodeQuotaEntity's string, the values Kafka's
// quota keys with their values as decimal strings.
type ClientQuotas interface {
	ClientQuotas(ctx context.Context) (map[string]map[string]string, error)
	SetClientQuotas(ctx context.Context, entity string, quotas map[string]string) error
}

// QuotaComponent is one part of a quota entity: a type ("user" or "client-id") and a name, nil
// for the type's default.
type QuotaComponent struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
}

// quotaKeys are Kafka's client quota keys, whole numbers for the byte rates; a value must be
// above zero (a quota is removed, not set to zero).
var quotaKeys = map[string]bool{ // key -> whole number
	"producer_byte_rate":       true,
	"consumer_byte_rate":       true,
	"request_percentage":       false,
	"controller_mutation_rate": false,
}

// CheckQuota checks a quota key and value as stored: a known key, a value above zero, whole for
// the byte rates.
func CheckQuota(key, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return Refuse(kerr.InvalidRequest, "quota %s=%q is not a number", key, value)
	}
	return checkQuotaValue(key, v)
}

func checkQuotaValue(key string, v float64) error {
	whole, ok := quotaKeys[key]
	switch {
	case !ok:
		return Refuse(kerr.InvalidRequest, "unknown quota key %q (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate)", key)
	case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
		return Refuse(kerr.InvalidRequest, "quota %s=%v: a quota must be above zero (remove it instead)", key, v)
	case whole && (v != math.Trunc(v) || v > math.MaxInt64):
		return Refuse(kerr.InvalidRequest, "quota %s=%v must be a whole number of bytes per second", key, v)
	}
	return nil
}

// EncodeQuotaEntity is the one encoding of an entity: its components by type, as JSON.
func EncodeQuotaEntity(e []QuotaComponent) string {
	sorted := append([]QuotaComponent(nil), e...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Type < sorted[j].Type })
	b, _ := json.Marshal(sorted)
	return string(b)
}

// decodeQuotaEntity reads what EncodeQuotaEntity wrote; ok false for anything else.
func decodeQuotaEntity(s string) ([]QuotaComponent, bool) {
	var e []QuotaComponent
	if err := json.Unmarshal([]byte(s), &e); err != nil || checkEntity(e) != nil {
		return nil, false
	}
	return e, true
}

// checkEntity refuses what Kafka refuses of an entity (INVALID_REQUEST) and what the gateway
// does not serve: types other than user and client-id (ip quotas limit connection creation,
// which the gateway does not), a type named twice, no component.
func checkEntity(e []QuotaComponent) error {
	if len(e) == 0 {
		return Refuse(kerr.InvalidRequest, "a quota entity needs a user, a client-id, or both")
	}
	seen := map[string]bool{}
	for _, c := range e {
		switch {
		case c.Type != "user" && c.Type != "client-id":
			return Refuse(kerr.InvalidRequest, "quota entity type %q: the gateway serves user and client-id quotas", c.Type)
		case seen[c.Type]:
			return Refuse(kerr.InvalidRequest, "quota entity type %q named twice", c.Type)
		case c.Name != nil && *c.Name == "":
			return Refuse(kerr.InvalidRequest, "an empty %s name (null names the default)", c.Type)
		}
		seen[c.Type] = true
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
