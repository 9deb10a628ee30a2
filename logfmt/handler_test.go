package logfmt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"
	"time"
)

var testTime = time.Date(2026, 11, 30, 9, 31, 39, 123456789, time.UTC)

// record builds a record with a fixed time so lines can be compared whole.
func record(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	r := slog.NewRecord(testTime, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

func handleLine(t *testing.T, h slog.Handler, r slog.Record) string {
	t.Helper()
	var buf bytes.Buffer
	hh := retarget(h, &buf)
	if err := hh.Handle(context.Background(), r); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return buf.String()
}

// retarget points h (and only h) at a fresh buffer without touching how it
// was built, so one handler chain can be checked line by line.
func retarget(h slog.Handler, buf *bytes.Buffer) slog.Handler {
	lh := h.(*Handler)
	c := *lh
	c.out = &output{w: buf}
	return &c
}

func TestHandleLine(t *testing.T) {
	h := New(nil, nil)
	tests := []struct {
		name string
		h    slog.Handler
		r    slog.Record
		want string
	}{
		{
			"brief example",
			h,
			record(slog.LevelInfo, "hello world", slog.String("key", "value")),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=\"hello world\" key=value\n",
		},
		{
			"plain kinds",
			h,
			record(slog.LevelWarn, "m", slog.Int("n", -3), slog.Bool("ok", false),
				slog.Duration("took", 1500*time.Microsecond), slog.Float64("f", 0.25),
				slog.Uint64("u", 7), slog.String("empty", "")),
			"time=2026-11-30T09:31:39.123Z level=WARN msg=m n=-3 ok=false took=1.5ms f=0.25 u=7 empty=\"\"\n",
		},
		{
			"error value",
			h,
			record(slog.LevelError, "failed", slog.Any("err", errors.New("connection reset"))),
			"time=2026-11-30T09:31:39.123Z level=ERROR msg=failed err=\"connection reset\"\n",
		},
		{
			"custom level",
			h,
			record(slog.LevelInfo+2, "m"),
			"time=2026-11-30T09:31:39.123Z level=INFO+2 msg=m\n",
		},
		{
			"empty message",
			h,
			record(slog.LevelInfo, ""),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=\"\"\n",
		},
		{
			"zero time omitted",
			h,
			slog.NewRecord(time.Time{}, slog.LevelInfo, "m", 0),
			"level=INFO msg=m\n",
		},
		{
			"non-UTC time written in UTC",
			h,
			slog.NewRecord(testTime.In(time.FixedZone("EST", -5*3600)), slog.LevelInfo, "m", 0),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m\n",
		},
		{
			"multi-line message",
			h,
			record(slog.LevelInfo, "line one\nline two"),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=\"line one\\nline two\"\n",
		},
		{
			"bad keys",
			h,
			record(slog.LevelInfo, "m", slog.String("a key", "v"), slog.Int("x=y", 1), slog.Int(`q"`, 2)),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m a_key=v x_y=1 q_=2\n",
		},
		{
			"groups",
			h.WithGroup("g").WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("h"),
			record(slog.LevelInfo, "m", slog.Int("b", 2), slog.Group("i", slog.Int("c", 3), slog.Group("", slog.Int("d", 4)))),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m g.a=1 g.h.b=2 g.h.i.c=3 g.h.i.d=4\n",
		},
		{
			"group name sanitized",
			h.WithGroup("my group"),
			record(slog.LevelInfo, "m", slog.Int("k", 1)),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m my_group.k=1\n",
		},
		{
			"empty group omitted",
			h.WithGroup("g"),
			record(slog.LevelInfo, "m", slog.Group("e")),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m\n",
		},
		{
			"log valuer",
			h,
			record(slog.LevelInfo, "m", slog.Any("user", secret("pw")), slog.Any("grp", groupValuer{})),
			"time=2026-11-30T09:31:39.123Z level=INFO msg=m user=\"<redacted 2 bytes>\" grp.x=1 grp.y=\"two words\"\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := handleLine(t, tc.h, tc.r)
			if got != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if _, err := parseLine(got); err != nil {
				t.Fatalf("output does not parse: %v", err)
			}
		})
	}
}

type secret string

func (s secret) LogValue() slog.Value {
	return slog.StringValue(fmt.Sprintf("<redacted %d bytes>", len(s)))
}

type groupValuer struct{}

func (groupValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("x", 1), slog.String("y", "two words"))
}

