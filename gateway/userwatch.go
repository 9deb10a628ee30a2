package gateway

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Permissions follow Iggy. With SASL every Kafka connection acts through its user's Iggy client,
// so Iggy checks each request against that user's permissions. The embedded store reads them
// from the user, not from the session, at every request (Iggy's server keeps them per user
// too), so a permission change applies to live sessions without the gateway doing anything.
// What Iggy does not do is close the Kafka connection of a user it no longer accepts; the user
// watcher does.
//
// Iggy has no change feed for users, so the watcher polls: every userWatchInterval it asks Iggy,
// through each cached user's own client, for that user (get_user of oneself needs no permission
// and reads memory on the server, so a round costs one small request per SASL user with live
// connections, none when there are none). The answer shows what the gateway must act on:
//   - the user was deleted: its sessions are gone (Unauthenticated) or it is not found;
//   - the user was deactivated: its status is inactive;
//   - its password changed: the embedded store ends the user's other sessions then, so the
//     session the gateway holds answers Unauthenticated, and the client's fresh login with the
//     old password is refused (an Iggy server that keeps those sessions shows nothing here: the
//     gateway's connections of that user then last until they close, and new ones are checked
//     again after recheckAfter);
//   - its permissions changed: logged; Iggy already applies them.
//
// For the first three the watcher drops the cached client (the next authentication logs in
// again and fails or succeeds with the new password) and closes every Kafka connection
// authenticated as the user. A change is acted on within one interval plus one round trip,
// under the 1 s the gateway promises; polling more often would buy little and cost a request
// per user each time. Errors that say nothing about the user (a timeout, a lost connection)
// leave everything as it is until a round answers.
const userWatchInterval = 500 * time.Millisecond

// probeParallel bounds the user probes one round has in flight.
const probeParallel = 16

// userCloser is what the watcher needs of the Kafka server.
type userCloser interface {
	CloseUser(user string) int
}

// userWatch polls Iggy for the SASL users with cached clients and closes the Kafka connections
// of those Iggy no longer accepts.
type userWatch struct {
	users    *userClients
	conns    userCloser
	clock    clock.Clock
	log      *slog.Logger
	interval time.Duration

	// Owned by the watch goroutine.
	perms   map[string]*wire.Permissions
	dropped []string

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func startUserWatch(users *userClients, conns userCloser, clk clock.Clock, log *slog.Logger) *userWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &userWatch{
		users: users, conns: conns, clock: clk, log: log, interval: userWatchInterval,
		perms: make(map[string]*wire.Permissions),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	go w.run()
	return w
}

func (w *userWatch) close() {
	w.cancel()
	<-w.done
}

func (w *userWatch) run() {
	defer close(w.done)
	t := w.clock.NewTimer(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-t.C():
		}
		w.round()
		t.Reset(w.interval)
	}
}

// verdict is what one probe learned: drop says why the user must go, perms is what Iggy grants
// it now, known is false when the probe learned nothing.
type verdict struct {
	drop  string
	perms *wire.Permissions
	known bool
}

func (w *userWatch) round() {
	// A connection can take a cached client just before the watcher drops it and name its user
	// to the Kafka server just after the connections were closed; every connection of a user
	// without a cached client is such a straggler.
	for _, user := range w.dropped {
		if !w.users.has(user) {
			w.conns.CloseUser(user)
		}
	}
	w.dropped = w.dropped[:0]

	list := w.users.cached()
	ctx, cancel := context.WithCancel(w.ctx)
	timer := w.clock.AfterFunc(w.interval, cancel)
	verdicts := make([]verdict, len(list))
	var wg sync.WaitGroup
	sem := make(chan struct{}, probeParallel)
	for i, c := range list {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			verdicts[i] = probeUser(ctx, c)
		}()
	}
	wg.Wait()
	timer.Stop()
	cancel()

	seen := make(map[string]bool, len(list))
	for i, c := range list {
		seen[c.user] = true
		v := verdicts[i]
		switch {
		case v.drop != "":
			w.dropUser(c, v.drop)
		case v.known:
			old, had := w.perms[c.user]
			if had && !reflect.DeepEqual(old, v.perms) {
				w.log.Info("Iggy permissions of a SASL user changed; Iggy applies them to its live connections", "user", c.user)
			}
			w.perms[c.user] = v.perms
		}
	}
	for user := range w.perms {
		if !seen[user] {
			delete(w.perms, user)
		}
	}
}

// probeUser asks Iggy, as the user, about the user.
func probeUser(ctx context.Context, c watched) verdict {
	d, err := c.client.GetUser(ctx, wire.NamedID(c.user))
	switch {
	case err == nil && d.Status != wire.UserStatusActive:
		return verdict{drop: "deactivated"}
	case err == nil:
		return verdict{perms: d.Permissions, known: true}
	case errors.Is(err, wire.ResourceNotFound):
		return verdict{drop: "deleted"}
	case errors.Is(err, wire.Unauthenticated), errors.Is(err, wire.InvalidCredentials), errors.Is(err, wire.UserInactive):
		return verdict{drop: "refused: " + err.Error()}
	}
	return verdict{}
}

func (w *userWatch) dropUser(c watched, reason string) {
	clients := w.users.drop(c.key, c.client)
	if clients == nil {
		// A login replaced the client meanwhile; the next round asks about that one.
		return
	}
	n := w.conns.CloseUser(c.user)
	for _, cl := range clients {
		cl.Close()
	}
	w.dropped = append(w.dropped, c.user)
	delete(w.perms, c.user)
	w.log.Info("closed the Kafka connections of a SASL user Iggy no longer accepts", "user", c.user, "reason", reason, "connections", n)
}
