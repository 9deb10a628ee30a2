package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func FuzzReadFrame(f *testing.F) {
	f.Add(frameBytes(256, CommandReply, 0))
	f.Add(frameBytes(300, CommandRequest, 44))
	f.Add(frameBytes(255, CommandReply, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		var buf []byte
		for i := 0; i < 16; i++ {
			frame, err := ReadFrame(r, buf)
			if err != nil {
				return
			}
			if len(frame) < HeaderSize || len(frame) > MaxFrameSize || FrameCommand(frame) > MaxCommandByte {
				t.Fatalf("bad frame accepted: len %d", len(frame))
			}
			buf = frame
		}
	})
}

func FuzzRequestHeader(f *testing.F) {
	var h [HeaderSize]byte
	(&RequestHeader{FrameHeader: FrameHeader{Size: 256}, Client: Uint128{Lo: 1}, Request: 1, Operation: OpNonReplicated, Code: CmdPing}).Encode(&h)
	f.Add(h[:])
	f.Add(h[:100])
	f.Fuzz(func(t *testing.T, in []byte) {
		var r RequestHeader
		if err := r.Decode(in); err != nil {
			return
		}
		_ = r.Validate()
		var out [HeaderSize]byte
		r.Encode(&out)
		var again RequestHeader
		if err := again.Decode(out[:]); err != nil || again != r {
			t.Fatalf("request header does not round trip: %v", err)
		}
		var rep ReplyHeader
		_ = rep.Decode(in)
		var ev EvictionHeader
		_ = ev.Decode(in)
	})
}

func FuzzIdentifier(f *testing.F) {
	f.Add(NumericID(7).AppendTo(nil))
	f.Add(NamedID("stream").AppendTo(nil))
	f.Add([]byte{2, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		var id Identifier
		if err := id.Decode(in); err != nil {
			if !errors.Is(err, InvalidFormat) {
				t.Fatalf("error %v is not InvalidFormat", err)
			}
			return
		}
		if !id.Valid() {
			t.Fatalf("decoded an invalid identifier %+v", id)
		}
		enc := id.AppendTo(nil)
		if !bytes.Equal(enc, in[:len(enc)]) || id.EncodedLen() != len(enc) {
			t.Fatalf("identifier does not re-encode to its input")
		}
	})
}

func FuzzTLV(f *testing.F) {
	f.Add(goldenOptions)
	f.Add(AppendTLV(nil, StringEntry("a", "1"), StringEntry("a", "2")))
	f.Add([]byte{2, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		pairs, err := ValidateTLV(in)
		strictPairs, strictErr := ValidateTLVStrict(in)
		optPairs, optErr := ValidateOptions(in)
		if err != nil {
			if strictErr == nil || optErr == nil {
				t.Fatal("stricter validators accepted what ValidateTLV refused")
			}
			it := NewTLVIter(in)
			for i := 0; i < len(in); i++ {
				if _, ok := it.Next(); !ok {
					break
				}
			}
			return
		}
		entries, derr := DecodeTLV(in)
		if derr != nil || len(entries) != pairs {
			t.Fatalf("DecodeTLV disagrees with ValidateTLV: %v", derr)
		}
		if !bytes.Equal(AppendTLV(nil, entries...), in) {
			t.Fatal("TLV block does not re-encode to its input")
		}
		if strictErr == nil && strictPairs != pairs || optErr == nil && optPairs != pairs {
			t.Fatal("pair counts disagree")
		}
		for _, e := range entries {
			e.AsBool()
			e.AsUint()
			e.AsInt()
			e.AsFloat()
		}
	})
}

func FuzzPermissions(f *testing.F) {
	p := Permissions{Streams: []StreamPermissions{{StreamID: 1, Topics: []TopicPermissions{{TopicID: 2}}}}}
	f.Add(p.AppendTo(nil))
	root := AllPermissions()
	f.Add(root.AppendTo(nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		var p Permissions
		if err := p.Decode(in); err != nil {
			return
		}
		var back Permissions
		if err := back.Decode(p.AppendTo(nil)); err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("permissions do not round trip: %v", err)
		}
	})
}

func FuzzRegister(f *testing.F) {
	f.Add((&PasswordLogin{OurClientVersion(), "iggy", "iggy", ""}).AppendTo(nil))
	f.Add((&TokenLogin{OurClientVersion(), "tok", ""}).AppendTo(nil))
	f.Add((&PasswordLogin{OurClientVersion(), "iggy", "", ""}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseRegister(in)
		if err != nil {
			return
		}
		if s.HasPassword {
			var back PasswordLogin
			if err := back.Decode(s.Password.AppendTo(nil)); err != nil || back != s.Password {
				t.Fatalf("password login does not round trip: %v", err)
			}
		}
		if s.HasToken {
			var back TokenLogin
			if err := back.Decode(s.Token.AppendTo(nil)); err != nil || back != s.Token {
				t.Fatalf("token login does not round trip: %v", err)
			}
		}
		var l LoginReply
		_ = l.Decode(in)
	})
}

// FuzzRequestBody feeds bytes to the request decoder of every command, the
// way a server dispatches on the command a header names, and checks that
// what decodes re-encodes to something that decodes to the same value.
func FuzzRequestBody(f *testing.F) {
	for _, c := range bodySamples() {
		for cmd := range commands {
			if b := NewRequest(cmd); b != nil && reflect.TypeOf(b) == reflect.TypeOf(c.body) {
				f.Add(uint32(cmd), c.body.AppendTo(nil))
			}
		}
	}
	f.Fuzz(func(t *testing.T, code uint32, in []byte) {
		b, err := DecodeRequest(Command(code), in)
		if err != nil {
			return
		}
		enc := b.AppendTo(nil)
		back, err := DecodeRequest(Command(code), enc)
		if err != nil {
			t.Fatalf("%v: re-encoded body does not decode: %v", Command(code), err)
		}
		if !bytes.Equal(back.AppendTo(nil), enc) {
			t.Fatalf("%v: body encoding is not stable", Command(code))
		}
	})
}

// FuzzReplyBody does the same for the reply decoders a client runs.
func FuzzReplyBody(f *testing.F) {
	samples := bodySamples()
	for i, c := range samples {
		f.Add(uint8(i), c.body.AppendTo(nil))
	}
	f.Fuzz(func(t *testing.T, which uint8, in []byte) {
		if int(which) >= len(samples) {
			return
		}
		typ := reflect.TypeOf(samples[which].body).Elem()
		b := reflect.New(typ).Interface().(Body)
		if err := b.Decode(in); err != nil {
			return
		}
		enc := b.AppendTo(nil)
		back := reflect.New(typ).Interface().(Body)
		if err := back.Decode(enc); err != nil {
			t.Fatalf("%v: re-encoded reply does not decode: %v", typ, err)
		}
		if !bytes.Equal(back.AppendTo(nil), enc) {
			t.Fatalf("%v: reply encoding is not stable", typ)
		}
	})
}
