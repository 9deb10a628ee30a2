package store

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Topic option keys (protocol 6.7).
const (
	optCompression      = wire.OptCompressionAlgorithm
	optMessageExpiry    = wire.OptMessageExpiry
	optMaxTopicSize     = wire.OptMaxTopicSize
	optSegmentSize      = wire.OptSegmentSize
	optEnforceFsync     = wire.OptEnforceFsync
	optMessagesToSave   = wire.OptMessagesRequiredToSave
	optSizeToSave       = wire.OptSizeOfMessagesRequiredToSave
	optPreallocate      = wire.OptPreallocateSegments
	maxMessagesToSave   = 16 << 20
	maxSizeToSave       = 1 << 30
	minSegmentSize      = 1 << 20
	maxSegmentSize      = 1 << 30
	maxPreallocateBytes = 64 << 30
)

// topicDefaults are the server defaults of the catalog.
var topicDefaults = topicOptions{
	Compression:    wire.CompressionNone,
	MessageExpiry:  wire.Unlimited,
	MaxTopicSize:   wire.Unlimited,
	SegmentSize:    1 << 30,
	MessagesToSave: 1024,
	SizeToSave:     1 << 20,
}

// topicCatalog is the catalog DescribeOptions reports and admission checks
// against.
var topicCatalog = wire.TopicOptionCatalog()

// topicOptions are a topic's resolved options plus the two blocks reported
// to clients: Explicit holds the keys the client set (canonical kinds),
// Derived the defaults of the others.
type topicOptions struct {
	Compression    uint8  `json:"compression"`
	MessageExpiry  uint64 `json:"message_expiry"`
	MaxTopicSize   uint64 `json:"max_topic_size"`
	SegmentSize    uint64 `json:"segment_size"`
	EnforceFsync   bool   `json:"enforce_fsync"`
	MessagesToSave uint32 `json:"messages_required_to_save"`
	SizeToSave     uint64 `json:"size_of_messages_required_to_save"`
	Preallocate    bool   `json:"preallocate_segments"`
	Explicit       []byte `json:"explicit"`
	Derived        []byte `json:"derived"`
}

// admitTopicOptions parses a create or update options block over base (the
// defaults for create, the current options for update). With update set,
// only the updatable keys are accepted, the explicit block is merged into
// the existing one, and a zero value leaves its key as it was, as the real
// server does. Failures are 4041 for an unknown key, 4042 for a bad
// value and 1019 for a topic size below the segment size.
func admitTopicOptions(block []byte, base topicOptions, update bool) (topicOptions, error) {
	if _, err := wire.ValidateOptions(block); err != nil {
		if len(block) > wire.MaxOptionsSize {
			return topicOptions{}, wire.OptionsBlockTooLarge
		}
		return topicOptions{}, wire.InvalidOptionValue
	}
	o := base
	set := map[string]bool{}
	if update {
		it := wire.NewTLVIter(base.Explicit)
		for e, ok := it.Next(); ok; e, ok = it.Next() {
			set[string(e.Key)] = true
		}
	}
	it := wire.NewTLVIter(block)
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		key := string(e.Key)
		spec := catalogSpec(key)
		if spec == nil || (update && !spec.Updatable) {
			return topicOptions{}, wire.UnsupportedOptionKey
		}
		prev := o
		explicit, err := o.absorb(key, e)
		if err != nil {
			return topicOptions{}, err
		}
		if !explicit && update {
			// The real server reads a zero ("use the default") in an update as not given:
			// the topic keeps what it had.
			o = prev
			continue
		}
		set[key] = explicit
		if !explicit {
			o.resetToDefault(key)
		}
	}
	if o.SegmentSize < minSegmentSize || o.SegmentSize > maxSegmentSize || o.SegmentSize%512 != 0 {
		return topicOptions{}, wire.InvalidOptionValue
	}
	if o.MaxTopicSize != wire.Unlimited && o.MaxTopicSize < o.SegmentSize {
		return topicOptions{}, wire.InvalidTopicSize
	}
	o.Explicit, o.Derived = nil, nil
	for _, spec := range topicCatalog {
		entry := o.canonical(spec.Key)
		if set[spec.Key] {
			o.Explicit = wire.AppendTLV(o.Explicit, entry)
		} else {
			o.Derived = wire.AppendTLV(o.Derived, entry)
		}
	}
	return o, nil
}

func (o *topicOptions) preallocateOK(partitions uint32) bool {
	return !o.Preallocate || o.SegmentSize*uint64(partitions) <= maxPreallocateBytes
}

func catalogSpec(key string) *wire.OptionSpec {
	for i := range topicCatalog {
		if topicCatalog[i].Key == key {
			return &topicCatalog[i]
		}
	}
	return nil
}

func (o *topicOptions) resetToDefault(key string) {
	switch key {
	case optMessageExpiry:
		o.MessageExpiry = topicDefaults.MessageExpiry
	case optMaxTopicSize:
		o.MaxTopicSize = topicDefaults.MaxTopicSize
	case optSegmentSize:
		o.SegmentSize = topicDefaults.SegmentSize
	case optSizeToSave:
		o.SizeToSave = topicDefaults.SizeToSave
	}
}

