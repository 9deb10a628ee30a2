package kafka

import "testing"

// FuzzDecodeQuotaEntity reads arbitrary stored entity names: nothing may panic, and an entity
// read is one the gateway serves and encodes back to the same name.
func FuzzDecodeQuotaEntity(f *testing.F) {
	alice := "alice"
	f.Add(EncodeQuotaEntity([]QuotaComponent{{Type: "user", Name: &alice}}))
	f.Add(EncodeQuotaEntity([]QuotaComponent{{Type: "user"}, {Type: "client-id", Name: &alice}}))
	f.Add(`[{"type":"ip","name":"10.0.0.1"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := decodeQuotaEntity(s)
		if !ok {
			return
		}
		if err := checkEntity(e); err != nil {
			t.Fatalf("read %+v: %v", e, err)
		}
		if again, ok := decodeQuotaEntity(EncodeQuotaEntity(e)); !ok || EncodeQuotaEntity(again) != EncodeQuotaEntity(e) {
			t.Fatalf("read %+v, encoded and read again %+v", e, again)
		}
	})
}
