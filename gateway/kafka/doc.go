// Package kafka is the Kafka protocol side of the gateway: it accepts client connections,
// decodes requests with franz-go's kmsg, answers them through a Storage, and writes the
// responses back in order.
//
// The two types to know are Server, the listener with its connections, and Storage, the storage
// the handlers talk to. The Kafka types the handlers need (TopicInfo, ConfigEntry, ProduceResult,
// FetchResult, Broker) are declared here and nowhere else: the Kafka <-> Iggy bridge answers
// with them, and the gateway package gets a Storage from the bridge (bridge.Bridge.As) once for
// its own Iggy identity and once per SASL user. This package knows nothing of Iggy and never
// imports the bridge; its tests run against an in-memory Storage.
//
// # Layout
//
// The code follows franz-go's kfake: one file per API key (00_produce.go, 01_fetch.go, ...),
// each opening with the versions it serves and what it leaves out, registering its version
// range in init (which is what ApiVersions reports), and holding one handler; handle.go has the
// one switch that dispatches. Keys that are not registered are not advertised and are answered
// with UNSUPPORTED_VERSION.
//
// # Groups
//
// The consumer-group APIs are served by Config.Groups, a GroupCoordinator shared by every
// connection and told, with each request, the Identity of the connection (SASL user, client id
// and host, Storage). The group keys register with regGroupKey: without a coordinator they are
// neither advertised nor served, exactly as if unregistered. groups.go says what a group
// handler file provides.
//
// # Connections
//
// A connection reads ahead: each request is decoded as it arrives and handled in its own
// goroutine (at most Config.MaxInFlight at once), while a writer answers strictly in request
// order. Produce requests keep their order per partition on one connection, so a pipelining
// idempotent producer never sees its batches overtake each other; a Fetch waits for the
// connection's earlier Produce to the partitions it reads; and group requests run one at a time
// in the order they came (order.go). SASL requests and
// ApiVersions are handled before the next request is read, because what follows depends on
// them. A size prefix above Config.MaxRequestBytes, or a request that does not decode, closes
// only that connection, with a log line; a panicking handler is recovered and does the same.
//
// # Leaders
//
// Metadata lists the fleet (its live gateways, or Config.Brokers, or this node alone) and names
// one leader per partition by the fleet's rendezvous rule (package rendezvous, leader.go): every
// partition of a topic is scored per gateway with the topic's name, and the partitions go to the
// best-scored gateways with bounded loads, so a topic's partitions are spread as evenly as they
// can be and a gateway that leaves the view hands over its own partitions and few others
// (TestPartitionLeadersMoveFew: 5.6% of the others, where a round-robin over the sorted gateways
// moved most). Any gateway can serve any partition, since Iggy holds the data, so the leader only
// spreads client load; all gateways must merely agree on it.
//
// # Request hooks
//
// Tests reach into a running Server with request hooks, after kfake's ControlKey: ControlKey(key,
// fn) (key -1: every key) installs fn, which sees each decoded request of that key as a
// *Controlled before its handler does, in the order hooks were added. The hook may
//
//   - look, and return handled false: the request goes on to the next hook and its handler;
//   - change the request (Request() is the decoded kmsg value) and return handled false;
//   - answer it: return handled true and a response (its version is set to the request's);
//   - drop it: return handled true with neither response nor error; no answer is written, the
//     connection goes on, and the client times the request out;
//   - close the connection: return handled true and an error; the answers before it are written;
//   - delay it: Sleep(wakeup) blocks this request until wakeup returns, and only it (and what is
//     ordered behind it on its connection): other requests and connections, and other hooks,
//     run meanwhile;
//   - run the handler itself with Handle() and return a changed answer.
//
// A hook that handles a request is removed unless it called Keep; Drop removes it even when it
// lets the request through. Hooks run one at a time, except while one sleeps or handles, so a
// hook without Keep handles exactly one request. A server without hooks pays one atomic load per
// request.
//
// # SASL
//
// With Config.SASL, a connection must authenticate (SaslHandshake v0 or v1, then
// SaslAuthenticate or bare v0 frames) before anything but ApiVersions; any other request before
// that, or between a SCRAM exchange's two messages, closes the connection. PLAIN is checked by
// Config.Authenticate (the gateway logs in to Iggy as that user), which returns the Storage the
// connection then uses. With Config.SCRAM, SCRAM-SHA-256 and SCRAM-SHA-512 are offered too:
// the exchange (package scram) runs here against the credential Config.SCRAM looks up, and
// Config.SCRAM.Login gives the Storage once the proof holds. Bad credentials are answered with
// SASL_AUTHENTICATION_FAILED and the connection is closed. A connection reads and changes the
// SCRAM credentials of its own user only (50_describe_user_scram_credentials.go,
// 51_alter_user_scram_credentials.go).
package kafka
