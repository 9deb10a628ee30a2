package logfmt

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
)

// FuzzQuote checks the one promise the package makes about arbitrary text:
// whatever goes into a message, a value or a key, the record comes out as a
// single line that parses back to the same message and value, with a key that
// needs no quoting.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "plain", "a b", "a=b", `"`, "a\nb", "\x00", "\xff\xfe", "\u2028", `\"`, "é"} {
		f.Add(s, s)
	}
	var buf bytes.Buffer
	h := New(&buf, nil)
	f.Fuzz(func(t *testing.T, text, key string) {
		buf.Reset()
		r := record(slog.LevelInfo, text, slog.String("v", text), slog.String(key, text))
		if err := h.Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		if bytes.Count(buf.Bytes(), []byte{'\n'}) != 1 {
			t.Fatalf("not one line: %q", line)
		}
		pairs, err := parseLine(line)
		if err != nil {
			t.Fatalf("%q does not parse: %v", line, err)
		}
		if len(pairs) != 5 {
			t.Fatalf("%d fields in %q", len(pairs), line)
		}
		for i, want := range []string{slog.TimeKey, slog.LevelKey, slog.MessageKey, "v"} {
			if pairs[i].key != want {
				t.Fatalf("field %d is %q, want %q", i, pairs[i].key, want)
			}
		}
		if pairs[2].value != text || pairs[3].value != text || pairs[4].value != text {
			t.Fatalf("%q came back as %q / %q / %q", text, pairs[2].value, pairs[3].value, pairs[4].value)
		}
		if !validKey(pairs[4].key) {
			t.Fatalf("key %q written as %q", key, pairs[4].key)
		}
	})
}
