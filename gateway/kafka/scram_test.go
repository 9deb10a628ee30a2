package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	fscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// memSCRAM keeps credentials in memory, as the gateway keeps them in Iggy.
type memSCRAM struct {
	storage Storage
	mu      sync.Mutex
	creds   map[scram.Key]scram.Credential
	logins  []string
}

func newMemSCRAM(st Storage) *memSCRAM {
	return &memSCRAM{storage: st, creds: map[scram.Key]scram.Credential{}}
}

func (m *memSCRAM) Lookup(_ context.Context, user string, mech scram.Mechanism) (scram.Credential, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.creds[scram.Key{User: user, Mechanism: mech}]
	return c, ok, nil
}

func (m *memSCRAM) Login(_ context.Context, user string, cred scram.Credential, clientKey []byte) (Storage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logins = append(m.logins, user+"/"+cred.Mechanism.String())
	return m.storage, nil
}

func (m *memSCRAM) Credentials(context.Context) (map[string][]scram.Credential, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]scram.Credential{}
	for k, c := range m.creds {
		out[k.User] = append(out[k.User], c)
	}
	return out, nil
}

// Manages: no user of these tests administers others; the gateway's tests cover that with Iggy.
func (m *memSCRAM) Manages(context.Context, string, bool) (bool, error) { return false, nil }

func (m *memSCRAM) Set(_ context.Context, _, user string, mech scram.Mechanism, salt []byte, iterations int32, salted []byte) error {
	cred, _ := scram.FromSaltedPassword(mech, salt, iterations, salted)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creds[scram.Key{User: user, Mechanism: mech}] = cred
	return nil
}

func (m *memSCRAM) Delete(_ context.Context, _, user string, mech scram.Mechanism) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := scram.Key{User: user, Mechanism: mech}
	if _, ok := m.creds[k]; !ok {
		return kerr.ResourceNotFound
	}
	delete(m.creds, k)
	return nil
}

// startSCRAMServer starts a SASL server whose PLAIN users are alice/secret and bob/builder and
// whose SCRAM credentials are in the returned memSCRAM.
func startSCRAMServer(t testing.TB, mod func(*Config)) (*testServer, *memSCRAM) {
	t.Helper()
	var sc *memSCRAM
	ts := startServer(t, func(c *Config) {
		c.SASL = true
		c.Authenticate = func(_ context.Context, user, pass string) (Storage, error) {
			if map[string]string{"alice": "secret", "bob": "builder"}[user] != pass || pass == "" {
				return nil, errors.New("invalid credentials")
			}
			return c.Storage, nil
		}
		sc = newMemSCRAM(c.Storage)
		c.SCRAM = sc
		if mod != nil {
			mod(c)
		}
	})
	return ts, sc
}

