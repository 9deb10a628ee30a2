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
// one switch that dispatches. Keys that are not registered, group APIs included, are not
// advertised and are answered with UNSUPPORTED_VERSION.
//
// # Connections
//
// A connection reads ahead: each request is decoded as it arrives and handled in its own
// goroutine (at most Config.MaxInFlight at once), while a writer answers strictly in request
// order. Produce requests keep their order per partition on one connection, so a pipelining
// idempotent producer never sees its batches overtake each other. SASL requests and
// ApiVersions are handled before the next request is read, because what follows depends on
// them. A size prefix above Config.MaxRequestBytes, or a request that does not decode, closes
// only that connection, with a log line; a panicking handler is recovered and does the same.
//
// # Leaders
//
// Metadata lists the fleet (Config.Brokers, or this node alone) and names one leader per
// partition: with the brokers sorted by node id, partition p of topic t is led by broker
//
//	(FNV-1a-32(t) + p) mod len(brokers)
//
// where FNV-1a-32 is the 32-bit FNV-1a hash of the topic name's bytes (offset basis 2166136261,
// prime 16777619) and the sum is taken without overflow (as a 64-bit integer). Adding p spreads
// a topic's partitions round-robin over the fleet; the hash starts every topic at a different
// broker. Any gateway can serve any partition, since Iggy holds the data, so the leader only
// spreads client load; all gateways must merely agree on it. The broker list is, for now, the
// configured fleet; which gateways are live will come from the coordinator log.
//
// # SASL
//
// With Config.SASL, a connection must authenticate with SASL PLAIN (SaslHandshake v0 or v1,
// then SaslAuthenticate or the bare v0 token) before anything but ApiVersions; any other
// request before that closes the connection. Config.Authenticate checks the credentials
// (the gateway logs in to Iggy as that user) and returns the Storage the connection then uses.
// Bad credentials are answered with SASL_AUTHENTICATION_FAILED and the connection is closed.
package kafka
