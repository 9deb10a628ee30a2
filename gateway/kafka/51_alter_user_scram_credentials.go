package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
)

// AlterUserScramCredentials: v0
//
// Behavior:
//   - Upserts and deletes SCRAM-SHA-256 (1) and SCRAM-SHA-512 (2) credentials through
//     Config.SCRAM, which keeps them in Iggy: the next authentication at any gateway checks the
//     new credential. Every gateway serves it, not only the controller, since Iggy holds the
//     state. One result per user, in the order the request first names it.
//   - A connection changes the credentials of its own SASL user, and those of any other Iggy
//     user when its user has Iggy's manage-users permission (Kafka asks for ALTER on the
//     cluster; the ACL view maps it to that permission). Anything else, and any change on a
//     gateway without SASL, is CLUSTER_AUTHORIZATION_FAILED. A credential a user sets holds an
//     Iggy token of that user; one an administrator sets for another user holds a token of the
//     administrator, and its logins act through the administrator's Iggy login with the user's
//     own permissions, which the gateway checks with Iggy's rule (gateway/scramstore.go). The
//     user must exist in Iggy: Kafka creates a user with its first credential, Iggy needs a
//     user to hold permissions, so a user unknown to Iggy is RESOURCE_NOT_FOUND.
//   - Checked before anything changes, as Kafka checks: an empty name is
//     UNACCEPTABLE_CREDENTIAL; a mechanism other than 1 and 2 UNSUPPORTED_SASL_MECHANISM;
//     iterations outside 4096..16384, an empty or oversized salt, or an empty salted password
//     UNACCEPTABLE_CREDENTIAL; a (user, mechanism) named twice DUPLICATE_RESOURCE. A user with
//     any of these has none of its changes made.
//   - Deletions go first, then upserts; deleting a credential that does not exist is
//     RESOURCE_NOT_FOUND, and the user's changes after a failed one are not made.
//   - A server without Config.SCRAM keeps no credentials: every change is
//     UNSUPPORTED_SASL_MECHANISM.
func init() { regKey(alterUserSCRAMKey, 0, 0) }

// scramChange is one deletion or upsertion of a request.
type scramChange struct {
	user       string
	mech       scram.Mechanism
	upsert     bool
	salt       []byte
	iterations int32
	salted     []byte
}

func (c *conn) handleAlterUserSCRAMCredentials(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := areq.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)

	var changes []scramChange
	for _, d := range areq.Deletions {
		changes = append(changes, scramChange{user: d.Name, mech: scram.Mechanism(d.Mechanism)})
	}
	for _, u := range areq.Upsertions {
		changes = append(changes, scramChange{user: u.Name, mech: scram.Mechanism(u.Mechanism), upsert: true,
			salt: u.Salt, iterations: u.Iterations, salted: u.SaltedPassword})
	}

	var users []string
	code := map[string]int16{}
	msgs := map[string]string{}
	fail := func(user string, c int16, msg string) {
		if code[user] == 0 {
			code[user], msgs[user] = c, msg
		}
	}
	named := map[scram.Key]bool{}
	var manages, asked bool
	for _, ch := range changes {
		if !asked && req.user != "" && ch.user != req.user {
			asked = true
			ok, err := c.s.scramUsers().Manages(req.ctx, req.user, true)
			if err != nil {
				resp.Results = nil
				for _, u := range uniqueUsers(changes) {
					r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
					r.User, r.ErrorCode = u, errCode(err)
					msg := err.Error()
					r.ErrorMessage = &msg
					req.setErr(r.ErrorCode)
					resp.Results = append(resp.Results, r)
				}
				return resp, nil
			}
			manages = ok
		}
		if _, ok := code[ch.user]; !ok {
			users = append(users, ch.user)
			code[ch.user] = 0
		}
		key := scram.Key{User: ch.user, Mechanism: ch.mech}
		switch {
		case ch.user == "":
			fail(ch.user, kerr.UnacceptableCredential.Code, "the user name is empty")
		case req.user == "":
			fail(ch.user, kerr.ClusterAuthorizationFailed.Code, "a gateway without SASL keeps no SCRAM credentials a connection may alter")
		case ch.user != req.user && !manages:
			fail(ch.user, kerr.ClusterAuthorizationFailed.Code, "altering the SCRAM credential of another user needs Iggy's manage-users permission")
		case !ch.mech.Valid():
			fail(ch.user, kerr.UnsupportedSaslMechanism.Code, "unknown SCRAM mechanism")
		case named[key]:
			fail(ch.user, kerr.DuplicateResource.Code, "a user and mechanism named twice")
		case ch.upsert && (ch.iterations < scram.MinIterations || ch.iterations > scram.MaxIterations):
			fail(ch.user, kerr.UnacceptableCredential.Code, "iterations must be 4096..16384")
		case ch.upsert && (len(ch.salt) == 0 || len(ch.salt) > scram.MaxSalt || len(ch.salted) == 0):
			fail(ch.user, kerr.UnacceptableCredential.Code, "empty salt or salted password, or a salt above 1024 bytes")
		}
		named[key] = true
	}

	for _, ch := range changes {
		if code[ch.user] != 0 {
			continue
		}
		var err error
		if ch.upsert {
			err = c.s.scramUsers().Set(req.ctx, req.user, ch.user, ch.mech, ch.salt, ch.iterations, ch.salted)
		} else {
			err = c.s.scramUsers().Delete(req.ctx, req.user, ch.user, ch.mech)
		}
		if err != nil {
			fail(ch.user, errCode(err), err.Error())
		}
	}

	for _, u := range users {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode = u, code[u]
		if r.ErrorCode != 0 {
			msg := msgs[u]
			r.ErrorMessage = &msg
		}
		req.setErr(r.ErrorCode)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}

// uniqueUsers lists the users changes name, in the order first named.
func uniqueUsers(changes []scramChange) []string {
	var out []string
	seen := map[string]bool{}
	for _, ch := range changes {
		if !seen[ch.user] {
			seen[ch.user] = true
			out = append(out, ch.user)
		}
	}
	return out
}
