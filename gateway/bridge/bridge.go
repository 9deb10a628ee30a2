package bridge

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Config configures a Bridge.
type Config struct {
	// Stream is the Iggy stream holding the Kafka topics. Default "kafka".
	Stream string
	// AutoCreateTopics lets Topic create a missing topic when asked to.
	AutoCreateTopics bool
	// DefaultPartitions is used for auto-created topics and for CreateTopics
	// requests that leave the count to the broker. Default 1.
	DefaultPartitions int32
	// MaxMessageBytes is the largest record (key, value and headers) a
	// produce may carry. Default 1048588, Kafka's message.max.bytes.
	MaxMessageBytes int32
	// FetchCodec is the codec of fetched magic-2 batches: "producer" (or
	// empty, the default) hands each batch back compressed the way it was
	// produced; "none", "gzip", "snappy", "lz4" or "zstd" uses that codec for
	// every batch. On a fast network "none" saves both sides the CPU of
	// compressing what crosses it.
	FetchCodec string
	// Logger receives rare events (cache rebuilds, foreign writers). Default: discard.
	Logger *slog.Logger
	// Clock times Wait's re-poll and the topic config refresh; default the wall clock.
	Clock clock.Clock
	// TailCacheBytes bounds the memory that keeps producers' own Kafka batches of the recent
	// tail, so that a consumer fetching what was just produced gets those bytes as they came
	// instead of batches rebuilt from Iggy and compressed again. Default 32 MiB; negative
	// turns the cache off.
	TailCacheBytes int64
	// FetchCacheBytes bounds the memory that keeps the Kafka batches fetches rebuilt from Iggy,
	// so that other consumers of the same records (other groups, a group reading again) get
	// those bytes instead of the records being read, rebuilt and compressed once more. A sixteenth
	// of it (from 16 MiB on, with the tail cache on) keeps the producers' own batches the tail
	// cache lets go, so that a reader starting at one gets its producer's bytes. The memory is
	// apart from the Go heap and taken as it fills. Default 256 MiB; negative turns the cache
	// off.
	FetchCacheBytes int64
	// KeptBatchesBytes, above zero, keeps the producers' batches the tail cache lets go on disk,
	// in files of KeptBatchesDir up to this many bytes (at most 16 GiB), instead of the sixteenth
	// of FetchCacheBytes: a reader far behind the tail then gets its producer's bytes as Kafka
	// serves them from its log files, through the page cache, and the whole of FetchCacheBytes
	// keeps rebuilt batches. The files are scratch, gone when the bridge closes or the process
	// ends (keptdisk.go). Zero or negative: in memory.
	KeptBatchesBytes int64
	// KeptBatchesDir is the directory of the kept batches' files with KeptBatchesBytes; default
	// iggy-kafka-kept in the OS temporary directory. One that cannot be written keeps them in
	// memory, as with KeptBatchesBytes 0, and logs a warning.
	KeptBatchesDir string
	// TopicDeleted, when set, is called after a topic was deleted through the bridge, so that
	// the group coordinator drops its committed offsets at once instead of at its next resync.
	TopicDeleted func(name string)
	// LeadersMoved, when set, counts the changes of the fleet's view that may have moved
	// partition leaders between gateways. A producer cache confirmed before the latest change
	// is checked against Iggy before it is trusted again, however recent this gateway's own last
	// append was (verifyFresh): a producer may have gone to another gateway and back since.
	LeadersMoved func() uint64
	// Fenced, when set, reports whether this gateway must not write now (it lost its lease on
	// the store). A produce is refused with NOT_LEADER_OR_FOLLOWER then, checked right before
	// its batch goes to Iggy, however long it waited for the partition: written later, once the
	// store is back, it could land next to the resend its client made through another gateway.
	Fenced func() bool
	// Metrics receives the bridge's counts; nil keeps them in a Metrics of the bridge's own.
	Metrics *Metrics
	// ProducerIDExpiration is how long an idempotent producer's state is kept per partition
	// after its last batch there, as Kafka's producer.id.expiration.ms. Default 1 day.
	ProducerIDExpiration time.Duration
}

