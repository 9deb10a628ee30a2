package wire

// Topic option keys.
const (
	OptCompressionAlgorithm         = "compression_algorithm"
	OptMessageExpiry                = "message_expiry"
	OptMaxTopicSize                 = "max_topic_size"
	OptSegmentSize                  = "segment_size"
	OptEnforceFsync                 = "enforce_fsync"
	OptMessagesRequiredToSave       = "messages_required_to_save"
	OptSizeOfMessagesRequiredToSave = "size_of_messages_required_to_save"
	OptPreallocateSegments          = "preallocate_segments"
)

// OptionSpec is one catalog entry of a DescribeOptions reply.
type OptionSpec struct {
	Key         string
	Kind        Kind   // the canonical kind of the value
	Default     []byte // the default, encoded in Kind; may be empty
	Description string
	// Updatable is not on the wire; it records which keys update_topic
	// accepts.
	Updatable bool
}

// DefaultEntry returns the entry's default as an options TLV entry.
func (o OptionSpec) DefaultEntry() TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(o.Key), ValueKind: o.Kind, Value: o.Default}
}

// TopicOptionCatalog returns the topic options a server speaking this
// protocol accepts, with their canonical kinds and defaults. Streams and
// users have no option keys.
func TopicOptionCatalog() []OptionSpec {
	return []OptionSpec{
		{OptCompressionAlgorithm, KindString, []byte("none"),
			`Compression of stored messages: "none" or "gzip" (or Uint8 code 1 or 2).`, true},
		{OptMessageExpiry, KindUint64, appendU64(nil, Unlimited),
			"How long messages are kept, in microseconds or as a duration string; 0 means the server default, u64 max means never.", true},
		{OptMaxTopicSize, KindUint64, appendU64(nil, Unlimited),
			"Largest size of the topic in bytes, or a size string; 0 means the server default, u64 max means unlimited; at least the segment size.", true},
		{OptSegmentSize, KindUint64, appendU64(nil, 1<<30),
			"Size of one segment in bytes, or a size string; 0 means the default; otherwise 1 MiB to 1 GiB and a multiple of 512.", false},
		{OptEnforceFsync, KindBool, []byte{0},
			`Whether every write is fsynced: Bool, or String "true"/"false".`, false},
		{OptMessagesRequiredToSave, KindUint32, appendU32(nil, 1024),
			"Number of buffered messages that triggers a save: 1 to 16777216.", false},
		{OptSizeOfMessagesRequiredToSave, KindUint64, appendU64(nil, 1<<20),
			"Buffered bytes that trigger a save, or a size string; at most 1 GiB; 0 means the default.", false},
		{OptPreallocateSegments, KindBool, []byte{0},
			"Whether segment files are preallocated; if true, segment size times partitions must not exceed 64 GiB.", false},
	}
}

// OptionCatalog returns the catalog for a scope and whether the scope is
// known.
func OptionCatalog(scope OptionsScope) ([]OptionSpec, bool) {
	switch scope {
	case ScopeTopic:
		return TopicOptionCatalog(), true
	case ScopeStream, ScopeUser:
		return nil, true
	}
	return nil, false
}

// OptionSpecs is the describe_options reply: [count u32] then per entry
// [key Name][kind u8][default_len u32][default][desc_len u32][description].
type OptionSpecs []OptionSpec

// AppendTo appends the reply.
func (l *OptionSpecs) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(*l)))
	for _, o := range *l {
		dst = append(AppendName(dst, o.Key), byte(o.Kind))
		dst = append(appendU32(dst, uint32(len(o.Default))), o.Default...)
		dst = appendString32(dst, o.Description)
	}
	return dst
}

// Decode parses the reply; Default slices alias b.
func (l *OptionSpecs) Decode(b []byte) error {
	r := NewReader(b)
	n := r.Count(2+1+4+4, "options count")
	*l = nil
	for i := 0; i < n && r.Err() == nil; i++ {
		var o OptionSpec
		o.Key = r.Name("option key")
		o.Kind = Kind(r.U8("option kind"))
		dl := r.U32("default length")
		if r.Err() == nil && uint64(dl) > uint64(r.Len()) {
			r.Fail("default", "truncated")
		}
		o.Default = r.Bytes(int(dl), "default")
		o.Description = r.String32("description")
		*l = append(*l, o)
	}
	return r.Err()
}
