package kafka

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfigs keeps the dynamic broker configs (Config.BrokerConfigs) as Kafka keeps them: per
// scope, "" for the cluster-wide default and a node id for one broker, in Iggy, so every gateway
// of a fleet describes the same.
type BrokerConfigs interface {
	// BrokerConfigs returns every scope's configs as they are now: scope -> name -> value.
	BrokerConfigs(ctx context.Context) (map[string]map[string]string, error)
	// SetBrokerConfigs replaces the configs of one scope.
	SetBrokerConfigs(ctx context.Context, scope string, configs map[string]string) error
}

// brokerConfigDef is Kafka's definition of a broker config that can be changed while brokers
// run (Kafka's DynamicBrokerConfig): its type and default.
type brokerConfigDef struct {
	typ kmsg.ConfigType
	def string
}

// brokerConfigs are the broker configs Kafka lets AlterConfigs change, those that are not
// per-listener (SSL stores, listeners, SASL JAAS). The gateway stores and describes them; none
// takes effect over Iggy (a gateway's own settings are its flags).
var brokerConfigs = map[string]brokerConfigDef{
	"background.threads":                             {kmsg.ConfigTypeInt, "10"},
	"compression.gzip.level":                         {kmsg.ConfigTypeInt, "-1"},
	"compression.lz4.level":                          {kmsg.ConfigTypeInt, "9"},
	"compression.type":                               {kmsg.ConfigTypeString, "producer"},
	"compression.zstd.level":                         {kmsg.ConfigTypeInt, "3"},
	"follower.replication.throttled.rate":            {kmsg.ConfigTypeLong, "9223372036854775807"},
	"leader.replication.throttled.rate":              {kmsg.ConfigTypeLong, "9223372036854775807"},
	"log.cleaner.backoff.ms":                         {kmsg.ConfigTypeLong, "15000"},
	"log.cleaner.dedupe.buffer.size":                 {kmsg.ConfigTypeLong, "134217728"},
	"log.cleaner.delete.retention.ms":                {kmsg.ConfigTypeLong, "86400000"},
	"log.cleaner.io.buffer.size":                     {kmsg.ConfigTypeInt, "524288"},
	"log.cleaner.io.max.bytes.per.second":            {kmsg.ConfigTypeDouble, "1.7976931348623157E308"},
	"log.cleaner.max.compaction.lag.ms":              {kmsg.ConfigTypeLong, "9223372036854775807"},
	"log.cleaner.min.cleanable.ratio":                {kmsg.ConfigTypeDouble, "0.5"},
	"log.cleaner.min.compaction.lag.ms":              {kmsg.ConfigTypeLong, "0"},
	"log.cleaner.threads":                            {kmsg.ConfigTypeInt, "1"},
	"log.cleanup.policy":                             {kmsg.ConfigTypeList, "delete"},
	"log.flush.interval.messages":                    {kmsg.ConfigTypeLong, "9223372036854775807"},
	"log.flush.interval.ms":                          {kmsg.ConfigTypeLong, ""},
	"log.index.interval.bytes":                       {kmsg.ConfigTypeInt, "4096"},
	"log.index.size.max.bytes":                       {kmsg.ConfigTypeInt, "10485760"},
	"log.local.retention.bytes":                      {kmsg.ConfigTypeLong, "-2"},
	"log.local.retention.ms":                         {kmsg.ConfigTypeLong, "-2"},
	"log.message.timestamp.after.max.ms":             {kmsg.ConfigTypeLong, "3600000"},
	"log.message.timestamp.before.max.ms":            {kmsg.ConfigTypeLong, "9223372036854775807"},
	"log.message.timestamp.type":                     {kmsg.ConfigTypeString, "CreateTime"},
	"log.preallocate":                                {kmsg.ConfigTypeBoolean, "false"},
	"log.retention.bytes":                            {kmsg.ConfigTypeLong, "-1"},
	"log.retention.hours":                            {kmsg.ConfigTypeInt, "168"},
	"log.retention.minutes":                          {kmsg.ConfigTypeInt, ""},
	"log.retention.ms":                               {kmsg.ConfigTypeLong, ""},
	"log.roll.hours":                                 {kmsg.ConfigTypeInt, "168"},
	"log.roll.jitter.hours":                          {kmsg.ConfigTypeInt, "0"},
	"log.roll.jitter.ms":                             {kmsg.ConfigTypeLong, ""},
	"log.roll.ms":                                    {kmsg.ConfigTypeLong, ""},
	"log.segment.bytes":                              {kmsg.ConfigTypeInt, "1073741824"},
	"log.segment.delete.delay.ms":                    {kmsg.ConfigTypeLong, "60000"},
	"max.connection.creation.rate":                   {kmsg.ConfigTypeInt, "2147483647"},
	"max.connections":                                {kmsg.ConfigTypeInt, "2147483647"},
	"max.connections.per.ip":                         {kmsg.ConfigTypeInt, "2147483647"},
	"max.connections.per.ip.overrides":               {kmsg.ConfigTypeString, ""},
	"message.max.bytes":                              {kmsg.ConfigTypeInt, "1048588"},
	"metric.reporters":                               {kmsg.ConfigTypeList, ""},
	"min.insync.replicas":                            {kmsg.ConfigTypeInt, "1"},
	"num.io.threads":                                 {kmsg.ConfigTypeInt, "8"},
	"num.network.threads":                            {kmsg.ConfigTypeInt, "3"},
	"num.recovery.threads.per.data.dir":              {kmsg.ConfigTypeInt, "2"},
	"num.replica.fetchers":                           {kmsg.ConfigTypeInt, "1"},
	"producer.id.expiration.ms":                      {kmsg.ConfigTypeInt, "86400000"},
	"replica.alter.log.dirs.io.max.bytes.per.second": {kmsg.ConfigTypeLong, "9223372036854775807"},
	"transaction.partition.verification.enable":      {kmsg.ConfigTypeBoolean, "true"},
	"unclean.leader.election.enable":                 {kmsg.ConfigTypeBoolean, "false"},
}