func TestWithAttrsDoesNotLeakBetweenSiblings(t *testing.T) {
	base := New(nil, nil).WithAttrs([]slog.Attr{slog.Int("a", 1)})
	left := base.WithAttrs([]slog.Attr{slog.Int("l", 2)})
	right := base.WithAttrs([]slog.Attr{slog.Int("r", 3)})
	r := record(slog.LevelInfo, "m")
	if got, want := handleLine(t, left, r), "time=2026-11-30T09:31:39.123Z level=INFO msg=m a=1 l=2\n"; got != want {
		t.Errorf("left: got %q want %q", got, want)
	}
	if got, want := handleLine(t, right, r), "time=2026-11-30T09:31:39.123Z level=INFO msg=m a=1 r=3\n"; got != want {
		t.Errorf("right: got %q want %q", got, want)
	}
	if got, want := handleLine(t, base, r), "time=2026-11-30T09:31:39.123Z level=INFO msg=m a=1\n"; got != want {
		t.Errorf("base: got %q want %q", got, want)
	}
}

func TestSlogtest(t *testing.T) {
	var buf bytes.Buffer
	h := New(&buf, nil)
	results := func() []map[string]any {
		var ms []map[string]any
		for line := range strings.Lines(buf.String()) {
			pairs, err := parseLine(line)
			if err != nil {
				t.Fatalf("parse %q: %v", line, err)
			}
			ms = append(ms, nest(pairs))
		}
		return ms
	}
	if err := slogtest.TestHandler(h, results); err != nil {
		t.Fatal(err)
	}
}

// nest turns dotted keys back into the nested maps slogtest expects.
func nest(pairs []pair) map[string]any {
	root := map[string]any{}
	for _, p := range pairs {
		m := root
		parts := strings.Split(p.key, ".")
		for _, g := range parts[:len(parts)-1] {
			sub, ok := m[g].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[g] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = p.value
	}
	return root
}

func TestLevelFiltering(t *testing.T) {
	var lv slog.LevelVar
	lv.Set(slog.LevelWarn)
	var buf bytes.Buffer
	logger := slog.New(New(&buf, &slog.HandlerOptions{Level: &lv}))
	logger.Info("dropped")
	logger.Warn("kept")
	lv.Set(slog.LevelDebug)
	logger.Debug("now kept")
	got := buf.String()
	if strings.Contains(got, "dropped") || !strings.Contains(got, "msg=kept") || !strings.Contains(got, `msg="now kept"`) {
		t.Fatalf("unexpected output:\n%s", got)
	}
	if n := strings.Count(got, "\n"); n != 2 {
		t.Fatalf("got %d lines, want 2:\n%s", n, got)
	}
	if New(&buf, nil).Enabled(context.Background(), slog.LevelDebug) {
		t.Fatal("default level must be Info")
	}
}

func TestReplaceAttr(t *testing.T) {
	type call struct {
		groups string
		key    string
	}
	var calls []call
	opts := &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			calls = append(calls, call{strings.Join(groups, "/"), a.Key})
			switch a.Key {
			case slog.TimeKey:
				return slog.Attr{}
			case slog.LevelKey:
				return slog.String("severity", strings.ToLower(a.Value.String()))
			case "password":
				return slog.String(a.Key, "***")
			case "drop":
				return slog.Attr{}
			}
			return a
		},
	}
	h := New(nil, opts).WithGroup("g").WithAttrs([]slog.Attr{slog.String("password", "hunter2")})
	r := record(slog.LevelWarn, "m", slog.Group("sub", slog.Int("drop", 1), slog.Int("keep", 2)), slog.Int("top", 3))
	got := handleLine(t, h, r)
	want := "severity=warn msg=m g.password=*** g.sub.keep=2 g.top=3\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	wantCalls := []call{
		{"g", "password"},
		{"", slog.TimeKey}, {"", slog.LevelKey}, {"", slog.MessageKey},
		{"g/sub", "drop"}, {"g/sub", "keep"}, {"g", "top"},
	}
	if !slices.Equal(calls, wantCalls) {
		t.Fatalf("ReplaceAttr calls:\n got %v\nwant %v", calls, wantCalls)
	}
}

