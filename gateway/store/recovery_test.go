package store

import (
	"archive/zip"
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

func TestRestartRecoversEverything(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Listen: "127.0.0.1:0", DataDir: dir, Fsync: partlog.FsyncAlways, Logger: slog.New(slog.DiscardHandler)}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(context.Background()) }()
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	mustCreateStream(t, c, "gone")
	ok(t, c.do(wire.CmdDeleteStream, (&wire.StreamRequest{Stream: wire.NumericID(1)}).AppendTo(nil)))
	opts := wire.AppendTLV(nil, wire.StringEntry(wire.OptEnforceFsync, "true"))
	ok(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid0, PartitionsCount: 2, Name: "t", Options: opts}).AppendTo(nil)))
	send(t, c, wire.PartitionIDPartitioning(0), "a", "b", "c")
	send(t, c, wire.PartitionIDPartitioning(1), "x")
	ok(t, c.do(wire.CmdStoreConsumerOffset, (&wire.StoreConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0,
		Partition: wire.SomePartition(0), Offset: 1}).AppendTo(nil)))
	ok(t, c.do(wire.CmdCreateConsumerGroup, (&wire.CreateConsumerGroup{Stream: sid0, Topic: tid0, Name: "g"}).AppendTo(nil)))
	ok(t, c.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "alice", Password: "secret", Status: userActive}).AppendTo(nil)))
	var tok wire.RawToken
	if err := tok.Decode(ok(t, c.do(wire.CmdCreatePersonalAccessToken, (&wire.CreatePersonalAccessToken{Name: "ci-token"}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), tok.Token) || strings.Contains(string(raw), "secret") {
		t.Fatalf("metadata holds a raw secret")
	}

	s2 := startServer(t, dir, nil)
	c2 := loggedIn(t, s2)
	var list wire.StreamList
	if err := list.Decode(ok(t, c2.do(wire.CmdGetStreams, nil))); err != nil || len(list) != 1 || list[0].Name != "s" {
		t.Fatalf("streams after restart %+v %v", list, err)
	}
	var td wire.TopicDetails
	if err := td.Decode(ok(t, c2.do(wire.CmdGetTopic, (&wire.TopicRequest{Stream: sid0, Topic: tid0}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if len(td.Partitions) != 2 || td.Partitions[0].CurrentOffset != 2 || td.MessagesCount != 4 {
		t.Fatalf("topic after restart %+v", td)
	}
	if e, ok := wire.LookupTLV(td.Options, wire.OptEnforceFsync); !ok || e.ValueKind != wire.KindBool {
		t.Fatalf("explicit options after restart: %v", td.Options)
	}
	_, payloads, _ := poll(t, c2, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollNext}, 10, false)
	if !slices.Equal(payloads, []string{"c"}) {
		t.Fatalf("poll next after restart %v", payloads)
	}
	if got := send(t, c2, wire.PartitionIDPartitioning(0), "d").BaseOffset; got != 3 {
		t.Fatalf("offsets restarted at %d", got)
	}
	var groups wire.ConsumerGroupList
	if err := groups.Decode(ok(t, c2.do(wire.CmdGetConsumerGroups, (&wire.TopicRequest{Stream: sid0, Topic: tid0}).AppendTo(nil)))); err != nil || len(groups) != 1 {
		t.Fatalf("groups after restart %+v %v", groups, err)
	}
	alice := dial(t, s2)
	ok(t, alice.login("alice", "secret"))
	pat := dial(t, s2)
	ok(t, pat.do(wire.CmdLoginRegisterWithPAT, (&wire.TokenLogin{Version: wire.OurClientVersion(), Token: tok.Token}).AppendTo(nil)))
	// Stream id 1 was freed before the restart and is reused.
	if got := mustCreateStream(t, c2, "again").ID; got != 1 {
		t.Fatalf("new stream id %d, want 1", got)
	}
}

func TestUsersPermissionsAndTokens(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	root := loggedIn(t, s)
	mustCreateStream(t, root, "s")
	perms := wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true}}
	body := ok(t, root.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "bob", Password: "pass1", Status: userActive, Permissions: &perms}).AppendTo(nil)))
	var ud wire.UserDetails
	if err := ud.Decode(body); err != nil || ud.ID != 1 || ud.Permissions == nil || !ud.Permissions.Global.ReadStreams {
		t.Fatalf("create user %+v %v", ud, err)
	}
	wantStatus(t, root.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "bob", Password: "pass1", Status: userActive}).AppendTo(nil)), wire.UserAlreadyExists)
	wantStatus(t, root.do(wire.CmdCreateUser, (&wire.CreateUser{Username: "bo", Password: "pass1", Status: userActive}).AppendTo(nil)), wire.InvalidUsername)
	wantStatus(t, root.do(wire.CmdDeleteUser, (&wire.UserRequest{User: wire.NumericID(0)}).AppendTo(nil)), wire.CannotDeleteUser)
	wantStatus(t, root.do(wire.CmdUpdatePermissions, (&wire.UpdatePermissions{User: wire.NumericID(0)}).AppendTo(nil)), wire.CannotChangePermissions)

	bob := dial(t, s)
	ok(t, bob.login("bob", "pass1"))
	ok(t, bob.do(wire.CmdGetStreams, nil))
	wantStatus(t, bob.do(wire.CmdCreateStream, (&wire.CreateStream{Name: "mine"}).AppendTo(nil)), wire.Unauthorized)
	wantStatus(t, bob.do(wire.CmdGetUsers, nil), wire.Unauthorized)

	ok(t, root.do(wire.CmdUpdatePermissions, (&wire.UpdatePermissions{User: wire.NamedID("bob"),
		Permissions: &wire.Permissions{Global: wire.GlobalPermissions{ManageStreams: true}}}).AppendTo(nil)))
	mustCreateStream(t, bob, "mine")

	wantStatus(t, bob.do(wire.CmdChangePassword, (&wire.ChangePassword{User: wire.NamedID("bob"), CurrentPassword: "wrong", NewPassword: "pass2"}).AppendTo(nil)), wire.InvalidCredentials)
	ok(t, bob.do(wire.CmdChangePassword, (&wire.ChangePassword{User: wire.NamedID("bob"), CurrentPassword: "pass1", NewPassword: "pass2"}).AppendTo(nil)))
	ok(t, root.do(wire.CmdUpdateUser, (&wire.UpdateUser{User: wire.NumericID(1), HasUsername: true, Username: "robert", HasStatus: true, Status: userInactive}).AppendTo(nil)))
	inactive := dial(t, s)
	wantEviction(t, inactive.login("robert", "pass2"), wire.EvictInvalidCredentials)

	var users wire.UserList
	if err := users.Decode(ok(t, root.do(wire.CmdGetUsers, nil))); err != nil || len(users) != 2 || users[1].Username != "robert" {
		t.Fatalf("users %+v %v", users, err)
	}

	// Tokens.
	var tok wire.RawToken
	if err := tok.Decode(ok(t, root.do(wire.CmdCreatePersonalAccessToken, (&wire.CreatePersonalAccessToken{Name: "deploy"}).AppendTo(nil)))); err != nil || tok.Token == "" {
		t.Fatalf("token %v", err)
	}
	wantStatus(t, root.do(wire.CmdCreatePersonalAccessToken, (&wire.CreatePersonalAccessToken{Name: "deploy"}).AppendTo(nil)), wire.PersonalAccessTokenAlreadyExists)
	var pats wire.PersonalAccessTokenList
	if err := pats.Decode(ok(t, root.do(wire.CmdGetPersonalAccessTokens, nil))); err != nil || len(pats) != 1 || pats[0].Name != "deploy" {
		t.Fatalf("tokens %+v %v", pats, err)
	}
	viaToken := dial(t, s)
	ok(t, viaToken.do(wire.CmdLoginRegisterWithPAT, (&wire.TokenLogin{Version: wire.OurClientVersion(), Token: tok.Token}).AppendTo(nil)))
	ok(t, root.do(wire.CmdDeletePersonalAccessToken, (&wire.DeletePersonalAccessToken{Name: "deploy"}).AppendTo(nil)))
	wantStatus(t, root.do(wire.CmdDeletePersonalAccessToken, (&wire.DeletePersonalAccessToken{Name: "deploy"}).AppendTo(nil)), wire.ResourceNotFound)
	again := dial(t, s)
	wantEviction(t, again.do(wire.CmdLoginRegisterWithPAT, (&wire.TokenLogin{Version: wire.OurClientVersion(), Token: tok.Token}).AppendTo(nil)), wire.EvictInvalidToken)

	ok(t, root.do(wire.CmdDeleteUser, (&wire.UserRequest{User: wire.NamedID("robert")}).AppendTo(nil)))
	if body := ok(t, root.do(wire.CmdGetUser, (&wire.UserRequest{User: wire.NumericID(1)}).AppendTo(nil))); len(body) != 0 {
		t.Fatalf("deleted user still answers")
	}
}

func TestSnapshotIsAZip(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "snap-stream")
	for _, compression := range []byte{1, 2} {
		body := ok(t, c.do(wire.CmdGetSnapshot, []byte{compression, 1, 100}))
		zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
		if err != nil {
			t.Fatalf("compression %d: %v", compression, err)
		}
		var names []string
		found := false
		for _, f := range zr.File {
			names = append(names, f.Name)
			if f.Name != "metadata.json" {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(rc)
			rc.Close()
			found = strings.Contains(buf.String(), "snap-stream") && !strings.Contains(buf.String(), `"hash"`+": \"")
		}
		if !found || !slices.Contains(names, "stats.json") {
			t.Fatalf("snapshot files %v; metadata with the stream and without hashes: %v", names, found)
		}
	}
}
