package wire

import "strconv"

// EvictionReason is the last byte of an eviction header: why the server ended
// the session.
type EvictionReason uint8

// Eviction reasons.
const (
	EvictNoSession               EvictionReason = 1
	EvictClientReleaseTooLow     EvictionReason = 2
	EvictClientReleaseTooHigh    EvictionReason = 3
	EvictInvalidRequestOperation EvictionReason = 4
	EvictInvalidRequestBody      EvictionReason = 5
	EvictInvalidRequestBodySize  EvictionReason = 6
	EvictSessionTooLow           EvictionReason = 7
	EvictSessionReleaseMismatch  EvictionReason = 8
	EvictInvalidCredentials      EvictionReason = 9
	EvictInvalidToken            EvictionReason = 10
	EvictUserInactive            EvictionReason = 11
	EvictSessionError            EvictionReason = 12
	EvictStaleClient             EvictionReason = 13
	EvictIncompatibleProtocol    EvictionReason = 14
	EvictMalformedLogin          EvictionReason = 15
)

var evictionNames = [...]string{
	EvictNoSession:               "NoSession",
	EvictClientReleaseTooLow:     "ClientReleaseTooLow",
	EvictClientReleaseTooHigh:    "ClientReleaseTooHigh",
	EvictInvalidRequestOperation: "InvalidRequestOperation",
	EvictInvalidRequestBody:      "InvalidRequestBody",
	EvictInvalidRequestBodySize:  "InvalidRequestBodySize",
	EvictSessionTooLow:           "SessionTooLow",
	EvictSessionReleaseMismatch:  "SessionReleaseMismatch",
	EvictInvalidCredentials:      "InvalidCredentials",
	EvictInvalidToken:            "InvalidToken",
	EvictUserInactive:            "UserInactive",
	EvictSessionError:            "SessionError",
	EvictStaleClient:             "StaleClient",
	EvictIncompatibleProtocol:    "IncompatibleProtocol",
	EvictMalformedLogin:          "MalformedLogin",
}

func (r EvictionReason) String() string {
	if int(r) < len(evictionNames) && evictionNames[r] != "" {
		return evictionNames[r]
	}
	return "EvictionReason(" + strconv.Itoa(int(r)) + ")"
}

// Code is the error the official Go SDK reports for an eviction with this
// reason, so that our client surfaces the same codes to its callers.
// IncompatibleProtocol maps to IncompatibleProtocolVersion only when the
// header carries a valid version window; EvictionHeader.Code checks that.
func (r EvictionReason) Code() Code {
	switch r {
	case EvictNoSession, EvictSessionTooLow, EvictSessionReleaseMismatch,
		EvictUserInactive, EvictSessionError:
		return Unauthenticated
	case EvictInvalidCredentials:
		return InvalidCredentials
	case EvictInvalidToken:
		return InvalidPersonalAccessToken
	case EvictStaleClient:
		return StaleClient
	case EvictIncompatibleProtocol:
		return IncompatibleProtocolVersion
	case EvictMalformedLogin:
		return InvalidFormat
	}
	return InvalidCommand
}