func scramMech(m scram.Mechanism, user, pass string) sasl.Mechanism {
	a := fscram.Auth{User: user, Pass: pass}
	if m == scram.SHA512 {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

// A credential set through AlterUserScramCredentials authenticates franz-go's SCRAM client with
// either mechanism; a wrong password, a user without a credential and a mechanism the user has
// no credential for are SASL_AUTHENTICATION_FAILED.
func TestSASLSCRAM(t *testing.T) {
	ts, sc := startSCRAMServer(t, nil)

	raw := dialRaw(t, ts.addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	r := raw.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse)
	if want := []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}; r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(r.SupportedMechanisms, want) {
		t.Fatalf("handshake %d %v, want UNSUPPORTED_SASL_MECHANISM %v", r.ErrorCode, r.SupportedMechanisms, want)
	}

	alice := kadm.NewClient(ts.client(t, kgo.SASL(plain.Auth{User: "alice", Pass: "secret"}.AsMechanism())))
	res, err := alice.AlterUserSCRAMs(testCtx(t), nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha256, Password: "s3cret-256"},
		{User: "alice", Mechanism: kadm.ScramSha512, Password: "s3cret-512", Iterations: 8192},
	})
	if err != nil || res["alice"].Err != nil {
		t.Fatalf("alter: %v %+v", err, res)
	}

	for _, m := range scram.Mechanisms {
		pass := "s3cret-" + strings.TrimPrefix(m.String(), "SCRAM-SHA-")
		good := ts.client(t, kgo.SASL(scramMech(m, "alice", pass)))
		createTopic(t, good, "scram-"+pass, 1)
		if err := good.ProduceSync(testCtx(t), &kgo.Record{Topic: "scram-" + pass, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for _, bad := range []sasl.Mechanism{scramMech(m, "alice", "wrong"), scramMech(m, "bob", "builder")} {
			cl := ts.client(t, kgo.SASL(bad), kgo.RequestRetries(0))
			if err := cl.Ping(testCtx(t)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
				t.Fatalf("%s: a wrong password or unknown user: %v", m, err)
			}
		}
	}
	sc.mu.Lock()
	logins := slices.Clone(sc.logins)
	sc.mu.Unlock()
	if !slices.Contains(logins, "alice/SCRAM-SHA-256") || !slices.Contains(logins, "alice/SCRAM-SHA-512") || slices.ContainsFunc(logins, func(s string) bool { return strings.HasPrefix(s, "bob") }) {
		t.Fatalf("logins %v", logins)
	}

	// Deleted, the credential no longer authenticates.
	res, err = alice.AlterUserSCRAMs(testCtx(t), []kadm.DeleteSCRAM{{User: "alice", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || res["alice"].Err != nil {
		t.Fatalf("delete: %v %+v", err, res)
	}
	cl := ts.client(t, kgo.SASL(scramMech(scram.SHA256, "alice", "s3cret-256")), kgo.RequestRetries(0))
	if err := cl.Ping(testCtx(t)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("a deleted credential: %v", err)
	}
}

// saslAuth sends one SaslAuthenticate and returns the answer.
func saslAuth(t *testing.T, c *rawConn, token []byte) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	a := kmsg.NewPtrSASLAuthenticateRequest()
	a.Version, a.SASLAuthBytes = 1, token
	return c.roundTrip(t, a).(*kmsg.SASLAuthenticateResponse)
}

// scramHandshake opens a connection and chooses SCRAM-SHA-256 with a v1 (or v0) handshake.
func scramHandshake(t *testing.T, addr string, version int16) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = version, "SCRAM-SHA-256"
	if r := c.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake %d", r.ErrorCode)
	}
	return c
}

// Malformed client-first and client-final messages are SASL_AUTHENTICATION_FAILED with what is
// wrong, and close their connection only; the bare frames after a v0 handshake carry the same
// exchange.
func TestSCRAMExchangeOnTheWire(t *testing.T) {
	ts, sc := startSCRAMServer(t, nil)
	salted, err := scram.SaltPassword(scram.SHA256, "pw", []byte("salt"), 4096)
	if err != nil {
		t.Fatal(err)
	}
	sc.Set(context.Background(), "carol", "carol", scram.SHA256, []byte("salt"), 4096, salted)
	other := dialRaw(t, ts.addr)

	for _, first := range [][]byte{[]byte("garbage"), []byte("p=tls-unique,,n=carol,r=x"), nil, []byte("n,,n=carol,r=a,b")} {
		c := scramHandshake(t, ts.addr, 1)
		r := saslAuth(t, c, first)
		if r.ErrorCode != kerr.SaslAuthenticationFailed.Code || r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "malformed") {
			t.Fatalf("client-first %q: %d %v", first, r.ErrorCode, r.ErrorMessage)
		}
		c.expectClosed(t)
	}
	for _, final := range [][]byte{[]byte("c=biws"), []byte("c=biws,r=x,p=AAAA"), {0xff, 0, ','}, nil} {
		c := scramHandshake(t, ts.addr, 1)
		sess, first, _ := scramMech(scram.SHA256, "carol", "pw").Authenticate(context.Background(), "")
		r := saslAuth(t, c, first)
		if r.ErrorCode != 0 {
			t.Fatalf("client-first: %d", r.ErrorCode)
		}
		if _, _, err := sess.Challenge(r.SASLAuthBytes); err != nil {
			t.Fatal(err)
		}
		r = saslAuth(t, c, final)
		if r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("client-final %q: %d", final, r.ErrorCode)
		}
		c.expectClosed(t)
	}
	// Only SaslAuthenticate may come between the two messages.
	c := scramHandshake(t, ts.addr, 1)
	_, first, _ := scramMech(scram.SHA256, "carol", "pw").Authenticate(context.Background(), "")
	if r := saslAuth(t, c, first); r.ErrorCode != 0 {
		t.Fatalf("client-first: %d", r.ErrorCode)
	}
	c.write(t, encodeRequest(kmsg.NewPtrMetadataRequest(), 77))
	c.expectClosed(t)

	// v0: bare frames.
	c = scramHandshake(t, ts.addr, 0)
	sess, first, _ := scramMech(scram.SHA256, "carol", "pw").Authenticate(context.Background(), "")
	bare := func(b []byte) []byte {
		c.write(t, append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
		return c.readFrame(t)
	}
	_, final, err := sess.Challenge(bare(first))
	if err != nil {
		t.Fatal(err)
	}
	if done, _, err := sess.Challenge(bare(final)); err != nil || !done {
		t.Fatalf("the client refused the server-final message: %v", err)
	}
	c.roundTrip(t, kmsg.NewPtrMetadataRequest())

	// A wrong password on bare frames closes the connection.
	c = scramHandshake(t, ts.addr, 0)
	sess, first, _ = scramMech(scram.SHA256, "carol", "nope").Authenticate(context.Background(), "")
	if _, final, err = sess.Challenge(bare(first)); err != nil {
		t.Fatal(err)
	}
	c.write(t, append(binary.BigEndian.AppendUint32(nil, uint32(len(final))), final...))
	c.expectClosed(t)

	other.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
}