const (
	defaultStream     = "kafka"
	defaultMaxMessage = 1048588
	defaultTailCache  = 64 << 20
	defaultFetchCache = 256 << 20
	// keptShare: a sixteenth of Config.FetchCacheBytes keeps producers' own batches once the tail
	// cache lets them go, the rest the batches fetches rebuilt. Producers fill the kept share
	// whether anyone reads behind the tail or not, so it is small enough for the memory goal
	// (docs/performance.md, Memory); a reader that finds a batch in it gets the producer's bytes
	// instead of a rebuild, which for compressible values is 8 times the CPU.
	keptShare             = 16
	producerIDsTopic      = "producer_ids"
	metaSuffix            = ".meta"
	maxKafkaTopicName     = 249
	maxPartitionsPerTopic = 1000
)

// Bridge maps Kafka requests onto Iggy. It is safe for concurrent use; its
// only state is caches that Iggy can rebuild (see doc.go).
type Bridge struct {
	cfg    Config
	fetchC fetchCodec
	admin  iggyAPI
	raw    iggyAPI // admin without the outage guard, for the outage probes
	meta   string
	log    *slog.Logger
	clock  clock.Clock
	ids    idGen
	closed atomic.Bool
	// metrics is Config.Metrics.
	metrics *Metrics

	mu    sync.RWMutex
	parts map[partKey]*partState

	conf confCache

	known  knownTopics  // partitions of the topics seen, for a store outage (outage.go)
	probes outageProbes // the reads of the topic list during an outage (outage.go)

	cache   *tailCache    // nil when Config.TailCacheBytes < 0
	rebuilt *rebuiltCache // nil when Config.FetchCacheBytes < 0
	// kept holds producers' batches the tail cache let go, in a share of the fetch cache's
	// memory (keptShare); nil when either cache is off.
	kept *rebuiltCache
	// rebuilds are the fetches rebuilding from Iggy for the fetch cache (rebuilt.go).
	rebuilds rebuilds
	// sources are the fetch path's sources in the order a read asks them (fetchread.go).
	sources [4]fetchSource

	// converting bounds the produces converting or appending at once (produce.go).
	converting chan struct{}
	// scanning bounds the producer tail scans running at once (producers.go).
	scanning chan struct{}
}

type partKey struct {
	topic     string
	partition int32
}

// New ensures the Kafka stream and the "<stream>.meta" stream with its
// producer_ids topic exist, using admin (the gateway's own Iggy client).
func New(ctx context.Context, admin *iggy.Client, cfg Config) (*Bridge, error) {
	return newBridge(ctx, wrap(admin), cfg)
}

func newBridge(ctx context.Context, admin iggyAPI, cfg Config) (*Bridge, error) {
	cfg.setDefaults()
	fc, err := parseFetchCodec(cfg.FetchCodec)
	if err != nil {
		return nil, err
	}
	b := &Bridge{cfg: cfg, fetchC: fc, meta: cfg.Stream + metaSuffix, log: cfg.Logger, clock: clock.Or(cfg.Clock), metrics: cfg.Metrics, parts: map[partKey]*partState{}}
	b.admin, b.raw = b.guard(admin), admin
	b.probes.init()
	b.conf.m = map[string]topicConf{}
	b.converting = make(chan struct{}, max(8, 2*runtime.GOMAXPROCS(0)))
	b.scanning = make(chan struct{}, maxScans)
	if cfg.TailCacheBytes > 0 {
		b.cache = &tailCache{limit: int(min(cfg.TailCacheBytes, math.MaxInt32))}
	}
	if cfg.KeptBatchesBytes > 0 && b.cache != nil {
		dir := cfg.KeptBatchesDir
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "iggy-kafka-kept")
		}
		if b.kept, err = newKeptDiskCache(dir, cfg.KeptBatchesBytes, b.metrics); err != nil {
			// A directory the gateway cannot write (a read-only file system) costs readers behind
			// the tail the batches kept beyond the memory share, not the gateway its start.
			b.log.Warn("producers' batches beyond the tail kept in memory, not on disk", "dir", dir, "err", err)
			b.kept = nil
		}
	}
	if cfg.FetchCacheBytes > 0 {
		kept := cfg.FetchCacheBytes / keptShare
		if b.cache == nil || kept/rebuiltChunks < minRebuiltChunk || b.kept != nil {
			kept = 0 // on disk, or too small for chunks of their own: the whole cache for rebuilt batches
		}
		b.rebuilt = newRebuiltCache(cfg.FetchCacheBytes-kept, b.metrics)
		if kept > 0 {
			b.kept = newRebuiltCache(kept, b.metrics)
			b.kept.kept = true
		}
	}
	if b.kept != nil {
		b.cache.kept = b.kept
	}
	b.sources = [...]fetchSource{tailSource{b}, keptSource{b}, rebuiltSource{b}, iggySource{b}}
	var seed [8]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	b.ids.hi = binary.LittleEndian.Uint64(seed[:])
	if err := b.ensureMeta(ctx, admin); err != nil {
		return nil, err
	}
	// Every topic there is now can be listed through a store outage that comes before the
	// first full Metadata; topics seen later are added as they are looked up.
	ts, err := admin.topics(ctx, cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("bridge: list topics of %q: %w", cfg.Stream, err)
	}
	b.known.replace(ts)
	return b, nil
}

