package tui_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/tail"
	"github.com/iggy-kafka/iggy-kafka/topics"
	"github.com/iggy-kafka/iggy-kafka/tui"
)

// topicsSnap is a second reading of two topics: orders with three partitions read by two
// groups, audit with one partition nobody reads.
func topicsSnap() topics.Snapshot {
	prev := topics.Reading{At: now0.Add(-2 * time.Second), Partitions: []topics.Partition{
		{Topic: "orders", Partition: 0, End: 100, Bytes: 20_000, Records: 100},
		{Topic: "orders", Partition: 1, End: 80, Bytes: 16_000, Records: 80},
		{Topic: "orders", Partition: 2, End: 10, Bytes: 2000, Records: 10},
		{Topic: "audit", Partition: 0, End: 5_000_000, Bytes: 3 << 30, Records: 5_000_000},
	}, Commits: []claims.GroupOffset{
		{Group: "billing", Topic: "orders", Partition: 0, Offset: 90}, {Group: "billing", Topic: "orders", Partition: 1, Offset: 80},
		{Group: "shipping", Topic: "orders", Partition: 0, Offset: 50},
	}}
	now := topics.Reading{At: now0, Partitions: []topics.Partition{
		{Topic: "orders", Partition: 0, End: 140, Bytes: 28_000, Records: 140},
		{Topic: "orders", Partition: 1, End: 81, Bytes: 16_200, Records: 81},
		{Topic: "orders", Partition: 2, End: 10, Bytes: 2000, Records: 10},
		{Topic: "audit", Partition: 0, End: 5_030_000, Bytes: 3<<30 + 9<<20, Records: 5_030_000},
	}, Commits: []claims.GroupOffset{
		{Group: "billing", Topic: "orders", Partition: 0, Offset: 138}, {Group: "billing", Topic: "orders", Partition: 1, Offset: 81},
		{Group: "shipping", Topic: "orders", Partition: 0, Offset: 52},
	}}
	return topics.Measure(&prev, now)
}

// records are orders:0 from offset 100: JSON, text, a value with newlines, binary, a long one.
func records(from, n int) []tail.Record {
	var out []tail.Record
	for i := range n {
		off := from + i
		r := tail.Record{Topic: "orders", Partition: 0, Offset: int64(off), Timestamp: base.Add(time.Duration(off) * time.Second),
			Key: fmt.Sprintf("user-%d", off%7), KeyEncoding: tail.EncText, Headers: []tail.Header{}}
		switch off % 5 {
		case 0:
			r.Value, r.ValueEncoding = fmt.Sprintf(`{"id":%d,"item":"book","qty":2}`, off), tail.EncJSON
			r.Headers = append(r.Headers, tail.Header{Key: "trace", Value: fmt.Sprintf("t-%03d", off), Encoding: tail.EncText})
		case 1:
			r.Value, r.ValueEncoding = fmt.Sprintf("order %d shipped", off), tail.EncText
		case 2:
			r.Value, r.ValueEncoding = "line one\nline two", tail.EncText
			r.Headers = append(r.Headers, tail.Header{Key: "source", Value: "web", Encoding: tail.EncText}, tail.Header{Key: "v", Value: "2", Encoding: tail.EncJSON})
		case 3:
			r.Value, r.ValueEncoding = "00ff10fe", tail.EncHex
			r.Key, r.KeyEncoding = "", tail.EncNull
		case 4:
			r.Value, r.ValueEncoding = strings.Repeat("long value ", 30), tail.EncText
		}
		r.ValueBytes = len(r.Value)
		if r.ValueEncoding == tail.EncHex {
			r.ValueBytes = len(r.Value) / 2
		}
		out = append(out, r)
	}
	return out
}

// fakeStream hands out the batches put in it; a Next with none closes idle and waits.
type fakeStream struct {
	batches  chan []tail.Record
	idle     chan struct{}
	idleOnce sync.Once
	closed   chan struct{}
	once     sync.Once
}

func newFakeStream(batches ...[]tail.Record) *fakeStream {
	s := &fakeStream{batches: make(chan []tail.Record, 16), idle: make(chan struct{}), closed: make(chan struct{})}
	for _, b := range batches {
		s.batches <- b
	}
	return s
}

