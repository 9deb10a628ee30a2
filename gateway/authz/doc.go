// Package authz owns Iggy's permission rule: which of a user's Iggy permissions allow which Iggy
// command on which stream and topic. The embedded store checks every command with it, and the
// gateway checks with it what a Kafka connection does when Iggy itself cannot check it (a
// SCRAM credential that an administrator provisioned for a user acts through the gateway's own
// Iggy login, see gateway/scramstore.go), so both enforce one rule, the real Iggy server's.
//
// A Check is one question about a permission set (Send(stream, topic), ManageUsers, ...);
// Allowed asks it for a user, root passing every check as it does in Iggy.
//
// The rule, from the broadest grant down to one topic: a global flag covers every stream, a
// stream's flag every topic of that stream; manage implies read, manage of a topic implies
// sending to it, reading a topic implies polling it. Streams and topics are named by their Iggy
// ids, as Iggy keeps permissions.
package authz
