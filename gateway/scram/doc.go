// Package scram owns SCRAM-SHA-256 and SCRAM-SHA-512 for the gateway (RFC 5802, RFC 7677,
// Kafka's KIP-84 and KIP-554): the mechanisms as Kafka numbers them, the credential a server
// keeps (salt, iterations, StoredKey, ServerKey, never the password), the server side of the
// exchange, and the record that keeps one user's credential in Iggy. It knows nothing of Kafka
// framing or of Iggy's client: package kafka runs the exchange on a connection, and package
// gateway reads and writes the records.
//
// The two types to know are Exchange, the server side of one authentication, and Record, one
// change of one user's credential for one mechanism.
//
// # The exchange
//
// NewExchange parses the client-first message (gs2 header "n" or "y" with an optional
// authorization id equal to the user, no channel binding, no mandatory extension "m", the
// user name with its =2C and =3D escapes, the client nonce, optional extensions; Kafka's
// tokenauth=true, delegation tokens, is refused) and answers the server-first message with a
// nonce of its own. Exchange.Final checks the client-final message (the channel binding must
// repeat the gs2 header, the nonce must be the combined one or, as librdkafka sends it and Kafka
// accepts it, the client nonce followed by the combined one; the proof as long as the hash) and
// verifies the proof: ClientKey = ClientProof XOR HMAC(StoredKey, AuthMessage) must hash to
// StoredKey. It returns the server-final message and that ClientKey, which only the password
// gives (StoredKey is its hash), so the gateway can unseal what it sealed for the user.
// Every malformed message is an error, never a panic; FuzzExchange feeds it arbitrary ones.
//
// # Records
//
// A credential lives in stream "<stream>.meta", topic Topic ("scram_credentials", one
// partition), one Iggy message per change; the newest record of a (user, mechanism) wins.
// The payload, big-endian:
//
//	version     u8   1
//	kind        u8   1 set, 2 deleted, 3 set by an administrator
//	mechanism   u8   1 SCRAM-SHA-256, 2 SCRAM-SHA-512
//	user        u16 length, UTF-8 bytes (1..MaxUser)
//	for kinds 1 and 3:
//	iterations  u32  MinIterations..MaxIterations
//	salt        u16 length, bytes (1..MaxSalt)
//	stored key  the mechanism's hash size (32 or 64 bytes)
//	server key  the mechanism's hash size
//	token       u16 length, bytes: the sealed Iggy login token (Seal)
//	for kind 3:
//	admin       u16 length, UTF-8 bytes (1..MaxUser, not the user): whose token it is
//
// Nothing may follow. DecodeRecord refuses anything else (a later version, a truncated or
// oversized field); readers skip what they cannot decode. FuzzDecodeRecord feeds it arbitrary
// bytes.
//
// # The sealed token
//
// A SCRAM-authenticated connection must act in Iggy as its user, and the gateway never sees
// the password. So when a user sets its credential the gateway creates an Iggy personal access
// token as that user and keeps it in the record sealed with AES-256-GCM under
// HMAC-SHA-256(ClientKey, "iggy-kafka scram token"), the record's version, mechanism and user as
// additional data. Reading the record gives StoredKey, not ClientKey: only a client that knows
// the password (and so proves ClientKey in an exchange) lets a gateway open the token.
package scram
