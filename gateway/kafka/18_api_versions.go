package kafka

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions: v0-4
//
// Behavior:
//   - Lists every key registered by the handler files' init functions with the version range it
//     serves, nothing more: a client that picks an advertised version is served (Produce v0-2
//     too, see 00_produce.go). The group keys (regGroupKey) are listed only when the server has
//     a Config.Groups.
//   - A version above ours is answered with a v0 response carrying UNSUPPORTED_VERSION and only
//     the ApiVersions range (KIP-511), so the client retries at a version we speak.
//   - Always answered, also before SASL authentication.
//   - Feature flags (KIP-584): from v4, transaction.version is supported from 0 to 2 (v3 leaves
//     a feature whose minimum is 0 out, as Kafka's does since KAFKA-17011); with a Config.Txns,
//     from v3, it is finalized at Config.TransactionVersion (none at 0), which is what clients
//     read to choose transactions v2 (franz-go and Kafka's Java client look at the finalized
//     level only). The finalized features' epoch is that level: a gateway restarted at a
//     higher one is seen by Java clients already running, which read the features again only
//     when the epoch grows.
//
// Not implemented:
// * Other features (metadata.version, group.version, ...): none is listed.
// * v5 (KIP-1242 cluster and node checks).
func init() { regKey(apiVersionsKey, 0, 4) }

// versionRange is what a key serves and ApiVersions lists: min..max.
type versionRange struct{ min, max int16 }

var versions = map[int16]versionRange{}

// regKey registers the versions a handler serves; every handler file calls it from init.
func regKey(key, min, max int16) {
	if _, dup := versions[key]; dup {
		panic("kafka: api key registered twice")
	}
	versions[key] = versionRange{min, max}
}

// groupVersions are the versions of the consumer-group keys, registered like the others but
// served (and advertised) only by a Server with a Config.Groups.
var groupVersions = map[int16]versionRange{}

// regGroupKey registers the versions a group handler serves; the group handler files call it
// from init instead of regKey.
func regGroupKey(key, min, max int16) {
	if _, dup := versions[key]; dup {
		panic("kafka: api key registered twice")
	}
	if _, dup := groupVersions[key]; dup {
		panic("kafka: api key registered twice")
	}
	groupVersions[key] = versionRange{min, max}
}

// served reports whether the key is served at this version by every Server.
func served(key, version int16) bool {
	v, ok := versions[key]
	return ok && version >= v.min && version <= v.max
}

// serves reports whether this server serves the key at this version: the group keys only with
// a coordinator.
func (s *Server) serves(key, version int16) bool {
	if served(key, version) {
		return true
	}
	if v, ok := txnVersions[key]; ok {
		return s.cfg.Txns != nil && version >= v.min && version <= v.max
	}
	v, ok := groupVersions[key]
	return ok && s.cfg.Groups != nil && version >= v.min && version <= v.max
}

// advertised is what ApiVersions lists: every key's range, the group keys' only with a group
// coordinator, the transaction keys' only with a transaction coordinator.
func (s *Server) advertised() map[int16]versionRange {
	if s.cfg.Groups == nil && s.cfg.Txns == nil {
		return versions
	}
	all := make(map[int16]versionRange, len(versions)+len(groupVersions)+len(txnVersions))
	for k, v := range versions {
		all[k] = v
	}
	if s.cfg.Groups != nil {
		for k, v := range groupVersions {
			all[k] = v
		}
	}
	if s.cfg.Txns != nil {
		for k, v := range txnVersions {
			all[k] = v
		}
	}
	return all
}

func (c *conn) handleApiVersions(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.ApiVersionsRequest)
	resp := areq.ResponseKind().(*kmsg.ApiVersionsResponse)
	listed := c.s.advertised()
	keys := make([]int16, 0, len(listed))
	for k := range listed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		v := listed[k]
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, v.min, v.max
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	if resp.Version >= 4 {
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = transactionVersionFeature, 0, maxTransactionVersion
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	if v := c.s.cfg.TransactionVersion; resp.Version >= 3 && c.s.cfg.Txns != nil && v > 0 {
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = transactionVersionFeature, v, v
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		resp.FinalizedFeaturesEpoch = int64(v)
	}
	return resp, nil
}

// transactionVersionFeature is Kafka's feature of the transaction protocol (KIP-890), and
// maxTransactionVersion the highest level served: 2, transactions v2.
const (
	transactionVersionFeature       = "transaction.version"
	maxTransactionVersion     int16 = 2
)

func (c *conn) apiVersionsUnsupported() kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	v := versions[apiVersionsKey]
	ak := kmsg.NewApiVersionsResponseApiKey()
	ak.ApiKey, ak.MinVersion, ak.MaxVersion = apiVersionsKey, v.min, v.max
	resp.ApiKeys = append(resp.ApiKeys, ak)
	return resp
}
