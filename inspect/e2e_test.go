package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func TestInspectRowsAndGroupFilter(t *testing.T) {
	e := logtest.Start(t)
	g := testlog.GroupIn(4, "g")
	other := testlog.GroupIn(4, "other")
	e.Put(4, testlog.Claim(1, 1, e.At(0)), testlog.Commit(1, g, "t", 0, 1, e.At(1)), testlog.Commit(1, other, "t", 0, 1, e.At(2)), testlog.Claim(2, 2, e.At(3)), testlog.Commit(1, g, "t", 0, 2, e.At(4)))
	var rows []inspect.RecordRow
	q := inspect.Query{Group: g}
	if err := inspect.Inspect(e.Ctx, e.Log, q, func(r inspect.RecordRow) error { rows = append(rows, r); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[0].Valid || rows[1].Valid || rows[1].Offset != 4 || rows[0].Fields.String() != "topic=t partition=0 offset=1 leader_epoch=-1" {
		t.Fatalf("rows %+v", rows)
	}
	rows = nil
	q = inspect.Query{Partitions: []int{4}, From: logread.Position{Offset: 1, HasOffset: true}, To: logread.Position{Time: e.At(3)}}
	if err := inspect.Inspect(e.Ctx, e.Log, q, func(r inspect.RecordRow) error { rows = append(rows, r); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Offset != 1 || rows[2].Type != "claim" {
		t.Fatalf("range rows %+v", rows)
	}
}

// inspect --follow prints a record once it is appended, after the ones already there.
func TestInspectFollow(t *testing.T) {
	e := logtest.Start(t)
	g := testlog.GroupIn(11, "g")
	e.Put(11, testlog.Claim(1, 1, e.At(0)))
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	rows := make(chan inspect.RecordRow, 16)
	caught := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- inspect.Inspect(ctx, e.Log, inspect.Query{Group: g, Follow: true}, func(r inspect.RecordRow) error { rows <- r; return nil }, func() {
			select {
			case caught <- struct{}{}:
			default:
			}
		})
	}()
	checkfor.Eventually(t, 10*time.Second, "caught up", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	e.Put(11, testlog.Commit(1, testlog.GroupIn(11, "other"), "t", 0, 1, e.At(1)), testlog.Commit(1, g, "t", 0, 3, e.At(2)), testlog.Commit(2, g, "t", 0, 4, e.At(3)))
	var got []inspect.RecordRow
	checkfor.Eventually(t, 10*time.Second, "followed rows", func() error {
		for {
			select {
			case r := <-rows:
				got = append(got, r)
			default:
				if len(got) < 2 {
					return fmt.Errorf("%d rows", len(got))
				}
				return nil
			}
		}
	})
	if len(got) != 2 || got[0].Offset != 2 || !got[0].Valid || got[1].Offset != 3 || got[1].Valid {
		t.Fatalf("rows %+v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// followRows runs a follow of q until stop and gathers its rows; caught is signalled each time
// it reaches the end of the log.
func followRows(t *testing.T, e *logtest.Env, q inspect.Query) (rows chan inspect.RecordRow, caught chan struct{}, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	rows, caught = make(chan inspect.RecordRow, 64), make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- inspect.Inspect(ctx, e.Log, q, func(r inspect.RecordRow) error { rows <- r; return nil }, func() {
			select {
			case caught <- struct{}{}:
			default:
			}
		})
	}()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(cancel)
	checkfor.Eventually(t, 10*time.Second, "caught up", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	return rows, caught, stop
}

// gather takes the rows out of ch until it has at least n.
func gather(t *testing.T, ch chan inspect.RecordRow, n int) []inspect.RecordRow {
	t.Helper()
	var got []inspect.RecordRow
	checkfor.Eventually(t, 10*time.Second, fmt.Sprintf("%d rows", n), func() error {
		for {
			select {
			case r := <-ch:
				got = append(got, r)
			default:
				if len(got) < n {
					return fmt.Errorf("%d rows", len(got))
				}
				return nil
			}
		}
	})
	return got
}

// A follow starts at the end of the log: it shows only the records appended after it started,
// judged valid by the claims before it. From the beginning it shows the history first.
func TestInspectFollowStartsAtTail(t *testing.T) {
	e := logtest.Start(t)
	g := testlog.GroupIn(8, "g")
	e.Put(8, testlog.Claim(1, 1, e.At(0)), testlog.Commit(1, g, "t", 0, 1, e.At(1)), testlog.Claim(2, 2, e.At(2)))
	e.Put(9, testlog.Claim(1, 3, e.At(0)))
	rows, caught, stop := followRows(t, e, inspect.Query{Follow: true})
	e.Put(8, testlog.Commit(1, g, "t", 0, 2, e.At(3)), testlog.Commit(2, g, "t", 0, 3, e.At(4)))
	got := gather(t, rows, 2)
	// Once the follower has caught up again after them, every row it will show is out.
	select {
	case <-caught:
	default:
	}
	checkfor.Eventually(t, 10*time.Second, "caught up after the new records", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	got = append(got, gather(t, rows, 0)...)
	stop()
	if len(got) != 2 || got[0].Partition != 8 || got[0].Offset != 3 || got[0].Valid || got[1].Offset != 4 || !got[1].Valid {
		t.Fatalf("followed from the end: %+v", got)
	}

	from, fromEnd, err := inspect.ParseFrom("beginning", e.At(0))
	if err != nil || fromEnd {
		t.Fatal(err)
	}
	rows, _, stop = followRows(t, e, inspect.Query{Follow: true, From: from, Partitions: []int{8}})
	got = gather(t, rows, 5)
	stop()
	if len(got) != 5 || got[0].Offset != 0 || got[4].Offset != 4 {
		t.Fatalf("followed from the beginning: %+v", got)
	}
}

func TestParseFrom(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in      string
		from    logread.Position
		fromEnd bool
	}{
		{"", logread.Position{}, false},
		{"beginning", logread.Position{HasOffset: true}, false},
		{"start", logread.Position{HasOffset: true}, false},
		{"end", logread.Position{}, true},
		{"7", logread.Position{Offset: 7, HasOffset: true}, false},
		{"10m", logread.Position{Time: now.Add(-10 * time.Minute)}, false},
	} {
		from, fromEnd, err := inspect.ParseFrom(c.in, now)
		if err != nil || from != c.from || fromEnd != c.fromEnd {
			t.Errorf("ParseFrom(%q) = %+v %v %v", c.in, from, fromEnd, err)
		}
	}
	if _, _, err := inspect.ParseFrom("latest", now); err == nil {
		t.Error("ParseFrom(latest) took it")
	}
}
