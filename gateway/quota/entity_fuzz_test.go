package quota

import "testing"

// FuzzDecodeEntity reads arbitrary stored entity names: nothing may panic, and an entity
// read is one the gateway serves and encodes back to the same name.
func FuzzDecodeEntity(f *testing.F) {
	alice := "alice"
	f.Add(EncodeEntity([]Component{{Type: TypeUser, Name: &alice}}))
	f.Add(EncodeEntity([]Component{{Type: "user"}, {Type: "client-id", Name: &alice}}))
	f.Add(`[{"type":"ip","name":"10.0.0.1"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := DecodeEntity(s)
		if !ok {
			return
		}
		if err := CheckEntity(e); err != nil {
			t.Fatalf("read %+v: %v", e, err)
		}
		if again, ok := DecodeEntity(EncodeEntity(e)); !ok || EncodeEntity(again) != EncodeEntity(e) {
			t.Fatalf("read %+v, encoded and read again %+v", e, again)
		}
	})
}