func (s *fakeStream) Next(ctx context.Context) ([]tail.Record, error) {
	select {
	case b := <-s.batches:
		return b, nil
	default:
	}
	s.idleOnce.Do(func() { close(s.idle) })
	select {
	case b := <-s.batches:
		return b, nil
	case <-s.closed:
		return nil, tail.ErrEnded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *fakeStream) Close() { s.once.Do(func() { close(s.closed) }) }

func (s *fakeStream) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// The tail and topics side of fakeActions: Tail opens the stream the test set, or a new one
// with records(100, 40) for a tail from the end.
type tailActions struct {
	streams []*fakeStream
	next    func(from string) *fakeStream
	// gate, when set, holds every Tail until it is closed.
	gate chan struct{}
}

func (f *fakeActions) Topics(context.Context) (topics.Snapshot, error) {
	f.call("topics")
	return topicsSnap(), f.topicsErr
}

func (f *fakeActions) Tail(_ context.Context, topic string, parts []int32, from string) (tui.RecordStream, error) {
	f.call(fmt.Sprintf("tail %s %v %q", topic, parts, from))
	f.mu.Lock()
	gate := f.tails.gate
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if from == "never" {
		return nil, errors.New(`"never" is neither an offset, an RFC 3339 time, a duration ago (10m), beginning nor end`)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var s *fakeStream
	if f.tails.next != nil {
		s = f.tails.next(from)
	} else {
		s = newFakeStream(records(100, 40))
	}
	f.tails.streams = append(f.tails.streams, s)
	return s, nil
}

func (f *fakeActions) stream(i int) *fakeStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tails.streams[i]
}

// drive sends msgs and runs every command they give, feeding the answers back, as the program
// does; a command waiting on a stream with nothing more is left waiting.
func drive(t *testing.T, act *fakeActions, m tea.Model, msgs ...tea.Msg) tea.Model {
	t.Helper()
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		res := make(chan tea.Msg, 1)
		go func() { res <- cmd() }()
		var msg tea.Msg
		select {
		case msg = <-res:
		case <-blockedAny(act):
			return
		}
		switch msg := msg.(type) {
		case nil, tea.QuitMsg:
		case tea.BatchMsg:
			for _, c := range msg {
				run(c)
			}
		default:
			var next tea.Cmd
			m, next = m.Update(msg)
			run(next)
		}
	}
	for _, msg := range msgs {
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		run(cmd)
	}
	return m
}

// blockedAny is closed once a Next of the newest stream waits with nothing to hand out (the
// goldens put every batch in before the view asks).
func blockedAny(act *fakeActions) <-chan struct{} {
	act.mu.Lock()
	defer act.mu.Unlock()
	if n := len(act.tails.streams); n > 0 {
		return act.tails.streams[n-1].idle
	}
	return nil
}

func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	return out
}

func cat(parts ...[]tea.Msg) []tea.Msg { return slices.Concat(parts...) }

func TestRecordsViewGolden(t *testing.T) {
	tailOrders0 := keys("t", "j", "j", "j", "enter")
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"topics", keys("t")},
		{"topicsfilter", cat(keys("t", "/"), typed("aud"), keys("enter"))},
		{"topicssorted", keys("t", "s", "s", "s", "S")},
		{"tail", tailOrders0},
		{"tailall", keys("t", "j", "j", "enter")},
		{"tailpaused", cat(tailOrders0, keys("p", "k", "k"))},
		{"tailsearch", cat(tailOrders0, keys("/"), typed("book"), keys("enter", "n"))},
		{"tailjump", cat(tailOrders0, keys(":"), typed("2026-12-01T09:01:50Z"))},
		{"tailhex", cat(tailOrders0, keys("x"))},
		{"record", cat(tailOrders0, keys("k", "k", "k", "k", "enter"))},
		{"recordtext", cat(tailOrders0, keys("enter"))},
	}
	sizes := []struct{ w, h int }{{80, 24}, {120, 35}, {60, 15}}
	for _, sz := range sizes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%dx%d/%s", sz.w, sz.h, c.name), func(t *testing.T) {
				act := &fakeActions{}
				m := drive(t, act, newConsole(act), append([]tea.Msg{tea.WindowSizeMsg{Width: sz.w, Height: sz.h}}, c.msgs...)...)
				v := m.View()
				checkSize(t, v, sz.w, sz.h)
				golden.Assert(t, fmt.Sprintf("Records_%dx%d_%s", sz.w, sz.h, c.name), []byte(v))
				m.(tui.Console).Close()
			})
		}
	}
}

// The tail pane through a real program: records arrive and are shown while following; p pauses
// (what arrives is held, not shown) and resumes (shown); : jumps with a new stream from the
// offset typed and closes the old one; a jump refused keeps the stream; / finds what is loaded
// and n moves between the matches; esc closes the stream.
func TestTailPaneTeatest(t *testing.T) {
	act := &fakeActions{}
	act.tails.next = func(from string) *fakeStream {
		if from == "110" {
			return newFakeStream(records(110, 3))
		}
		return newFakeStream(records(100, 10))
	}
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(120, 30))
	tm.Send(keyMsg("t"))
	waitFor(t, tm, "[TOPICS] 2 topics")
	for _, k := range []string{"j", "j", "j", "enter"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, "[TAIL orders:0] following · 10 records loaded, offsets 100-109")
	first := act.stream(0)
	first.batches <- records(110, 2)
	waitFor(t, tm, "12 records loaded, offsets 100-111")
	tm.Send(keyMsg("p"))
	waitFor(t, tm, "[TAIL orders:0] PAUSED")
	first.batches <- records(112, 3)
	waitFor(t, tm, "PAUSED (3 new records held) · 12 records loaded")
	tm.Send(keyMsg("p"))
	waitFor(t, tm, "following · 15 records loaded, offsets 100-114")
	tm.Send(keyMsg("/"))
	for _, r := range "SHIPPED" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("enter"))
	// 101, 106, 111 hold "shipped"; the cursor was on 114, so the newest at or above it.
	waitFor(t, tm, `search "SHIPPED": 3 of 3`)
	tm.Send(keyMsg("n"))
	waitFor(t, tm, `search "SHIPPED": 1 of 3`)
	tm.Send(keyMsg("N"))
	waitFor(t, tm, `search "SHIPPED": 3 of 3`)
	tm.Send(keyMsg(":"))
	for _, r := range "never" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, `tail of orders:0: "never" is neither an offset`)
	if first.isClosed() {
		t.Fatal("a refused jump closed the stream it replaces")
	}
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg(":"))
	for _, r := range "110" {
		tm.Send(keyMsg(string(r)))
	}
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "[TAIL orders:0] following · 3 records loaded, offsets 110-112 · from 110")
	tm.Send(keyMsg("esc"))
	waitFor(t, tm, "[TOPICS]")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(tui.Console)
	final.Close()
	if final.Screen() != "topics" {
		t.Fatalf("esc left screen %s", final.Screen())
	}
	if !first.isClosed() || !act.stream(1).isClosed() {
		t.Fatalf("streams left open: first %v, jump %v", first.isClosed(), act.stream(1).isClosed())
	}
	want := []string{"topics", `tail orders [0] ""`, `tail orders [0] "never"`, `tail orders [0] "110"`}
	if got := act.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
}

