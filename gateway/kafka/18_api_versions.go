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
//
// Not implemented:
// * Feature flags (KIP-584): nothing is finalized or supported.
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
	return resp, nil
}

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