// setDefaults fills in the settings left at their zero value.
func (cfg *Config) setDefaults() {
	if cfg.Stream == "" {
		cfg.Stream = defaultStream
	}
	if cfg.DefaultPartitions <= 0 {
		cfg.DefaultPartitions = 1
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = defaultMaxMessage
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TailCacheBytes == 0 {
		cfg.TailCacheBytes = defaultTailCache
	}
	if cfg.FetchCacheBytes == 0 {
		cfg.FetchCacheBytes = defaultFetchCache
	}
	if cfg.Metrics == nil {
		cfg.Metrics = new(Metrics)
	}
	if cfg.ProducerIDExpiration <= 0 {
		cfg.ProducerIDExpiration = defaultProducerIDExpiration
	}
}

// ensureMeta ensures the Kafka stream and the "<stream>.meta" stream with its producer_ids and
// topic configs topics exist.
func (b *Bridge) ensureMeta(ctx context.Context, admin iggyAPI) error {
	for _, s := range []string{b.cfg.Stream, b.meta} {
		if err := admin.ensureStream(ctx, s); err != nil {
			return fmt.Errorf("bridge: stream %q: %w", s, err)
		}
	}
	for _, t := range []string{producerIDsTopic, topicConfigsTopic} {
		if _, err := admin.topic(ctx, b.meta, t); err != nil {
			if !isNotFound(err) {
				return fmt.Errorf("bridge: topic %s/%s: %w", b.meta, t, err)
			}
			err = admin.createTopic(ctx, b.meta, t, 1, topicOptions{})
			if err != nil && !errors.Is(kafkaErr(err), kerr.TopicAlreadyExists) {
				return fmt.Errorf("bridge: create %s/%s: %w", b.meta, t, err)
			}
		}
	}
	return nil
}

// Close drops the caches. It does not close the Iggy clients, which belong
// to the caller.
func (b *Bridge) Close() error {
	b.closed.Store(true)
	b.probes.close()
	b.mu.Lock()
	for _, st := range b.parts {
		st.wake()
	}
	b.metrics.partStates.Add(-int64(len(b.parts)))
	b.parts = map[partKey]*partState{}
	b.mu.Unlock()
	if b.rebuilt != nil {
		b.rebuilt.close()
	}
	if b.kept != nil {
		b.kept.close()
	}
	return nil
}

func (b *Bridge) info(t topicMeta) kafka.TopicInfo {
	return kafka.TopicInfo{Name: t.Name, ID: TopicID(b.cfg.Stream, t.ID, t.CreatedAt, t.Name), Partitions: int32(len(t.Partitions))}
}

// listTopics lists the Kafka topics, i.e. the topics of the Kafka stream.
func (b *Bridge) listTopics(ctx context.Context, as iggyAPI) ([]kafka.TopicInfo, error) {
	ts, err := as.topics(ctx, b.cfg.Stream)
	if err != nil {
		if known, ok := b.known.all(); ok && unreachable(err) {
			return known, nil
		}
		return nil, kafkaErr(err)
	}
	b.known.replace(ts)
	out := make([]kafka.TopicInfo, len(ts))
	for i, t := range ts {
		out[i] = b.info(t)
	}
	return out, nil
}

// topicInfo describes one topic, creating it with DefaultPartitions when it is
// missing, autoCreate is set and the bridge allows auto-creation. While Iggy
// cannot be reached it answers the topic's last known partitions, Offline.
func (b *Bridge) topicInfo(ctx context.Context, as iggyAPI, name string, autoCreate bool) (kafka.TopicInfo, error) {
	t, err := b.lookupTopic(ctx, as, name)
	if err == nil {
		return b.info(t), nil
	}
	if unreachable(err) {
		return b.offlineTopic(name, err)
	}
	if !isNotFound(err) || !autoCreate || !b.cfg.AutoCreateTopics {
		return kafka.TopicInfo{}, kafkaErr(err)
	}
	if err := validTopicName(name); err != nil {
		return kafka.TopicInfo{}, err
	}
	err = as.createTopic(ctx, b.cfg.Stream, name, uint32(b.cfg.DefaultPartitions), topicOptions{})
	if err != nil && !errors.Is(kafkaErr(err), kerr.TopicAlreadyExists) {
		return kafka.TopicInfo{}, adminErr(err)
	}
	t, err = b.lookupTopic(ctx, as, name)
	if unreachable(err) {
		return b.offlineTopic(name, err)
	}
	if err != nil {
		return kafka.TopicInfo{}, kafkaErr(err)
	}
	return b.info(t), nil
}

// validTopicName applies Kafka's rules: 1..249 characters of [a-zA-Z0-9._-],
// not "." or "..".
func validTopicName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > maxKafkaTopicName {
		return fmt.Errorf("%w: topic name %q", kerr.InvalidTopicException, name)
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: topic name %q has %q", kerr.InvalidTopicException, name, c)
		}
	}
	return nil
}

