package scram

import (
	"bytes"
	"testing"
)

// FuzzExchange feeds arbitrary client-first and client-final messages to the server side: no
// input may panic it, and only a final message carrying the password's proof succeeds.
func FuzzExchange(f *testing.F) {
	f.Add([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"),
		[]byte("c=biws,r=rOprNGfwEbeRWgbNEkqOS,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	f.Add([]byte("y,a=a=2Cb,n=a=2Cb,r=x,tokenauth=false"), []byte("c=eSxhPWE9MkNiLA==,r=xS,e=1,p=AAAA"))
	f.Add([]byte("n,,m=1,n=u,r=x"), []byte(",p="))
	cred, _ := credential(f, SHA256, "pencil", []byte("salt"), 4096)
	f.Fuzz(func(t *testing.T, first, final []byte) {
		cf, err := ParseClientFirst(first)
		if err != nil {
			return
		}
		ex, _, err := newExchange(cf, cred, "S")
		if err != nil {
			t.Fatal(err)
		}
		if _, key, err := ex.Final(final); err == nil && !bytes.Equal(cred.Mechanism.sum(key), cred.StoredKey) {
			t.Fatal("a final message without the password's proof succeeded")
		}
	})
}

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder: no input may panic it, and what
// it accepts encodes back to the same bytes (one encoding per record).
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte{1, 2, 2, 0, 2, 'a', 'b'})
	set := Record{User: "alice", Mechanism: SHA256, Token: []byte("tok"), Credential: Credential{
		Mechanism: SHA256, Salt: []byte("salt"), Iterations: 4096,
		StoredKey: bytes.Repeat([]byte{1}, 32), ServerKey: bytes.Repeat([]byte{2}, 32),
	}}
	b, err := set.Append(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	set.Admin = "root"
	if b, err = set.Append(nil); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		again, err := r.Append(nil)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("decoded %+v encodes to % x (%v), not % x", r, again, err, b)
		}
	})
}
