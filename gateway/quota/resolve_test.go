package quota

import (
	"testing"
)

func named(s string) Name { return Name{Kind: Named, Value: s} }

var dflt = Name{Kind: Default}

// TestResolvePrecedence takes Kafka's eight levels away one at a time, from the most specific:
// each time the next one applies, with the tags Kafka shares its rate by.
func TestResolvePrecedence(t *testing.T) {
	levels := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{User: named("alice"), ClientID: named("app")}, Tags{"alice", "app"}},
		{Entity{User: named("alice"), ClientID: dflt}, Tags{"alice", "app"}},
		{Entity{User: named("alice")}, Tags{"alice", ""}},
		{Entity{User: dflt, ClientID: named("app")}, Tags{"alice", "app"}},
		{Entity{User: dflt, ClientID: dflt}, Tags{"alice", "app"}},
		{Entity{User: dflt}, Tags{"alice", ""}},
		{Entity{ClientID: named("app")}, Tags{"", "app"}},
		{Entity{ClientID: dflt}, Tags{"", "app"}},
	}
	// Entities of other names never apply to alice/app.
	others := []Entity{
		{User: named("bob"), ClientID: named("app")},
		{User: named("alice"), ClientID: named("other")},
		{User: named("bob")},
		{ClientID: named("other")},
		{User: dflt, ClientID: named("other")},
	}
	m := map[Entity]float64{}
	for i, l := range levels {
		m[l.e] = float64(100 + i)
	}
	for i, e := range others {
		m[e] = float64(900 + i)
	}
	table := Table{ProducerByteRate: m}
	for i, l := range levels {
		got, ok := table.Resolve(ProducerByteRate, "alice", "app")
		if !ok || got.Entity != l.e || got.Limit != float64(100+i) || got.Tags != l.tags {
			t.Fatalf("level %d (%s): got %+v %v, want %s limit %d tags %+v", i+1, l.e, got, ok, l.e, 100+i, l.tags)
		}
		delete(m, l.e)
	}
	if got, ok := table.Resolve(ProducerByteRate, "alice", "app"); ok {
		t.Fatalf("no level left for alice/app, got %+v", got)
	}
}

// TestResolvePerKey: each key has its own precedence: a user's producer quota does not hide
// the default client's consumer quota.
func TestResolvePerKey(t *testing.T) {
	a := "alice"
	table := TableOf(map[string]map[string]string{
		EncodeEntity([]Component{{Type: TypeUser, Name: &a}}): {ProducerByteRate: "1000"},
		EncodeEntity([]Component{{Type: TypeClientID}}):       {ConsumerByteRate: "2000", RequestPercentage: "12.5"},
		`not an entity`: {ProducerByteRate: "1"},
		EncodeEntity([]Component{{Type: TypeUser}}): {ProducerByteRate: "-1", "bogus": "3"},
	})
	if got, ok := table.Resolve(ProducerByteRate, "alice", "x"); !ok || got.Limit != 1000 || got.Tags != (Tags{User: "alice"}) {
		t.Fatalf("producer: %+v %v", got, ok)
	}
	if got, ok := table.Resolve(ConsumerByteRate, "alice", "x"); !ok || got.Limit != 2000 || got.Tags != (Tags{ClientID: "x"}) {
		t.Fatalf("consumer: %+v %v", got, ok)
	}
	if got, ok := table.Resolve(RequestPercentage, "bob", "y"); !ok || got.Limit != 12.5 {
		t.Fatalf("request: %+v %v", got, ok)
	}
	if got, ok := table.Resolve(ProducerByteRate, "bob", "y"); ok {
		t.Fatalf("a refused value (-1) applies: %+v", got)
	}
}

func TestEntityEncoding(t *testing.T) {
	a := "alice"
	e := []Component{{Type: TypeClientID}, {Type: TypeUser, Name: &a}}
	enc := EncodeEntity(e)
	if enc != `[{"type":"client-id"},{"type":"user","name":"alice"}]` {
		t.Fatalf("encoding changed: %s", enc)
	}
	back, ok := DecodeEntity(enc)
	if !ok || EntityOf(back) != (Entity{User: named("alice"), ClientID: dflt}) {
		t.Fatalf("decode: %+v %v", back, ok)
	}
	for _, bad := range []string{`[]`, `[{"type":"ip"}]`, `[{"type":"user"},{"type":"user"}]`, `[{"type":"user","name":""}]`, `{`} {
		if _, ok := DecodeEntity(bad); ok {
			t.Errorf("%s decoded", bad)
		}
	}
}