// The topics screen asks for a reading when it opens and then on the engine's beats, once
// every 2 s of the engine's clock, only while it is shown; a failed reading is said and the
// rows stay.
func TestTopicsAskedOnBeats(t *testing.T) {
	act := &fakeActions{}
	beat := func(d time.Duration) tea.Msg {
		at := now0.Add(d)
		return tui.StatusMsg{At: at, Store: "127.0.0.1:8090", StoreAnswered: at, StaleAfter: time.Second}
	}
	count := func() int {
		n := 0
		for _, c := range act.Calls() {
			if c == "topics" {
				n++
			}
		}
		return n
	}
	m := drive(t, act, newConsole(act), tea.WindowSizeMsg{Width: 120, Height: 35}, keyMsg("t"), beat(time.Second))
	if n := count(); n != 1 {
		t.Fatalf("%d readings after opening and a beat 1 s later, want 1", n)
	}
	act.mu.Lock()
	act.topicsErr = errors.New("list the topics of stream kafka: connection refused")
	act.mu.Unlock()
	m = drive(t, act, m, beat(2*time.Second))
	if n := count(); n != 2 {
		t.Fatalf("%d readings after a beat 2 s later, want 2", n)
	}
	if v := m.View(); !strings.Contains(v, "! list the topics of stream kafka: connection refused; the rows are as last read") || !strings.Contains(v, "all 3 231") {
		t.Fatalf("a failed reading not said, or the rows lost:\n%s", v)
	}
	m = drive(t, act, m, keyMsg("esc"), beat(10*time.Second))
	if n := count(); n != 2 || m.(tui.Console).Screen() != "main" {
		t.Fatalf("%d readings on screen %s after leaving the topics", n, m.(tui.Console).Screen())
	}
}

// The pane keeps the newest 10,000 records and says how many it let go.
func TestTailPaneLetsTheOldestGo(t *testing.T) {
	act := &fakeActions{}
	act.tails.next = func(string) *fakeStream { return newFakeStream(records(100, 10_050)) }
	m := drive(t, act, newConsole(act), append([]tea.Msg{tea.WindowSizeMsg{Width: 120, Height: 35}}, keys("t", "j", "j", "j", "enter")...)...)
	v := m.View()
	if !strings.Contains(v, "following · 10000 records loaded, offsets 150-10149 (50 older let go)") || !strings.Contains(v, "> 10149") {
		t.Fatalf("view:\n%s", v)
	}
	m.(tui.Console).Close()
}

// A pane left while its stream is being opened closes the stream when it comes, and reads
// nothing from it.
func TestTailPaneLeftWhileOpening(t *testing.T) {
	act := &fakeActions{}
	act.tails.gate = make(chan struct{})
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(120, 30))
	tm.Send(keyMsg("t"))
	waitFor(t, tm, "[TOPICS] 2 topics")
	for _, k := range []string{"j", "j", "j", "enter"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, "opening the tail of orders:0...")
	tm.Send(keyMsg("esc"))
	waitFor(t, tm, "enter tail (on a topic: all)")
	close(act.tails.gate)
	checkfor.Eventually(t, 5*time.Second, "the late stream closed", func() error {
		act.mu.Lock()
		defer act.mu.Unlock()
		if len(act.tails.streams) != 1 || !act.tails.streams[0].isClosed() {
			return fmt.Errorf("%d streams, the first closed: %v", len(act.tails.streams), len(act.tails.streams) == 1 && act.tails.streams[0].isClosed())
		}
		return nil
	})
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(tui.Console)
	if final.Screen() != "topics" {
		t.Fatalf("screen %s", final.Screen())
	}
	if len(act.stream(0).batches) != 1 {
		t.Fatal("the pane read from a stream it had left")
	}
}
