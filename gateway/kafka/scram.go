package kafka

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// SCRAMUsers keeps the SCRAM credentials that SaslAuthenticate checks and that
// DescribeUserScramCredentials and AlterUserScramCredentials read and change (Config.SCRAM).
// The gateway keeps them in Iggy, so every gateway of a fleet sees the same; the exchange itself
// (package scram) runs here.
type SCRAMUsers interface {
	// Lookup returns user's credential for mechanism m as every gateway sees it now; found is
	// false when the user has none.
	Lookup(ctx context.Context, user string, m scram.Mechanism) (cred scram.Credential, found bool, err error)
	// Login returns the Storage a connection acts through once it proved that it knows the
	// password of user's credential cred: clientKey is the ClientKey the exchange recovered from
	// the client's proof. An error refuses the connection.
	Login(ctx context.Context, user string, cred scram.Credential, clientKey []byte) (Storage, error)
	// Credentials returns the credentials of every user that has one.
	Credentials(ctx context.Context) (map[string][]scram.Credential, error)
	// Manages reports whether the SASL user by may alter (alter true) or describe the
	// credentials of other users: Iggy's manage-users or read-users permission.
	Manages(ctx context.Context, by string, alter bool) (bool, error)
	// Set stores user's credential for m, made from the SaltedPassword that a connection
	// authenticated as by sent: user itself, or an administrator (Manages), else
	// kerr.ClusterAuthorizationFailed.
	Set(ctx context.Context, by, user string, m scram.Mechanism, salt []byte, iterations int32, saltedPassword []byte) error
	// Delete removes user's credential for m, at the request of a connection authenticated as
	// by, user itself or an administrator; kerr.ResourceNotFound when there is none.
	Delete(ctx context.Context, by, user string, m scram.Mechanism) error
}

// scramUsers is Config.SCRAM, or without it a server that keeps no credentials: none is found
// and none can be set, while the SCRAM keys are still answered as ApiVersions lists them.
func (s *Server) scramUsers() SCRAMUsers {
	if s.cfg.SCRAM == nil {
		return noSCRAM{}
	}
	return s.cfg.SCRAM
}

type noSCRAM struct{}

var errNoSCRAM = kerr.UnsupportedSaslMechanism

func (noSCRAM) Lookup(context.Context, string, scram.Mechanism) (scram.Credential, bool, error) {
	return scram.Credential{}, false, nil
}
func (noSCRAM) Login(context.Context, string, scram.Credential, []byte) (Storage, error) {
	return nil, errNoSCRAM
}
func (noSCRAM) Credentials(context.Context) (map[string][]scram.Credential, error) { return nil, nil }
func (noSCRAM) Manages(context.Context, string, bool) (bool, error)                { return false, nil }
func (noSCRAM) Set(context.Context, string, string, scram.Mechanism, []byte, int32, []byte) error {
	return errNoSCRAM
}
func (noSCRAM) Delete(context.Context, string, string, scram.Mechanism) error { return errNoSCRAM }

// errNoCredential is a SCRAM client-first message of a user without a credential for the
// mechanism; Kafka refuses it at once as well.
var errNoCredential = errors.New("no SCRAM credential for the user and mechanism")

// scramFirst answers a client-first message with the server-first message.
func (c *conn) scramFirst(ctx context.Context, m scram.Mechanism, msg []byte) ([]byte, error) {
	first, err := scram.ParseClientFirst(msg)
	if err != nil {
		return nil, err
	}
	c.saslAttempt = first.User
	cred, found, err := c.s.cfg.SCRAM.Lookup(ctx, first.User, m)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, errNoCredential
	}
	ex, serverFirst, err := scram.NewExchange(first, cred)
	if err != nil {
		return nil, err
	}
	c.scram = ex
	return serverFirst, nil
}

// scramFinal checks the client-final message and, when the proof holds, switches the
// connection to the user's Storage and answers the server-final message.
func (c *conn) scramFinal(ctx context.Context, msg []byte) ([]byte, error) {
	ex := c.scram
	c.scram = nil
	serverFinal, clientKey, err := ex.Final(msg)
	if err != nil {
		return nil, err
	}
	b, err := c.s.cfg.SCRAM.Login(ctx, ex.User(), ex.Credential(), clientKey)
	if err != nil || b == nil {
		if err == nil {
			err = errors.New("no storage for user")
		}
		return nil, err
	}
	c.storage = b
	c.authed, c.user = true, ex.User()
	return serverFinal, nil
}