// absorb applies one entry and reports whether it is an explicit value
// (false for the zero "use the default" sentinels).
func (o *topicOptions) absorb(key string, e wire.TLVEntry) (bool, error) {
	bad := wire.InvalidOptionValue
	switch key {
	case optCompression:
		switch e.ValueKind {
		case wire.KindUint8:
			if len(e.Value) != 1 || (e.Value[0] != wire.CompressionNone && e.Value[0] != wire.CompressionGzip) {
				return false, bad
			}
			o.Compression = e.Value[0]
		case wire.KindString:
			switch strings.ToLower(string(e.Value)) {
			case "none":
				o.Compression = wire.CompressionNone
			case "gzip":
				o.Compression = wire.CompressionGzip
			default:
				return false, bad
			}
		default:
			return false, bad
		}
		return true, nil
	case optMessageExpiry:
		v, ok := uintOrString(e, 8, parseDurationMicros)
		if !ok {
			return false, bad
		}
		o.MessageExpiry = v
		return v != 0, nil
	case optMaxTopicSize:
		v, ok := uintOrString(e, 8, parseSize)
		if !ok {
			return false, bad
		}
		o.MaxTopicSize = v
		return v != 0, nil
	case optSegmentSize:
		v, ok := uintOrString(e, 8, parseSize)
		if !ok {
			return false, bad
		}
		o.SegmentSize = v
		return v != 0, nil
	case optSizeToSave:
		v, ok := uintOrString(e, 8, parseSize)
		if !ok || v > maxSizeToSave {
			return false, bad
		}
		o.SizeToSave = v
		return v != 0, nil
	case optMessagesToSave:
		v, ok := uintOrString(e, 4, func(s string) (uint64, bool) {
			n, err := strconv.ParseUint(s, 10, 32)
			return n, err == nil
		})
		if !ok || v == 0 || v > maxMessagesToSave {
			return false, bad
		}
		o.MessagesToSave = uint32(v)
		return true, nil
	case optEnforceFsync, optPreallocate:
		var v bool
		switch e.ValueKind {
		case wire.KindBool:
			b, ok := e.AsBool()
			if !ok {
				return false, bad
			}
			v = b
		case wire.KindString:
			b, err := strconv.ParseBool(string(e.Value))
			if err != nil || (string(e.Value) != "true" && string(e.Value) != "false") {
				return false, bad
			}
			v = b
		default:
			return false, bad
		}
		if key == optEnforceFsync {
			o.EnforceFsync = v
		} else {
			o.Preallocate = v
		}
		return true, nil
	}
	return false, wire.UnsupportedOptionKey
}

// uintOrString accepts the canonical unsigned kind of width size bytes or a
// string parsed by parse.
func uintOrString(e wire.TLVEntry, size int, parse func(string) (uint64, bool)) (uint64, bool) {
	switch e.ValueKind {
	case wire.KindUint64:
		if size != 8 || len(e.Value) != 8 {
			return 0, false
		}
		return binary.LittleEndian.Uint64(e.Value), true
	case wire.KindUint32:
		if size != 4 || len(e.Value) != 4 {
			return 0, false
		}
		return uint64(binary.LittleEndian.Uint32(e.Value)), true
	case wire.KindString:
		return parse(strings.TrimSpace(string(e.Value)))
	}
	return 0, false
}

func (o *topicOptions) canonical(key string) wire.TLVEntry {
	switch key {
	case optCompression:
		name := "none"
		if o.Compression == wire.CompressionGzip {
			name = "gzip"
		}
		return wire.StringEntry(key, name)
	case optMessageExpiry:
		return wire.Uint64Entry(key, o.MessageExpiry)
	case optMaxTopicSize:
		return wire.Uint64Entry(key, o.MaxTopicSize)
	case optSegmentSize:
		return wire.Uint64Entry(key, o.SegmentSize)
	case optEnforceFsync:
		return wire.BoolEntry(key, o.EnforceFsync)
	case optMessagesToSave:
		return wire.Uint32Entry(key, o.MessagesToSave)
	case optSizeToSave:
		return wire.Uint64Entry(key, o.SizeToSave)
	case optPreallocate:
		return wire.BoolEntry(key, o.Preallocate)
	}
	return wire.TLVEntry{}
}

// parseSize reads "1048576", "1 MiB", "128MB", "unlimited".
func parseSize(s string) (uint64, bool) {
	switch strings.ToLower(s) {
	case "unlimited", "none":
		return wire.Unlimited, true
	}
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}[unit]
	if mult == 0 {
		return 0, false
	}
	v := f * mult
	if v >= math.MaxUint64 {
		return 0, false
	}
	return uint64(v), true
}

// parseDurationMicros reads "none"/"never_expire", plain microseconds, or a
// duration such as "1h 30m", "7d" or "15s".
func parseDurationMicros(s string) (uint64, bool) {
	switch strings.ToLower(s) {
	case "none", "never", "never_expire", "unlimited":
		return wire.Unlimited, true
	case "server_default", "default":
		return 0, true
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, true
	}
	var total time.Duration
	for _, part := range strings.Fields(s) {
		if strings.HasSuffix(part, "d") {
			n, err := strconv.ParseUint(strings.TrimSuffix(part, "d"), 10, 32)
			if err != nil {
				return 0, false
			}
			total += time.Duration(n) * 24 * time.Hour
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d < 0 {
			return 0, false
		}
		total += d
	}
	if total <= 0 {
		return 0, false
	}
	return uint64(total.Microseconds()), true
}
