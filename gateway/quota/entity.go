package quota

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// The client quota keys Kafka knows.
const (
	ProducerByteRate       = "producer_byte_rate"
	ConsumerByteRate       = "consumer_byte_rate"
	RequestPercentage      = "request_percentage"
	ControllerMutationRate = "controller_mutation_rate"
)

// keys are the quota keys, true for those whose value is a whole number (the byte rates).
var keys = map[string]bool{
	ProducerByteRate:       true,
	ConsumerByteRate:       true,
	RequestPercentage:      false,
	ControllerMutationRate: false,
}

// Known reports whether key is one of Kafka's client quota keys.
func Known(key string) bool {
	_, ok := keys[key]
	return ok
}

// CheckValue checks a quota as kept: a known key and a value above zero (a quota is removed,
// not set to zero), whole for the byte rates.
func CheckValue(key string, v float64) error {
	whole, ok := keys[key]
	switch {
	case !ok:
		return fmt.Errorf("unknown quota key %q (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate)", key)
	case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
		return fmt.Errorf("quota %s=%v: a quota must be above zero (remove it instead)", key, v)
	case whole && (v != math.Trunc(v) || v > math.MaxInt64):
		return fmt.Errorf("quota %s=%v must be a whole number of bytes per second", key, v)
	}
	return nil
}

// CheckText checks a quota as stored, its value as a decimal string.
func CheckText(key, value string) error {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("quota %s=%q is not a number", key, value)
	}
	return CheckValue(key, v)
}

// Component is one part of a quota entity as Kafka's requests name it: a type ("user" or
// "client-id") and a name, nil for the type's default.
type Component struct {
	Type string  `json:"type"`
	Name *string `json:"name,omitempty"`
}

// The entity types the gateway serves.
const (
	TypeUser     = "user"
	TypeClientID = "client-id"
)

// CheckEntity refuses what Kafka refuses of an entity and what the gateway does not serve:
// types other than user and client-id (ip quotas limit connection creation, which the gateway
// does not), a type named twice, an empty name, no component.
func CheckEntity(e []Component) error {
	if len(e) == 0 {
		return errors.New("a quota entity needs a user, a client-id, or both")
	}
	seen := map[string]bool{}
	for _, c := range e {
		switch {
		case c.Type != TypeUser && c.Type != TypeClientID:
			return fmt.Errorf("quota entity type %q: the gateway serves user and client-id quotas", c.Type)
		case seen[c.Type]:
			return fmt.Errorf("quota entity type %q named twice", c.Type)
		case c.Name != nil && *c.Name == "":
			return fmt.Errorf("an empty %s name (null names the default)", c.Type)
		}
		seen[c.Type] = true
	}
	return nil
}

// EncodeEntity is the one encoding of an entity, the key its quotas are stored under: its
// components sorted by type, as JSON.
func EncodeEntity(e []Component) string {
	sorted := append([]Component(nil), e...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Type < sorted[j].Type })
	b, _ := json.Marshal(sorted)
	return string(b)
}

// DecodeEntity reads what EncodeEntity wrote; ok false for anything else, or for an entity
// CheckEntity refuses.
func DecodeEntity(s string) ([]Component, bool) {
	var e []Component
	if err := json.Unmarshal([]byte(s), &e); err != nil || CheckEntity(e) != nil {
		return nil, false
	}
	return e, true
}

// Name is one side of an Entity: absent, a name, or the type's default.
type Name struct {
	Kind  NameKind
	Value string // for Named
}

// NameKind says what a Name is.
type NameKind uint8

const (
	Absent NameKind = iota
	Named
	Default
)

// Entity is what a quota is kept for, comparable, as Resolve looks it up.
type Entity struct {
	User, ClientID Name
}

// EntityOf turns checked components into an Entity.
func EntityOf(e []Component) Entity {
	var out Entity
	for _, c := range e {
		n := Name{Kind: Default}
		if c.Name != nil {
			n = Name{Kind: Named, Value: *c.Name}
		}
		if c.Type == TypeUser {
			out.User = n
		} else {
			out.ClientID = n
		}
	}
	return out
}

// String is the entity as Kafka's configuration paths name it, for logs and tests.
func (e Entity) String() string {
	s := ""
	if e.User.Kind != Absent {
		s = "users/" + e.User.String()
	}
	if e.ClientID.Kind != Absent {
		if s != "" {
			s += "/"
		}
		s += "clients/" + e.ClientID.String()
	}
	return s
}

func (n Name) String() string {
	if n.Kind == Default {
		return "<default>"
	}
	return n.Value
}
