package scram

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	fscram "github.com/twmb/franz-go/pkg/sasl/scram"
)

func credential(t testing.TB, m Mechanism, password string, salt []byte, iterations int32) (Credential, []byte) {
	t.Helper()
	salted, err := SaltPassword(m, password, salt, int(iterations))
	if err != nil {
		t.Fatal(err)
	}
	return FromSaltedPassword(m, salt, iterations, salted)
}

// The SCRAM-SHA-256 exchange of RFC 7677, section 3, byte for byte.
func TestRFC7677Vector(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	cred, clientKey := credential(t, SHA256, "pencil", salt, 4096)
	first, err := ParseClientFirst([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil {
		t.Fatal(err)
	}
	if first.User != "user" {
		t.Fatalf("user %q", first.User)
	}
	ex, serverFirst, err := newExchange(first, cred, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
	if err != nil {
		t.Fatal(err)
	}
	if want := "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"; string(serverFirst) != want {
		t.Fatalf("server-first %q, want %q", serverFirst, want)
	}
	final, gotKey, err := ex.Final([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil {
		t.Fatal(err)
	}
	if want := "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="; string(final) != want {
		t.Fatalf("server-final %q, want %q", final, want)
	}
	if !bytes.Equal(gotKey, clientKey) {
		t.Fatal("the ClientKey recovered from the proof is not the password's")
	}

	// One bit off in the proof is a wrong password.
	ex, _, _ = newExchange(first, cred, "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
	if _, _, err := ex.Final([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=")); !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("altered proof: %v", err)
	}
}

// franz-go's SCRAM client, which checks the server's signature, authenticates against an
// Exchange with both mechanisms, with a user name that needs escaping and an authorization id;
// a wrong password is ErrInvalidProof.
func TestExchangeWithFranzClient(t *testing.T) {
	const user = "a,b=c"
	for _, m := range Mechanisms {
		cred, _ := credential(t, m, "s3cret", []byte("0123456789abcdef"), 4096)
		for _, tc := range []struct {
			pass string
			ok   bool
		}{{"s3cret", true}, {"wrong", false}} {
			a := fscram.Auth{User: user, Pass: tc.pass, Zid: user}
			mech := a.AsSha256Mechanism()
			if m == SHA512 {
				mech = a.AsSha512Mechanism()
			}
			if mech.Name() != m.String() {
				t.Fatalf("mechanism %s, client %s", m, mech.Name())
			}
			sess, clientFirst, err := mech.Authenticate(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			first, err := ParseClientFirst(clientFirst)
			if err != nil {
				t.Fatal(err)
			}
			if first.User != user {
				t.Fatalf("user %q, want %q", first.User, user)
			}
			ex, serverFirst, err := NewExchange(first, cred)
			if err != nil {
				t.Fatal(err)
			}
			_, clientFinal, err := sess.Challenge(serverFirst)
			if err != nil {
				t.Fatal(err)
			}
			serverFinal, _, err := ex.Final(clientFinal)
			if !tc.ok {
				if !errors.Is(err, ErrInvalidProof) {
					t.Fatalf("%s wrong password: %v", m, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if done, _, err := sess.Challenge(serverFinal); err != nil || !done {
				t.Fatalf("%s: the client refused the server's signature: %v", m, err)
			}
		}
	}
}

// librdkafka (kcat 1.7 over librdkafka 2.0.2), user iggy, password iggy: the messages of one
// exchange per mechanism as the gateway received and sent them. librdkafka puts its own nonce
// before the combined nonce the server-first message carries (rdkafka_sasl_scram.c builds
// "c=biws,r=" cnonce + the server's r), and Kafka's broker accepts that; the proof is computed
// over the client-final message as sent.
func TestExchangeWithLibrdkafkaMessages(t *testing.T) {
	for _, tc := range []struct {
		m                        Mechanism
		salt, serverNonce        string
		clientFirst, clientFinal string
	}{{
		m:           SHA256,
		salt:        "HIqWWNouBQPpOuGLPrWHCj8BZ6aBZo5/",
		serverNonce: "3UaWMp7lR31w+WA56jxq1Oc3",
		clientFirst: `n,,n=iggy,r=Gl;uICgis~/bqMq0n?W4vxxFqrjNjW]b`,
		clientFinal: `c=biws,r=Gl;uICgis~/bqMq0n?W4vxxFqrjNjW]bGl;uICgis~/bqMq0n?W4vxxFqrjNjW]b3UaWMp7lR31w+WA56jxq1Oc3,p=g6BnUj5WZUE1uFCNcm6eH6bCU/Q/BoXKcMSpIjS1CaE=`,
	}, {
		m:           SHA512,
		salt:        "LZKDpKi1+RgwYmkGf+l3fhC9MkbidXU4",
		serverNonce: "dSIatQr87DOteEHVndOFJJql",
		clientFirst: `n,,n=iggy,r=XIz\7u^XHmpnsGF2e{=LOowEbdr?.r\<`,
		clientFinal: `c=biws,r=XIz\7u^XHmpnsGF2e{=LOowEbdr?.r\<XIz\7u^XHmpnsGF2e{=LOowEbdr?.r\<dSIatQr87DOteEHVndOFJJql,p=S4ZlpOSyfUW41XBIGDvxnVj0u90L9uMtlA7PjpDv1wtwAYqK6EQO0pQFXHpGUBf3YvxvaMm28P/+fugh8yPtEQ==`,
	}} {
		salt, err := base64.StdEncoding.DecodeString(tc.salt)
		if err != nil {
			t.Fatal(err)
		}
		cred, clientKey := credential(t, tc.m, "iggy", salt, 4096)
		first, err := ParseClientFirst([]byte(tc.clientFirst))
		if err != nil {
			t.Fatalf("%s client-first: %v", tc.m, err)
		}
		ex, _, err := newExchange(first, cred, tc.serverNonce)
		if err != nil {
			t.Fatal(err)
		}
		serverFinal, gotKey, err := ex.Final([]byte(tc.clientFinal))
		if err != nil {
			t.Fatalf("%s client-final: %v", tc.m, err)
		}
		if !bytes.Equal(gotKey, clientKey) {
			t.Fatalf("%s: the ClientKey recovered from the proof is not the password's", tc.m)
		}
		if !strings.HasPrefix(string(serverFinal), "v=") {
			t.Fatalf("%s server-final %q", tc.m, serverFinal)
		}

		// The same message under another password is a wrong password, not a malformed one.
		other, _ := credential(t, tc.m, "iggy2", salt, 4096)
		ex, _, _ = newExchange(first, other, tc.serverNonce)
		if _, _, err := ex.Final([]byte(tc.clientFinal)); !errors.Is(err, ErrInvalidProof) {
			t.Fatalf("%s under another password: %v", tc.m, err)
		}
	}
}

func TestMalformedMessages(t *testing.T) {
	for _, msg := range []string{
		"", "n", "n,", "n,,", "x,,n=u,r=abc", "p=tls-unique,,n=u,r=abc", "n,b=u,n=u,r=abc",
		"n,,m=x,n=u,r=abc", "n,,r=abc,n=u", "n,,n=,r=abc", "n,,n=u=2Z,r=abc", "n,,n=u,r=",
		"n,,n=u,r=a b", "n,,n=u,r=abc,1=x", "n,,n=u,r=abc,tokenauth=true", "n,a=v,n=u,r=abc",
		"n,,n=u\x00,r=abc", "n,,n=u,r=abc\xff", "n,,n=" + strings.Repeat("u", MaxUser+1) + ",r=abc",
	} {
		if _, err := ParseClientFirst([]byte(msg)); !errors.As(err, new(*MalformedError)) {
			t.Errorf("client-first %q: %v", msg, err)
		}
	}
	first, err := ParseClientFirst([]byte("y,a=u,n=u,r=abc,ext=1"))
	if err != nil {
		t.Fatal(err)
	}
	cred, _ := credential(t, SHA256, "p", []byte("salt"), 4096)
	proof := base64.StdEncoding.EncodeToString(make([]byte, 32))
	cb := base64.StdEncoding.EncodeToString([]byte("y,a=u,"))
	for _, msg := range []string{
		"", "p=" + proof, "c=" + cb + ",p=" + proof, "r=abcS,c=" + cb + ",p=" + proof,
		"c=biws,r=abcS,p=" + proof, "c=!!,r=abcS,p=" + proof, "c=" + cb + ",r=abc,p=" + proof,
		"c=" + cb + ",r=abcS,p=" + proof[:10], "c=" + cb + ",r=abcS,p=%%%", "c=" + cb + ",r=abcS,9,p=" + proof,
		"c=" + cb + ",r=abcS,p=" + base64.StdEncoding.EncodeToString(make([]byte, 64)),
		// Only the combined nonce, or the client nonce and then the combined nonce, is echoed.
		"c=" + cb + ",r=xabcS,p=" + proof, "c=" + cb + ",r=abcSabcS,p=" + proof, "c=" + cb + ",r=abcabcabcS,p=" + proof,
		"c=" + cb + ",r=abcabc,p=" + proof, "c=" + cb + ",r=S,p=" + proof, "c=" + cb + ",r=abcS ,p=" + proof,
	} {
		ex, _, err := newExchange(first, cred, "S")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := ex.Final([]byte(msg)); !errors.As(err, new(*MalformedError)) {
			t.Errorf("client-final %q: %v", msg, err)
		}
	}
	for _, msg := range []string{"c=" + cb + ",r=abcS,x=1,p=" + proof, "c=" + cb + ",r=abcabcS,p=" + proof} {
		ex, _, _ := newExchange(first, cred, "S")
		if _, _, err := ex.Final([]byte(msg)); !errors.Is(err, ErrInvalidProof) {
			t.Errorf("well-formed final %q with a zero proof: %v", msg, err)
		}
	}
}

// The encoding follows the package doc field by field: the expected bytes are put together
// here from the layout, not by the encoder.
func TestRecordLayout(t *testing.T) {
	del := Record{User: "ab", Mechanism: SHA512, Deleted: true}
	got, err := del.Append(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 2, 2, 0, 2, 'a', 'b'}; !bytes.Equal(got, want) {
		t.Fatalf("deletion % x, want % x", got, want)
	}

	stored, server := bytes.Repeat([]byte{0xaa}, 32), bytes.Repeat([]byte{0xbb}, 32)
	set := Record{User: "alice", Mechanism: SHA256, Token: []byte("tok"), Credential: Credential{
		Mechanism: SHA256, Salt: []byte("salt"), Iterations: 4096, StoredKey: stored, ServerKey: server,
	}}
	want := []byte{1, 1, 1, 0, 5}
	want = append(want, "alice"...)
	want = append(want, 0, 0, 0x10, 0)
	want = append(want, 0, 4, 's', 'a', 'l', 't')
	want = append(want, stored...)
	want = append(want, server...)
	want = append(want, 0, 3, 't', 'o', 'k')
	if got, err = set.Append(nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("set record % x (%v), want % x", got, err, want)
	}
	back, err := DecodeRecord(want)
	if err != nil {
		t.Fatal(err)
	}
	if back.User != "alice" || back.Deleted || back.Credential.Iterations != 4096 || !bytes.Equal(back.Credential.StoredKey, stored) ||
		!bytes.Equal(back.Credential.ServerKey, server) || string(back.Token) != "tok" || string(back.Credential.Salt) != "salt" ||
		back.Credential.Mechanism != SHA256 {
		t.Fatalf("decoded %+v", back)
	}

	for name, b := range map[string][]byte{
		"version 2":       append([]byte{2}, want[1:]...),
		"kind 3":          append([]byte{1, 3}, want[2:]...),
		"mechanism 3":     append([]byte{1, 1, 3}, want[3:]...),
		"trailing byte":   append(bytes.Clone(want), 0),
		"truncated":       want[:len(want)-1],
		"iterations 4095": binary.BigEndian.AppendUint32(append([]byte{}, want[:10]...), 4095),
		"empty user":      {1, 2, 1, 0, 0},
	} {
		if name == "iterations 4095" {
			b = append(b, want[14:]...)
		}
		if _, err := DecodeRecord(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	prov := set
	prov.Admin = "root"
	pwant := append([]byte{1, 3}, want[2:]...)
	pwant = append(pwant, 0, 4, 'r', 'o', 'o', 't')
	if got, err = prov.Append(nil); err != nil || !bytes.Equal(got, pwant) {
		t.Fatalf("provisioned record % x (%v), want % x", got, err, pwant)
	}
	if back, err := DecodeRecord(pwant); err != nil || back.Admin != "root" || back.User != "alice" || string(back.Token) != "tok" {
		t.Fatalf("provisioned record decoded %+v (%v)", back, err)
	}
	for name, b := range map[string][]byte{
		"kind 1 with an administrator":   append([]byte{1, 1}, pwant[2:]...),
		"empty administrator":            append(append([]byte{1, 3}, want[2:]...), 0, 0),
		"the user its own administrator": append(append([]byte{1, 3}, want[2:]...), 0, 5, 'a', 'l', 'i', 'c', 'e'),
	} {
		if _, err := DecodeRecord(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	self := set
	self.Admin = "alice"
	if _, err := self.Append(nil); err == nil {
		t.Error("a record naming its user as its administrator encoded")
	}
	if _, err := (Record{User: "u", Mechanism: SHA256, Credential: Credential{Mechanism: SHA256, Iterations: 100}}).Append(nil); err == nil {
		t.Error("a record with 100 iterations encoded")
	}
}

func TestSealOpensOnlyWithTheClientKey(t *testing.T) {
	_, key := credential(t, SHA256, "right", []byte("salt"), 4096)
	_, other := credential(t, SHA256, "wrong", []byte("salt"), 4096)
	sealed, err := Seal(key, "alice", SHA256, "the-token")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("the-token")) {
		t.Fatal("the token is readable in the sealed bytes")
	}
	if tok, err := Open(key, "alice", SHA256, sealed); err != nil || tok != "the-token" {
		t.Fatalf("open: %q %v", tok, err)
	}
	for name, open := range map[string]func() (string, error){
		"another password":  func() (string, error) { return Open(other, "alice", SHA256, sealed) },
		"another user":      func() (string, error) { return Open(key, "bob", SHA256, sealed) },
		"another mechanism": func() (string, error) { return Open(key, "alice", SHA512, sealed) },
		"truncated":         func() (string, error) { return Open(key, "alice", SHA256, sealed[:5]) },
	} {
		if _, err := open(); err == nil {
			t.Errorf("%s opened the token", name)
		}
	}
}
