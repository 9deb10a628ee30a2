package logfmt

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// randomString draws from an alphabet heavy in the characters that matter to
// logfmt, mixed with arbitrary bytes (so invalid UTF-8 too) and runes.
func randomString(rng *rand.Rand) string {
	const tricky = " =\"\\\n\r\t\x00\x1b\x7f.:,{}"
	n := rng.IntN(24)
	var b strings.Builder
	for range n {
		switch rng.IntN(4) {
		case 0:
			b.WriteByte(tricky[rng.IntN(len(tricky))])
		case 1:
			b.WriteByte(byte(rng.IntN(256)))
		case 2:
			b.WriteRune(rune(rng.IntN(0x11000)))
		default:
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	return b.String()
}

func TestRoundTripRandomStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var buf bytes.Buffer
	h := New(&buf, nil)
	for i := range 20000 {
		msg, val, key := randomString(rng), randomString(rng), randomString(rng)
		buf.Reset()
		r := record(slog.LevelInfo, msg, slog.String("v", val), slog.String(key, "k"))
		if err := h.Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		pairs, err := parseLine(line)
		if err != nil {
			t.Fatalf("case %d: %q does not parse: %v", i, line, err)
		}
		if len(pairs) != 5 {
			t.Fatalf("case %d: %d fields in %q", i, len(pairs), line)
		}
		if got := pairs[2].value; got != msg {
			t.Fatalf("case %d: msg %q came back as %q", i, msg, got)
		}
		if got := pairs[3].value; got != val {
			t.Fatalf("case %d: value %q came back as %q", i, val, got)
		}
		if k := pairs[4].key; !validKey(k) || utf8.RuneCountInString(k) != max(1, runesOrBadBytes(key)) {
			t.Fatalf("case %d: key %q written as %q", i, key, k)
		}
	}
}

// validKey reports whether k can be written bare.
func validKey(k string) bool {
	return k != "" && !needsQuote(k)
}

// runesOrBadBytes counts what appendKey replaces one for one.
func runesOrBadBytes(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