// CheckBrokerConfig checks that name is a broker config Kafka changes dynamically and value is
// of its type: a config the gateway reports read-only (its flags, such as broker.id) is
// INVALID_REQUEST, as Kafka refuses a config it cannot update dynamically, and a name Kafka does
// not define INVALID_CONFIG.
func CheckBrokerConfig(name, value string) error {
	d, ok := brokerConfigs[name]
	if !ok {
		if _, static := configDefs[name]; static {
			return Refuse(kerr.InvalidRequest, "cannot update these configs dynamically: %s (a gateway's own settings are its flags)", name)
		}
		return Refuse(kerr.InvalidConfig, "unknown broker config %q (or one Kafka does not change while brokers run)", name)
	}
	if err := checkType(d.typ, value); err != nil {
		return Refuse(kerr.InvalidConfig, "%s=%q is not a valid %s", name, value, d.typ)
	}
	return nil
}

// checkType checks that value parses as a config of type typ.
func checkType(typ kmsg.ConfigType, value string) error {
	var err error
	switch typ {
	case kmsg.ConfigTypeInt:
		_, err = strconv.ParseInt(value, 10, 32)
	case kmsg.ConfigTypeLong:
		_, err = strconv.ParseInt(value, 10, 64)
	case kmsg.ConfigTypeDouble:
		_, err = strconv.ParseFloat(value, 64)
	case kmsg.ConfigTypeBoolean:
		if v := strings.ToLower(value); v != "true" && v != "false" {
			err = fmt.Errorf("not a boolean")
		}
	}
	return err
}

// brokerConfigsOf is Config.BrokerConfigs, or a server that keeps none.
func (s *Server) brokerConfigsOf() BrokerConfigs {
	if s.cfg.BrokerConfigs == nil {
		return noBrokerConfigs{}
	}
	return s.cfg.BrokerConfigs
}

type noBrokerConfigs struct{}

func (noBrokerConfigs) BrokerConfigs(context.Context) (map[string]map[string]string, error) {
	return nil, nil
}
func (noBrokerConfigs) SetBrokerConfigs(_ context.Context, _ string, configs map[string]string) error {
	if len(configs) == 0 {
		return nil
	}
	return Refuse(kerr.InvalidRequest, "this gateway keeps no dynamic broker configs")
}

// dynamicBrokerEntries are the dynamic configs a broker resource lists: for the cluster-wide
// resource ("") those set there (DYNAMIC_DEFAULT_BROKER_CONFIG); for this node each dynamic
// config with its value by Kafka's precedence, the node's own (DYNAMIC_BROKER_CONFIG), the
// cluster's default (DYNAMIC_DEFAULT_BROKER_CONFIG), or Kafka's default (DEFAULT_CONFIG).
func dynamicBrokerEntries(scopes map[string]map[string]string, resource string) []ConfigEntry {
	var out []ConfigEntry
	names := make([]string, 0, len(brokerConfigs))
	for n := range brokerConfigs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		def := brokerConfigs[n].def
		if v, ok := scopes[resource][n]; ok {
			src := kmsg.ConfigSourceDynamicBrokerConfig
			if resource == "" {
				src = kmsg.ConfigSourceDynamicDefaultBrokerConfig
			}
			out = append(out, ConfigEntry{Name: n, Value: v, DefaultValue: def, Source: src})
			continue
		}
		if resource == "" {
			continue
		}
		if v, ok := scopes[""][n]; ok {
			out = append(out, ConfigEntry{Name: n, Value: v, DefaultValue: def, Source: kmsg.ConfigSourceDynamicDefaultBrokerConfig})
			continue
		}
		out = append(out, ConfigEntry{Name: n, Value: def, Default: true, Source: kmsg.ConfigSourceDefaultConfig})
	}
	return out
}

// alterBrokerScope validates configs for one scope and stores them unless validateOnly.
func (c *conn) alterBrokerScope(req *request, scope string, configs map[string]string, validateOnly bool) error {
	for n, v := range configs {
		if err := CheckBrokerConfig(n, v); err != nil {
			return err
		}
	}
	if validateOnly {
		return nil
	}
	return c.s.brokerConfigsOf().SetBrokerConfigs(req.ctx, scope, configs)
}

// incrementalAlterBroker applies IncrementalAlterConfigs operations to one scope's dynamic
// broker configs, as applyOps does to a topic's; a request that changes nothing (DELETEs of
// configs not set) succeeds without a write.
func (c *conn) incrementalAlterBroker(req *request, scope string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) error {
	scopes, err := c.s.brokerConfigsOf().BrokerConfigs(req.ctx)
	if err != nil {
		return err
	}
	own := make(map[string]*string, len(scopes[scope]))
	for n, v := range scopes[scope] {
		own[n] = kmsg.StringPtr(v)
	}
	value := make(map[string]string, len(brokerConfigs))
	for n, d := range brokerConfigs {
		value[n] = d.def
		if v, ok := scopes[""][n]; ok && scope != "" {
			value[n] = v
		}
	}
	applyOps(own, value, ops)
	next := make(map[string]string, len(own))
	for n, v := range own {
		next[n] = *v
	}
	if maps.Equal(next, scopes[scope]) || (len(next) == 0 && len(scopes[scope]) == 0) {
		return nil
	}
	return c.alterBrokerScope(req, scope, next, validateOnly)
}