func alterReq(t *testing.T, cl *kgo.Client, req *kmsg.AlterUserSCRAMCredentialsRequest) map[string]int16 {
	t.Helper()
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int16{}
	for _, r := range resp.Results {
		if _, dup := out[r.User]; dup {
			t.Fatalf("two results for %q", r.User)
		}
		out[r.User] = r.ErrorCode
	}
	return out
}

func upsertion(user string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iterations, []byte("salt"), []byte("salted")
	return u
}

func deletion(user string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = user, mech
	return d
}

// A connection sees and changes the credentials of its own user only, and a request is checked
// as Kafka checks it before anything changes.
func TestSCRAMCredentialAPIs(t *testing.T) {
	ts, sc := startSCRAMServer(t, nil)
	alice := ts.client(t, kgo.SASL(plain.Auth{User: "alice", Pass: "secret"}.AsMechanism()))
	bob := ts.client(t, kgo.SASL(plain.Auth{User: "bob", Pass: "builder"}.AsMechanism()))

	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = append(req.Upsertions, upsertion("bob", 1, 4096), upsertion("alice", 2, 8192))
	if got := alterReq(t, bob, req); got["bob"] != 0 || got["alice"] != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("bob alters bob and alice: %v", got)
	}
	for name, tc := range map[string]struct {
		req  func(*kmsg.AlterUserSCRAMCredentialsRequest)
		code int16
	}{
		"few iterations": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			r.Upsertions = append(r.Upsertions, upsertion("alice", 1, 4095))
		}, kerr.UnacceptableCredential.Code},
		"many iterations": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			r.Upsertions = append(r.Upsertions, upsertion("alice", 1, 16385))
		}, kerr.UnacceptableCredential.Code},
		"mechanism 3": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			r.Upsertions = append(r.Upsertions, upsertion("alice", 3, 4096))
		}, kerr.UnsupportedSaslMechanism.Code},
		"empty salt": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			u := upsertion("alice", 1, 4096)
			u.Salt = nil
			r.Upsertions = append(r.Upsertions, u)
		}, kerr.UnacceptableCredential.Code},
		"twice": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			r.Deletions = append(r.Deletions, deletion("alice", 1))
			r.Upsertions = append(r.Upsertions, upsertion("alice", 1, 4096))
		}, kerr.DuplicateResource.Code},
		"missing": {func(r *kmsg.AlterUserSCRAMCredentialsRequest) {
			r.Deletions = append(r.Deletions, deletion("alice", 1))
		}, kerr.ResourceNotFound.Code},
	} {
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		// A good change beside the bad one is not made either.
		req.Upsertions = append(req.Upsertions, upsertion("alice", 2, 4096))
		tc.req(req)
		if got := alterReq(t, alice, req); got["alice"] != tc.code || len(got) != 1 {
			t.Errorf("%s: %v, want alice %d", name, got, tc.code)
		}
		if _, ok, _ := sc.Lookup(context.Background(), "alice", scram.SHA512); ok {
			t.Fatalf("%s: alice's other change was made", name)
		}
	}

	ad := kadm.NewClient(alice)
	if res, err := ad.AlterUserSCRAMs(testCtx(t), nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Password: "p", Iterations: 5000}}); err != nil || res["alice"].Err != nil {
		t.Fatalf("alter: %v %+v", err, res)
	}
	all, err := ad.DescribeUserSCRAMs(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || len(all["alice"].CredInfos) != 1 || all["alice"].CredInfos[0].Mechanism != kadm.ScramSha512 || all["alice"].CredInfos[0].Iterations != 5000 {
		t.Fatalf("alice describes all: %+v", all)
	}
	some, err := ad.DescribeUserSCRAMs(testCtx(t), "alice", "bob", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	if some["alice"].Err != nil || !errors.Is(some["bob"].Err, kerr.ClusterAuthorizationFailed) || !errors.Is(some["nobody"].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice describes alice, bob, nobody: %+v", some)
	}
	dreq := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, n := range []string{"alice", "alice"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = n
		dreq.Users = append(dreq.Users, u)
	}
	if resp, err := dreq.RequestWith(testCtx(t), alice); err != nil || len(resp.Results) != 1 || resp.Results[0].ErrorCode != kerr.DuplicateResource.Code {
		t.Fatalf("alice named twice: %v %+v", err, resp)
	}

	// Without SASL every user is seen and none may be changed.
	open := startServer(t, func(c *Config) { c.SCRAM = sc })
	cl := open.client(t)
	all, err = kadm.NewClient(cl).DescribeUserSCRAMs(testCtx(t))
	if err != nil || len(all) != 2 || all["bob"].Err != nil || all["alice"].Err != nil {
		t.Fatalf("describe without SASL: %v %+v", err, all)
	}
	req = kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = append(req.Upsertions, upsertion("alice", 1, 4096))
	if got := alterReq(t, cl, req); got["alice"] != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("alter without SASL: %v", got)
	}
}

