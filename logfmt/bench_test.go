package logfmt

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

func plainAttrs() []slog.Attr {
	return []slog.Attr{
		slog.String("topic", "orders"),
		slog.Int("partition", 7),
		slog.Bool("leader", true),
		slog.Duration("took", 1500*time.Microsecond),
		slog.String("member", "consumer-1 of group a"),
	}
}

// BenchmarkHandle measures one record of plain attributes through a logger,
// the way the gateway logs; allocs/op is the number to watch (goal: 0).
func BenchmarkHandle(b *testing.B) {
	logger := slog.New(New(io.Discard, nil)).With(slog.String("gateway", "gw-1"))
	attrs := plainAttrs()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		logger.LogAttrs(ctx, slog.LevelInfo, "fetched batch", attrs...)
	}
}

func BenchmarkHandleParallel(b *testing.B) {
	logger := slog.New(New(io.Discard, nil)).WithGroup("g")
	attrs := plainAttrs()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			logger.LogAttrs(ctx, slog.LevelInfo, "fetched batch", attrs...)
		}
	})
}

// BenchmarkTextHandler is the standard library's text handler on the same
// record, for comparison.
func BenchmarkTextHandler(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil)).With(slog.String("gateway", "gw-1"))
	attrs := plainAttrs()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		logger.LogAttrs(ctx, slog.LevelInfo, "fetched batch", attrs...)
	}
}

func TestPlainRecordDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled buffers on purpose")
	}
	logger := slog.New(New(io.Discard, nil)).With(slog.String("gateway", "gw-1")).WithGroup("g")
	attrs := plainAttrs()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		logger.LogAttrs(ctx, slog.LevelInfo, "fetched batch", attrs...)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per record, want 0", allocs)
	}
}