// createTopic creates a topic with partitions partitions (-1: the default) and
// the configs topicOptionsFrom accepts at creation.
func (b *Bridge) createTopic(ctx context.Context, as iggyAPI, name string, partitions int32, configs map[string]*string, validateOnly bool) error {
	if err := validTopicName(name); err != nil {
		return err
	}
	if partitions == -1 {
		partitions = b.cfg.DefaultPartitions
	}
	if partitions < 1 || partitions > maxPartitionsPerTopic {
		return fmt.Errorf("%w: %d partitions (1..%d)", kerr.InvalidPartitions, partitions, maxPartitionsPerTopic)
	}
	opts, conf, err := topicOptionsFrom(configs, true)
	if err != nil {
		return err
	}
	if validateOnly {
		if _, err := as.topic(ctx, b.cfg.Stream, name); err == nil {
			return fmt.Errorf("%w: %s", kerr.TopicAlreadyExists, name)
		} else if !isNotFound(err) {
			return adminErr(err)
		}
		return nil
	}
	b.forget(name)
	if err := as.createTopic(ctx, b.cfg.Stream, name, uint32(partitions), opts); err != nil {
		return adminErr(err)
	}
	b.known.setCount(name, partitions)
	// Written even without configs, so settings of an earlier topic of the
	// same name cannot come back.
	return b.writeTopicConf(ctx, name, conf, false)
}

// fixedConfigs are topic configs with the one value an Iggy-backed topic has: a create or an
// alteration may name that value, which changes nothing, and no other.
var fixedConfigs = map[string]string{}

// The values of message.timestamp.type: with LogAppendTime, fetches serve the time Iggy stored
// each batch (fetchForm).
const (
	createTime    = "CreateTime"
	logAppendTime = "LogAppendTime"
)

// cleanupPolicy checks a cleanup.policy value, a list of "delete" and "compact" as Kafka takes
// it, and returns what the config log keeps: the values in their order without repeats, or ""
// for "delete", the default. The log keeps every record whatever the policy: compaction is
// accepted (Kafka Connect refuses internal topics that are not compacted; Kafka Streams
// creates its changelogs compacted), stored and reported, and readers that read a topic from
// its start, as those do, end with the latest value of each key all the same; no space is
// reclaimed, and records without a key are taken.
func cleanupPolicy(v string) (string, error) {
	var list []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s != "delete" && s != "compact" {
			return "", fmt.Errorf("%w: cleanup.policy=%q (a list of delete and compact)", kerr.InvalidConfig, v)
		}
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	if len(list) == 1 && list[0] == "delete" {
		return "", nil
	}
	return strings.Join(list, ","), nil
}

