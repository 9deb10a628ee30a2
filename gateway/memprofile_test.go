package gateway

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProduceHeapProfile puts on an in-process gateway the load bench/cmd/connmem puts on the
// binary (50 franz-go producers with default settings, random 1 KiB values, for 10 s) and writes
// the heap profile taken at the end of the window to the file TEST_IGGY_HEAPPROFILE names; it
// is skipped without it. Read it with `go tool pprof -sample_index=inuse_space FILE`.
func TestProduceHeapProfile(t *testing.T) {
	out := os.Getenv("TEST_IGGY_HEAPPROFILE")
	if out == "" {
		t.Skip("TEST_IGGY_HEAPPROFILE not set")
	}
	producers := 50
	if v, err := strconv.Atoi(os.Getenv("TEST_IGGY_HEAPPROFILE_PRODUCERS")); err == nil {
		producers = v
	}
	runtime.MemProfileRate = 64 << 10
	g := startGateway(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := client(t, g)
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 50, 1, nil, "memprofile"); err != nil {
		t.Fatal(err)
	}
	pool := make([][]byte, 256)
	for i := range pool {
		pool[i] = make([]byte, 1024)
		for j := range pool[i] {
			pool[i][j] = byte(rand.Uint32())
		}
	}
	pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
	defer pcancel()
	var acked atomic.Int64
	var wg sync.WaitGroup
	for i := range producers {
		cl := client(t, g, kgo.DefaultProduceTopic("memprofile"))
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 2))
			for pctx.Err() == nil {
				cl.Produce(pctx, &kgo.Record{Value: pool[r.IntN(len(pool))]}, func(rec *kgo.Record, err error) {
					if err == nil {
						acked.Add(1)
					} else if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, kgo.ErrClientClosed) {
						t.Error(err)
					}
				})
			}
		}()
	}
	<-pctx.Done()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if acked.Load() == 0 {
		t.Fatal("no record acknowledged")
	}
	t.Logf("%d records acknowledged", acked.Load())
}
