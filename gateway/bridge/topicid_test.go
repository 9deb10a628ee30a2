package bridge

import (
	"encoding/hex"
	"testing"
)

// The vectors were computed apart from this code (SHA-256 of the documented layout, then the
// version and variant bits), so a change to the derivation, which would give every existing
// topic a new id, fails here.
func TestTopicIDVectors(t *testing.T) {
	cases := []struct {
		stream    string
		id        uint32
		createdAt uint64
		name      string
		want      string
	}{
		{"kafka", 1, 1767225600000002, "orders", "243295c2b7aa898489288c1ed2c36004"},
		{"kafka", 2, 1767225600000002, "orders", "3f9769f852c78e639aa6622596b196fe"},
		{"kafka", 1, 1767225600000003, "orders", "0d3eac019bb38d75ba26dc7eb8490f44"},
		{"other", 1, 1767225600000002, "orders", "71676b60b30786049dc85942d1401f88"},
	}
	for _, c := range cases {
		id := TopicID(c.stream, c.id, c.createdAt, c.name)
		if got := hex.EncodeToString(id[:]); got != c.want {
			t.Errorf("TopicID(%q, %d, %d, %q) = %s, want %s", c.stream, c.id, c.createdAt, c.name, got, c.want)
		}
		if id[6]>>4 != 8 || id[8]>>6 != 2 {
			t.Errorf("%x is not a version-8 UUID", id)
		}
	}
}
