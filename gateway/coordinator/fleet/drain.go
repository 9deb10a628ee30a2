package fleet

import (
	"encoding/json"
	"errors"
	"time"
)

// DrainRequest is one message of DrainsTopic, a JSON object: {"node": N, "undo": false,
// "time": "RFC 3339"}. "node" is required and numeric; "undo" and "time" are optional; other
// fields are ignored so that operators' tools may add some. The field names are an interface.
type DrainRequest struct {
	Node int32     `json:"node"`
	Undo bool      `json:"undo"`
	Time time.Time `json:"time"`
}

// ErrDrainRequest is a DrainsTopic message that is not a drain request; every reader skips it.
var ErrDrainRequest = errors.New("fleet: malformed drain request (want a JSON object with a numeric \"node\")")

// EncodeDrainRequest is the message an operator appends.
func EncodeDrainRequest(r DrainRequest) []byte {
	b, _ := json.Marshal(r) // a struct of an int, a bool and a time always encodes
	return b
}

// DecodeDrainRequest reads one DrainsTopic message. A message without a numeric "node" is
// ErrDrainRequest, never a request for node 0.
func DecodeDrainRequest(b []byte) (DrainRequest, error) {
	var w struct {
		Node *int32     `json:"node"`
		Undo *bool      `json:"undo"`
		Time *time.Time `json:"time"`
	}
	if err := json.Unmarshal(b, &w); err != nil || w.Node == nil {
		return DrainRequest{}, ErrDrainRequest
	}
	r := DrainRequest{Node: *w.Node}
	if w.Undo != nil {
		r.Undo = *w.Undo
	}
	if w.Time != nil {
		r.Time = w.Time.UTC()
	}
	return r, nil
}
