package fleettest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// findWatch asks every gateway but one, every findEvery, which node coordinates a group, and
// keeps each change of answer: what clients that look their coordinator up are told after a
// gateway went.
type findWatch struct {
	from   time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	changes map[int32][]findAnswer // gateway -> its answers, each when it changed
}

// findAnswer is one FindCoordinator answer: the node named, or the error code.
type findAnswer struct {
	after time.Duration
	node  int32
	code  int16
	err   string
}

func (a findAnswer) same(b findAnswer) bool {
	return a.node == b.node && a.code == b.code && a.err == b.err
}

func (a findAnswer) String() string {
	switch {
	case a.err != "":
		return fmt.Sprintf("%v: %s", a.after.Round(time.Millisecond), a.err)
	case a.code != 0:
		return fmt.Sprintf("%v: code %d", a.after.Round(time.Millisecond), a.code)
	}
	return fmt.Sprintf("%v: node %d", a.after.Round(time.Millisecond), a.node)
}

const findEvery = 20 * time.Millisecond

// watchFind starts asking, through the probe's per-gateway clients, every gateway but skip.
func watchFind(pr *probe, skip int32, groupID string) *findWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &findWatch{from: time.Now(), cancel: cancel, changes: map[int32][]findAnswer{}}
	for id, cl := range pr.clients {
		if id == skip {
			continue
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			tick := time.NewTicker(findEvery)
			defer tick.Stop()
			for {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorKey, req.CoordinatorKeys = groupID, []string{groupID}
				rctx, rcancel := context.WithTimeout(ctx, time.Second)
				resp, err := req.RequestWith(rctx, cl.Broker(int(id)))
				rcancel()
				if ctx.Err() != nil {
					return
				}
				a := findAnswer{after: time.Since(w.from)}
				switch {
				case err != nil:
					a.err = err.Error()
				case len(resp.Coordinators) > 0:
					a.node, a.code = resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
				default:
					a.node, a.code = resp.NodeID, resp.ErrorCode
				}
				if a.code != 0 {
					a.node = 0
				}
				w.mu.Lock()
				if cs := w.changes[id]; len(cs) == 0 || !cs[len(cs)-1].same(a) {
					w.changes[id] = append(cs, a)
				}
				w.mu.Unlock()
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	return w
}

// stop ends the asking and returns, per gateway, how long it went on naming node gone
// (0 when it never did) and its answers.
func (w *findWatch) stop(gone int32) (named map[int32]time.Duration, answers string) {
	w.cancel()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	named = map[int32]time.Duration{}
	var parts []string
	for id, cs := range w.changes {
		for i, a := range cs {
			if a.node == gone && a.code == 0 && a.err == "" {
				end := time.Since(w.from)
				if i+1 < len(cs) {
					end = cs[i+1].after
				}
				named[id] = max(named[id], end)
			}
		}
		var s []string
		for _, a := range cs {
			s = append(s, a.String())
		}
		parts = append(parts, fmt.Sprintf("gateway %d: %s", id, strings.Join(s, ", ")))
	}
	return named, strings.Join(parts, "; ")
}
