package fleettest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// franzFamily is franz-go's group, classic (its cooperative-sticky default) or KIP-848 (its
// server-side balancer), at kgo's default settings but the seeds.
func franzFamily(kip848 bool) groupFamily {
	fam := groupFamily{name: "franz-go classic", slug: "franz-classic"}
	if kip848 {
		fam.name, fam.slug = "franz-go KIP-848", "franz-848"
	}
	fam.start = func(t *testing.T, f *fleet, group string, rec *groupRecorder) func() {
		var debug io.Writer
		if name := os.Getenv(kgoLogEnv); name != "" {
			lf, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lf.Close() })
			debug = lf
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var cls []*kgo.Client
		for i := range groupMembers {
			name := fmt.Sprintf("member-%d", i)
			note := func(what string) func(context.Context, *kgo.Client, map[string][]int32) {
				return func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
					rec.assignment(name, what, append([]int32(nil), ps[topic]...))
				}
			}
			opts := []kgo.Opt{
				kgo.SeedBrokers(f.seeds()...),
				kgo.ClientID(group + "-" + name),
				kgo.ConsumerGroup(group),
				kgo.ConsumeTopics(topic),
				kgo.DisableAutoCommit(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
				kgo.OnPartitionsAssigned(note("assigned")),
				kgo.OnPartitionsRevoked(note("revoked")),
				kgo.OnPartitionsLost(note("lost")),
				kgo.WithLogger(newGroupErrLogger(group, name, rec, debug)),
			}
			if kip848 {
				opts = append(opts, kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			cls = append(cls, cl)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					fs := cl.PollFetches(ctx)
					if ctx.Err() != nil {
						return
					}
					if _, gen := cl.GroupMetadata(); gen > 0 {
						rec.generation(name, gen)
					}
					fs.EachError(func(_ string, _ int32, err error) { rec.failed(name, "fetch: "+err.Error()) })
					fs.EachRecord(func(r *kgo.Record) { rec.read(name, r.Partition, r.Offset, string(r.Value)) })
					franzCommit(ctx, cl, name, rec)
				}
			}()
		}
		var once sync.Once
		return func() {
			once.Do(func() {
				cancel()
				wg.Wait()
				for _, cl := range cls {
					cl.Close()
				}
			})
		}
	}
	return fam
}

// franzCommit commits what cl has read, synchronously, and tells rec what was committed.
func franzCommit(ctx context.Context, cl *kgo.Client, name string, rec *groupRecorder) {
	offsets := cl.UncommittedOffsets()
	if len(offsets) == 0 {
		return
	}
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				rec.failed(name, "commit: "+err.Error())
			}
			return
		}
		asked := map[int32]int64{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				asked[p.Partition] = p.Offset
			}
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					rec.failed(name, fmt.Sprintf("commit of partition %d: code %d", p.Partition, p.ErrorCode))
					continue
				}
				if off, ok := asked[p.Partition]; ok {
					rec.committed(p.Partition, off)
				}
			}
		}
	})
}

// groupErrLogger keeps kgo's log lines about a member's group session ending (a heartbeat or a
// join that errored) among the recorder's errors: what made a member rebalance. With debug set
// (kgoLogEnv) it also writes every line of kgo's debug log there, each prefixed with the time
// and the member; logging changes nothing the client does.
type groupErrLogger struct {
	member string
	rec    *groupRecorder
	debug  kgo.Logger
}

func newGroupErrLogger(group, member string, rec *groupRecorder, debug io.Writer) groupErrLogger {
	l := groupErrLogger{member: member, rec: rec}
	if debug != nil {
		l.debug = kgo.BasicLogger(debug, kgo.LogLevelDebug, func() string {
			return time.Now().Format("15:04:05.000 ") + group + "/" + member + " "
		})
	}
	return l
}

func (l groupErrLogger) Level() kgo.LogLevel {
	if l.debug != nil {
		return kgo.LogLevelDebug
	}
	return kgo.LogLevelInfo
}

func (l groupErrLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if l.debug != nil {
		l.debug.Log(level, msg, keyvals...)
	}
	if level > kgo.LogLevelInfo {
		return
	}
	if strings.Contains(msg, "heartbeat errored") || strings.Contains(msg, "manage loop errored") || strings.Contains(msg, "triggering rejoin") || strings.Contains(msg, "fetch offsets failed") {
		l.rec.failed(l.member, fmt.Sprint(append([]any{msg}, keyvals...)...))
	}
}
