package logfmt

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", `hello`},
		{"empty", "", `""`},
		{"space", "hello world", `"hello world"`},
		{"leading space", " x", `" x"`},
		{"equals", "a=b", `"a=b"`},
		{"quote", `say "hi"`, `"say \"hi\""`},
		{"lone quote", `"`, `"\""`},
		{"newline", "a\nb", `"a\nb"`},
		{"carriage return", "a\rb", `"a\rb"`},
		{"tab", "a\tb", `"a\tb"`},
		{"nul", "a\x00b", `"a\x00b"`},
		{"escape char", "\x1b[31m", `"\x1b[31m"`},
		{"del", "a\x7fb", `"a\x7fb"`},
		{"invalid utf8", "a\xffb", `"a\xffb"`},
		{"truncated utf8", "caf\xc3", `"caf\xc3"`},
		{"printable unicode stays bare", "café", `café`},
		{"cjk stays bare", "日本", `日本`},
		{"non-breaking space", "a\u00a0b", `"a\u00a0b"`},
		{"line separator", "a\u2028b", `"a\u2028b"`},
		{"zero width space", "a\u200bb", `"a\u200bb"`},
		{"backslash stays bare", `C:\dir`, `C:\dir`},
		{"backslash quoted with space", `C:\my dir`, `"C:\\my dir"`},
		{"url", "http://h:1/p?q=1", `"http://h:1/p?q=1"`},
		{"punctuation", "a.b-c_d/e:f,g", `a.b-c_d/e:f,g`},
		{"replacement char itself is printable", "\uFFFD", "\uFFFD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(appendString(nil, tc.in))
			if got != tc.want {
				t.Fatalf("appendString(%q) = %s, want %s", tc.in, got, tc.want)
			}
			back := got
			if len(got) > 0 && got[0] == '"' {
				var err error
				if back, err = strconv.Unquote(got); err != nil {
					t.Fatalf("unquote %s: %v", got, err)
				}
			}
			if back != tc.in {
				t.Fatalf("round trip of %q gave %q", tc.in, back)
			}
		})
	}
}

func TestAppendKey(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"key", "key"},
		{"", "_"},
		{"a b", "a_b"},
		{"a=b", "a_b"},
		{`a"b`, "a_b"},
		{"a\nb", "a_b"},
		{"a\xffb", "a_b"},
		{"a\u00a0b", "a_b"},
		{"dotted.key", "dotted.key"},
		{"clé", "clé"},
		{"  ", "__"},
	}
	for _, tc := range tests {
		if got := string(appendKey(nil, tc.in)); got != tc.want {
			t.Errorf("appendKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendDurationMatchesString(t *testing.T) {
	fixed := []time.Duration{
		0, 1, -1, 999, time.Microsecond, 1500, time.Millisecond, 1500 * time.Microsecond,
		time.Second, 1500 * time.Millisecond, time.Minute, 90 * time.Second, time.Hour,
		time.Hour + time.Nanosecond, 26*time.Hour + 3*time.Minute + 4*time.Second + 5,
		1001 * time.Microsecond, 1000001, 100 * time.Millisecond,
		math.MaxInt64, math.MinInt64, math.MinInt64 + 1,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		// Spread values over every unit, not just the large ones a uniform
		// draw would give.
		shift := rng.UintN(63)
		d := time.Duration(rng.Int64() >> shift)
		fixed = append(fixed, d)
	}
	for _, d := range fixed {
		if got, want := string(appendDuration(nil, d)), d.String(); got != want {
			t.Fatalf("appendDuration(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

type textOK struct{}

func (textOK) MarshalText() ([]byte, error) { return []byte("as text"), nil }

type textErr struct{}

func (textErr) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

type textPanic struct{}

func (textPanic) MarshalText() ([]byte, error) { panic("boom") }

type ptrErr struct{ msg string }

func (e *ptrErr) Error() string { return e.msg }

type point struct{ X, Y int }

func TestAppendValue(t *testing.T) {
	var nilErr *ptrErr
	when := time.Date(2026, 11, 30, 9, 31, 39, 123456789, time.FixedZone("X", 3600))
	tests := []struct {
		name string
		v    slog.Value
		want string
	}{
		{"int", slog.IntValue(-42), "-42"},
		{"uint", slog.Uint64Value(math.MaxUint64), "18446744073709551615"},
		{"float", slog.Float64Value(1.5), "1.5"},
		{"float big", slog.Float64Value(1e21), "1e+21"},
		{"nan", slog.Float64Value(math.NaN()), "NaN"},
		{"inf", slog.Float64Value(math.Inf(-1)), "-Inf"},
		{"bool", slog.BoolValue(true), "true"},
		{"duration", slog.DurationValue(1500 * time.Millisecond), "1.5s"},
		{"time", slog.TimeValue(when), "2026-11-30T09:31:39.123456789+01:00"},
		{"error", slog.AnyValue(errors.New("dial tcp: refused")), `"dial tcp: refused"`},
		{"error one word", slog.AnyValue(errors.New("EOF")), `EOF`},
		{"nil error pointer", slog.AnyValue(error(nilErr)), `<nil>`},
		{"nil", slog.AnyValue(nil), `<nil>`},
		{"text marshaler", slog.AnyValue(textOK{}), `"as text"`},
		{"text marshaler error", slog.AnyValue(textErr{}), `"!ERROR: no text"`},
		{"text marshaler panic", slog.AnyValue(textPanic{}), `"!PANIC: boom"`},
		{"bytes", slog.AnyValue([]byte("a b")), `"a b"`},
		{"struct", slog.AnyValue(point{1, 2}), `"{X:1 Y:2}"`},
		{"level", slog.AnyValue(slog.LevelWarn), `WARN`},
		{"source", slog.AnyValue(&slog.Source{File: "/a/b.go", Line: 7}), `/a/b.go:7`},
		{"source with space", slog.AnyValue(&slog.Source{File: "/my dir/b.go", Line: 7}), `"/my dir/b.go:7"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendValue(nil, tc.v)); got != tc.want {
				t.Fatalf("appendValue = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNeedsQuoteAgreesWithQuoting(t *testing.T) {
	// Whatever is written bare must be free of every byte a reader treats
	// as syntax; check it over every single byte and every short rune.
	for c := range 256 {
		s := string([]byte{'a', byte(c), 'b'})
		out := string(appendString(nil, s))
		if out[0] == '"' {
			continue
		}
		if c <= ' ' || c == '=' || c == '"' || c >= 0x7f {
			t.Errorf("byte %#x written bare: %q", c, out)
		}
	}
	for r := rune(0); r < 0x3000; r++ {
		s := fmt.Sprintf("a%cb", r)
		if out := string(appendString(nil, s)); out[0] != '"' && !strconv.IsPrint(r) {
			t.Errorf("rune %U written bare", r)
		}
	}
}