func TestReplaceAttrKeepsRecordTimeFormat(t *testing.T) {
	h := New(nil, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { return a }})
	got := handleLine(t, h, record(slog.LevelInfo, "m", slog.Time("at", testTime)))
	want := "time=2026-11-30T09:31:39.123Z level=INFO msg=m at=2026-11-30T09:31:39.123456789Z\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestAllBuiltinsDropped(t *testing.T) {
	h := New(nil, &slog.HandlerOptions{ReplaceAttr: func(g []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey, slog.LevelKey, slog.MessageKey:
			return slog.Attr{}
		}
		return a
	}})
	if got := handleLine(t, h.WithAttrs([]slog.Attr{slog.Int("a", 1)}), record(slog.LevelInfo, "m")); got != "a=1\n" {
		t.Fatalf("got %q", got)
	}
}

func TestAddSource(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(New(&buf, &slog.HandlerOptions{AddSource: true}))
	logger.Info("here")
	pairs, err := parseLine(buf.String())
	if err != nil {
		t.Fatalf("parse %q: %v", buf.String(), err)
	}
	src, ok := lookup(pairs, slog.SourceKey)
	if !ok || !strings.Contains(src, "handler_test.go:") {
		t.Fatalf("source = %q in %q", src, buf.String())
	}
	keys := make([]string, len(pairs))
	for i, p := range pairs {
		keys[i] = p.key
	}
	if want := []string{"time", "level", "source", "msg"}; !slices.Equal(keys, want) {
		t.Fatalf("keys %v, want %v", keys, want)
	}
}

func TestSourceOmittedWithoutPC(t *testing.T) {
	h := New(nil, &slog.HandlerOptions{AddSource: true})
	if got := handleLine(t, h, record(slog.LevelInfo, "m")); strings.Contains(got, "source=") {
		t.Fatalf("got %q", got)
	}
}

// lineWriter records each Write call separately.
type lineWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestConcurrentWritesAreWholeLines(t *testing.T) {
	w := &lineWriter{}
	base := New(w, nil)
	const goroutines, perG = 8, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		// Derived handlers must share the lock of the one they came from.
		logger := slog.New(base.WithAttrs([]slog.Attr{slog.Int("g", g)}))
		wg.Go(func() {
			for i := range perG {
				logger.Info("concurrent message", "i", i, "text", strings.Repeat("x", i))
			}
		})
	}
	wg.Wait()
	if len(w.writes) != goroutines*perG {
		t.Fatalf("%d writes, want %d", len(w.writes), goroutines*perG)
	}
	seen := map[string]int{}
	for _, line := range w.writes {
		pairs, err := parseLine(line)
		if err != nil {
			t.Fatalf("write %q is not one whole line: %v", line, err)
		}
		g, _ := lookup(pairs, "g")
		seen[g]++
	}
	if len(seen) != goroutines {
		t.Fatalf("lines per goroutine: %v", seen)
	}
	for _, g := range slices.Sorted(maps.Keys(seen)) {
		if seen[g] != perG {
			t.Fatalf("goroutine %s wrote %d lines, want %d", g, seen[g], perG)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorReturned(t *testing.T) {
	err := New(failWriter{}, nil).Handle(context.Background(), record(slog.LevelInfo, "m"))
	if err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
}

func TestHugeRecord(t *testing.T) {
	var buf bytes.Buffer
	h := New(&buf, nil)
	big := strings.Repeat("y z", 100_000)
	if err := h.Handle(context.Background(), record(slog.LevelInfo, "m", slog.String("big", big))); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	// The next record must not carry anything over from the big one.
	if err := h.Handle(context.Background(), record(slog.LevelInfo, "small")); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "time=2026-11-30T09:31:39.123Z level=INFO msg=small\n"; got != want {
		t.Fatalf("got %q", got)
	}
}

func TestReplaceAttrTopLevelGroupsAreNil(t *testing.T) {
	var nonNil int
	h := New(nil, &slog.HandlerOptions{ReplaceAttr: func(g []string, a slog.Attr) slog.Attr {
		if a.Key == "top" && g != nil {
			nonNil++
		}
		return a
	}})
	// Warm the pool with a grouped record first: its groups slice must not
	// leak into the next record as a non-nil empty slice.
	handleLine(t, h, record(slog.LevelInfo, "m", slog.Group("g", slog.Int("x", 1))))
	handleLine(t, h, record(slog.LevelInfo, "m", slog.Int("top", 1)))
	handleLine(t, h.WithAttrs([]slog.Attr{slog.Int("top", 2)}), record(slog.LevelInfo, "m"))
	if nonNil != 0 {
		t.Fatalf("ReplaceAttr saw non-nil groups for a top-level attr %d times", nonNil)
	}
}
