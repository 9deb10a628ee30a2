package fleet

import (
	"fmt"
	"testing"
)

func TestDecodeDrainRequest(t *testing.T) {
	for in, want := range map[string]string{
		`{"node":2,"undo":false,"time":"2025-01-02T03:04:05Z"}`: "2 false <nil>",
		`{"node":2,"undo":true,"extra":[1]}`:                    "2 true <nil>",
		`{"node":0}`:                                            "0 false <nil>",
		`{"undo":true}`:                                         "bad",
		`{"node":"2"}`:                                          "bad",
		`{"node":2.5}`:                                          "bad",
		`{"node":4294967296}`:                                   "bad",
		`{"node":2,"time":"yesterday"}`:                         "bad",
		`{"node":2} {"node":3}`:                                 "bad",
		`null`:                                                  "bad",
		`[]`:                                                    "bad",
		``:                                                      "bad",
	} {
		r, err := DecodeDrainRequest([]byte(in))
		got := fmt.Sprint(r.Node, r.Undo, err)
		if err != nil {
			got = "bad"
		}
		if got != want {
			t.Errorf("%q decoded as %s, want %s", in, got, want)
		}
	}
}

func FuzzDrainRequest(f *testing.F) {
	f.Add([]byte(`{"node":2,"undo":false,"time":"2025-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"node":-1,"undo":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeDrainRequest(b)
		if err != nil {
			return
		}
		again, err := DecodeDrainRequest(EncodeDrainRequest(r))
		if err != nil || again != r {
			t.Fatalf("%q: %+v, re-encoded %+v %v", b, r, again, err)
		}
	})
}
