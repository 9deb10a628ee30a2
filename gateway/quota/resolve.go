package quota

import "strconv"

// Table is the fleet's quotas by key and entity, as Resolve reads them.
type Table map[string]map[Entity]float64

// TableOf reads the quotas as the store keeps them (entity encoding -> key -> decimal value),
// leaving out what does not decode or check.
func TableOf(stored map[string]map[string]string) Table {
	t := Table{}
	for enc, values := range stored {
		comps, ok := DecodeEntity(enc)
		if !ok {
			continue
		}
		e := EntityOf(comps)
		for k, text := range values {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil || CheckValue(k, v) != nil {
				continue
			}
			if t[k] == nil {
				t[k] = map[Entity]float64{}
			}
			t[k][e] = v
		}
	}
	return t
}

// Tags is what shares one measured rate: the user and the client id it is kept for, either
// empty when the quota found is not kept per that part (Kafka's metric tags).
type Tags struct {
	User, ClientID string
}

// Resolved is the quota that applies to a connection for one key.
type Resolved struct {
	Limit  float64
	Entity Entity // the entity the limit is kept for
	Tags   Tags   // what shares the rate
}

// Resolve finds the quota of key for a connection of user with client id clientID, in
// Kafka's order (doc.go); ok is false when none applies.
func (t Table) Resolve(key, user, clientID string) (Resolved, bool) {
	m := t[key]
	if len(m) == 0 {
		return Resolved{}, false
	}
	u := Name{Kind: Named, Value: user}
	c := Name{Kind: Named, Value: clientID}
	d := Name{Kind: Default}
	both := Tags{User: user, ClientID: clientID}
	userOnly := Tags{User: user}
	clientOnly := Tags{ClientID: clientID}
	for _, step := range [...]struct {
		e    Entity
		tags Tags
	}{
		{Entity{User: u, ClientID: c}, both},
		{Entity{User: u, ClientID: d}, both},
		{Entity{User: u}, userOnly},
		{Entity{User: d, ClientID: c}, both},
		{Entity{User: d, ClientID: d}, both},
		{Entity{User: d}, userOnly},
		{Entity{ClientID: c}, clientOnly},
		{Entity{ClientID: d}, clientOnly},
	} {
		if v, ok := m[step.e]; ok {
			return Resolved{Limit: v, Entity: step.e, Tags: step.tags}, true
		}
	}
	return Resolved{}, false
}