// topicOptionsFrom is the one rule of which topic configs the gateway takes, at creation
// (creating) and in an alteration, and what they become: retention.ms and retention.bytes map
// onto Iggy's message_expiry and max_topic_size, max.message.bytes, compression.type and
// message.timestamp.type and cleanup.policy are kept in the config log (topicconf.go) and
// applied, fixedConfigs may name their one value, every other Kafka topic config is kept in the
// config log as it is and described back without effect (Kafka Streams sets segment.bytes and
// segment.ms on its repartition topics, operators set segment.ms and the like and read them
// back), and a name Kafka does not define, or a value not of the config's type, is
// kerr.InvalidConfig.
func topicOptionsFrom(configs map[string]*string, creating bool) (topicOptions, topicConf, error) {
	var o topicOptions
	var conf topicConf
	for k, vp := range configs {
		if vp == nil {
			continue
		}
		if err := setTopicConfig(&o, &conf, k, *vp); err != nil {
			return o, conf, err
		}
	}
	return o, conf, nil
}

// setTopicConfig applies one topic config to the Iggy options o or the config log's conf
// (topicOptionsFrom).
func setTopicConfig(o *topicOptions, conf *topicConf, k, v string) error {
	var err error
	switch k {
	case confMaxMessage:
		n, perr := strconv.ParseInt(v, 10, 32)
		if perr != nil || n < 1 {
			return fmt.Errorf("%w: max.message.bytes=%q", kerr.InvalidConfig, v)
		}
		conf.maxMessageBytes = int32(n)
	case "retention.ms":
		o.MessageExpiryMicros, err = retentionMicros(v)
	case "retention.bytes":
		o.MaxTopicSize, err = retentionBytes(v)
	case confCompression:
		if _, ok := compressionTypes[v]; !ok {
			return fmt.Errorf("%w: compression.type=%q (one of producer, uncompressed, gzip, snappy, lz4, zstd)", kerr.InvalidConfig, v)
		}
		conf.compression = v
	case confTimestampType:
		if v != createTime && v != logAppendTime {
			return fmt.Errorf("%w: message.timestamp.type=%q (CreateTime or LogAppendTime)", kerr.InvalidConfig, v)
		}
		conf.logAppendTime = v == logAppendTime
	case confCleanup:
		conf.cleanup, err = cleanupPolicy(v)
	default:
		err = storeTopicConfig(conf, k, v)
	}
	return err
}

// retentionMicros is Iggy's message expiry for retention.ms v. -1, Kafka's "forever", is Iggy's
// never rather than its default, which an Iggy server may set otherwise; so is a span past what
// µs can count.
func retentionMicros(v string) (uint64, error) {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < -1 || ms == 0 {
		return 0, fmt.Errorf("%w: retention.ms=%q", kerr.InvalidConfig, v)
	}
	if ms > 0 && ms <= math.MaxInt64/1000 {
		return uint64(ms) * 1000, nil
	}
	return math.MaxUint64, nil
}

// retentionBytes is Iggy's max topic size for retention.bytes v; -1 is unlimited.
func retentionBytes(v string) (uint64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < -1 || n == 0 {
		return 0, fmt.Errorf("%w: retention.bytes=%q", kerr.InvalidConfig, v)
	}
	if n > 0 {
		return uint64(n), nil
	}
	return math.MaxUint64, nil
}

// storeTopicConfig checks a topic config the gateway keeps without effect: one of
// fixedConfigs must have its one value and is not stored; any other Kafka topic config is kept
// in the config log as it is.
func storeTopicConfig(conf *topicConf, k, v string) error {
	if want, ok := fixedConfigs[k]; ok {
		if v != want {
			return fmt.Errorf("%w: %s=%q (only %q is supported)", kerr.InvalidConfig, k, v, want)
		}
		return nil
	}
	if err := kafka.CheckTopicConfig(k, v); err != nil {
		return err
	}
	if conf.stored == nil {
		conf.stored = map[string]string{}
	}
	conf.stored[k] = v
	return nil
}

// alterTopicConfigs replaces a topic's own configs with configs, as Kafka's AlterConfigs
// does: a config left out goes back to its default. The Iggy settings are changed first, as the
// connection's identity, so that without the permission to manage the topic nothing changes.
// validateOnly checks the values and that the topic exists, not that permission, which only a
// change can test.
func (b *Bridge) alterTopicConfigs(ctx context.Context, as iggyAPI, name string, configs map[string]*string, validateOnly bool) error {
	opts, conf, err := topicOptionsFrom(configs, false)
	if err != nil {
		return err
	}
	if validateOnly {
		_, err := b.lookupTopic(ctx, as, name)
		return adminErr(err)
	}
	if err := as.updateTopic(ctx, b.cfg.Stream, name, opts); err != nil {
		return adminErr(err)
	}
	return b.writeTopicConf(ctx, name, conf, false)
}

