package wire

import "fmt"

// Protocol versions are packed semver: ten bits each for major, minor and
// patch, so that packed values order like the versions they stand for.
const versionBits = 10
const versionMask = 1<<versionBits - 1

// ProtocolVersion is the version this codec speaks: 0.11.0, packed 11264.
var ProtocolVersion = PackVersion(0, 11, 0)

// SDKName and SDKVersion are what our client announces at login. They copy
// the official Go SDK's values because some servers log or gate on them.
const (
	SDKName    = "go-sdk"
	SDKVersion = "0.9.0-edge.4"
)

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
