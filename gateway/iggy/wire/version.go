package wire

import (
	"fmt"
	"runtime/debug"
)

// Protocol versions are packed semver: ten bits each for major, minor and
// patch, so that packed values order like the versions they stand for.
const versionBits = 10
const versionMask = 1<<versionBits - 1

// ProtocolVersion is the version this codec speaks: 0.11.0, packed 11264.
var ProtocolVersion = PackVersion(0, 11, 0)

// SDKName and SDKVersion are what our client announces at login, where the
// server logs them and lists them with the session's client: the gateway names
// itself. SDKVersion is the module version the binary was built from, or
// "(devel)"; a binary with a version set at link time sets it at start.
const SDKName = "iggy-kafka"

var SDKVersion = buildVersion()

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// PackVersion packs a semver. Components above 1023 are truncated to ten bits.
func PackVersion(major, minor, patch uint32) uint32 {
	return (major&versionMask)<<(2*versionBits) | (minor&versionMask)<<versionBits | patch&versionMask
}

// UnpackVersion splits a packed version into its components.
func UnpackVersion(v uint32) (major, minor, patch uint32) {
	return v >> (2 * versionBits) & versionMask, v >> versionBits & versionMask, v & versionMask
}

// VersionString formats a packed version as major.minor.patch.
func VersionString(v uint32) string {
	a, b, c := UnpackVersion(v)
	return fmt.Sprintf("%d.%d.%d", a, b, c)
}

// MinCompatibleVersion is the oldest client version a server speaking
// ProtocolVersion accepts: the same version with patch 0.
func MinCompatibleVersion(server uint32) uint32 {
	return server &^ versionMask
}

// VersionCompatible applies the server's login gate: the client is at least
// the server's major.minor.0 and not newer than the server's major.minor.
func VersionCompatible(client, server uint32) bool {
	return client >= MinCompatibleVersion(server) && client>>versionBits <= server>>versionBits
}
