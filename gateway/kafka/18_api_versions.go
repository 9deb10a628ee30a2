package kafka

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions: v0-4
//
// Behavior:
//   - Lists every key registered by the handler files' init functions with its version range.
//   - A version above ours is answered with a v0 response carrying UNSUPPORTED_VERSION and only
//     the ApiVersions range (KIP-511), so the client retries at a version we speak.
//   - Always answered, also before SASL authentication.
//
// Not implemented:
// * Feature flags (KIP-584): nothing is finalized or supported.
// * v5 (KIP-1242 cluster and node checks).
func init() { regKey(apiVersionsKey, 0, 4) }

type versionRange struct{ min, max int16 }

var versions = map[int16]versionRange{}

// regKey registers the versions a handler serves; every handler file calls it from init.
func regKey(key, min, max int16) {
	if _, dup := versions[key]; dup {
		panic("kafka: api key registered twice")
	}
	versions[key] = versionRange{min, max}
}

// served reports whether the key is served at this version.
func served(key, version int16) bool {
	v, ok := versions[key]
	return ok && version >= v.min && version <= v.max
}

func (c *conn) handleApiVersions(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.ApiVersionsRequest)
	resp := areq.ResponseKind().(*kmsg.ApiVersionsResponse)
	keys := make([]int16, 0, len(versions))
	for k := range versions {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		v := versions[k]
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