// panicLog fails the test on any log line of a recovered handler panic.
type panicLog struct {
	slog.Handler
	mu     sync.Mutex
	panics []string
}

func (p *panicLog) Enabled(context.Context, slog.Level) bool { return true }

func (p *panicLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panicked") {
		p.mu.Lock()
		var attrs []string
		r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a.String()); return true })
		p.panics = append(p.panics, fmt.Sprint(r.Message, attrs))
		p.mu.Unlock()
	}
	return nil
}

// FuzzSCRAMExchange sends an arbitrary client-first message and, when it is accepted, an
// arbitrary client-final message over a SCRAM-SHA-256 handshake. No input may panic a handler,
// authenticate without the password, or disturb another connection.
func FuzzSCRAMExchange(f *testing.F) {
	f.Add([]byte("n,,n=carol,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add([]byte("y,a=carol,n=carol,r=abc,ext=x"), []byte("c=eSxhPWNhcm9sLA==,r=abcS,p="))
	f.Add([]byte("garbage"), []byte{})
	pl := &panicLog{Handler: slog.DiscardHandler}
	ts, sc := startSCRAMServer(f, func(c *Config) { c.Logger = slog.New(pl) })
	salted, err := scram.SaltPassword(scram.SHA256, "pw", []byte("salt"), 4096)
	if err != nil {
		f.Fatal(err)
	}
	sc.Set(context.Background(), "carol", "carol", scram.SHA256, []byte("salt"), 4096, salted)
	health := dialRaw(f, ts.addr)
	f.Fuzz(func(t *testing.T, first, final []byte) {
		c := scramHandshake(t, ts.addr, 1)
		if r := saslAuth(t, c, first); r.ErrorCode == 0 {
			if r := saslAuth(t, c, final); r.ErrorCode == 0 {
				t.Fatalf("authenticated with %q, %q", first, final)
			}
		}
		c.expectClosed(t)
		c.Close()
		health.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if len(pl.panics) > 0 {
			t.Fatalf("handler panicked: %v", pl.panics)
		}
	})
}