// deleteTopic deletes a topic and everything cached about it.
func (b *Bridge) deleteTopic(ctx context.Context, as iggyAPI, name string) error {
	err := as.deleteTopic(ctx, b.cfg.Stream, name)
	b.forget(name)
	if err != nil {
		return adminErr(err)
	}
	if b.cfg.TopicDeleted != nil {
		b.cfg.TopicDeleted(name)
	}
	return b.writeTopicConf(ctx, name, topicConf{}, true)
}

// createPartitions grows a topic to total partitions.
func (b *Bridge) createPartitions(ctx context.Context, as iggyAPI, name string, total int32, validateOnly bool) error {
	t, err := as.topic(ctx, b.cfg.Stream, name)
	if err != nil {
		return adminErr(err)
	}
	have := int32(len(t.Partitions))
	if total <= have {
		return fmt.Errorf("%w: topic %s has %d partitions, asked for %d", kerr.InvalidPartitions, name, have, total)
	}
	if total > maxPartitionsPerTopic {
		return fmt.Errorf("%w: %d partitions (at most %d)", kerr.InvalidPartitions, total, maxPartitionsPerTopic)
	}
	if validateOnly {
		return nil
	}
	if err := as.createPartitions(ctx, b.cfg.Stream, name, uint32(total-have)); err != nil {
		return adminErr(err)
	}
	b.known.setCount(name, total)
	return nil
}

// topicConfigs reports the topic's configs: the two Iggy settings that have
// Kafka names, the three of the config log, and the fixedConfigs. The config log
// is read first, so that what another gateway changed a moment ago is seen.
func (b *Bridge) topicConfigs(ctx context.Context, as iggyAPI, name string) ([]kafka.ConfigEntry, error) {
	t, err := as.topic(ctx, b.cfg.Stream, name)
	if err != nil {
		return nil, adminErr(err)
	}
	conf, err := b.freshTopicConf(ctx, name)
	if err != nil {
		return nil, err
	}
	codecDefault := compressionType(b.fetchC)
	codec := codecDefault
	if conf.compression != "" {
		codec = conf.compression
	}
	maxMsg, maxDefault := b.cfg.MaxMessageBytes, true
	if conf.maxMessageBytes > 0 {
		maxMsg, maxDefault = conf.maxMessageBytes, false
	}
	retMS, retDefault := "-1", true
	if e := t.Options.MessageExpiryMicros; e != 0 && e != math.MaxUint64 {
		retMS, retDefault = strconv.FormatUint(e/1000, 10), false
	}
	tsType := createTime
	if conf.logAppendTime {
		tsType = logAppendTime
	}
	retBytes, bytesDefault := "-1", true
	if s := t.Options.MaxTopicSize; s != 0 && s != math.MaxUint64 {
		retBytes, bytesDefault = strconv.FormatUint(s, 10), false
	}
	entries := []kafka.ConfigEntry{
		{Name: "cleanup.policy", Value: cmp.Or(conf.cleanup, "delete"), Default: conf.cleanup == "", DefaultValue: "delete"},
		{Name: "compression.type", Value: codec, Default: conf.compression == "", DefaultValue: codecDefault},
		{Name: "max.message.bytes", Value: strconv.Itoa(int(maxMsg)), Default: maxDefault, DefaultValue: strconv.Itoa(int(b.cfg.MaxMessageBytes))},
		{Name: "message.timestamp.type", Value: tsType, Default: !conf.logAppendTime, DefaultValue: createTime},
		{Name: "retention.bytes", Value: retBytes, Default: bytesDefault, DefaultValue: "-1"},
		{Name: "retention.ms", Value: retMS, Default: retDefault, DefaultValue: "-1"},
	}
	for _, nd := range kafka.StoredTopicConfigs() {
		v, set := conf.stored[nd[0]]
		entries = append(entries, kafka.ConfigEntry{Name: nd[0], Value: cmp.Or(v, nd[1]), Default: !set, DefaultValue: nd[1]})
		if set {
			entries[len(entries)-1].Value = v
		}
	}
	slices.SortFunc(entries, func(a, b kafka.ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}
