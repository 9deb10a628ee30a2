// Package gateway assembles and runs one iggy-kafka gateway: the Kafka listener of package
// kafka, the Kafka <-> Iggy bridge, the Iggy client it acts through, and, when no Iggy address
// is configured, the embedded Iggy-compatible store running in the same process. The gateway
// reaches that store through in-process connections (store.Server.Local): each request, in the
// Iggy protocol's frames, runs in the requesting goroutine with the same handlers and session
// rules as on the store's TCP listener, which stays open for native Iggy clients.
//
// Start brings everything up in dependency order (store, Iggy client, bridge, Kafka listener,
// metrics) and returns once the Kafka listener accepts; Shutdown takes it down in reverse:
// it stops accepting, lets every connection answer the requests it already read (long polls
// answer at once), then closes the Iggy clients and the store. Run is Start, wait for the
// context, Shutdown, as the serve command needs it.
//
// StartFleet (serve --fleet N) runs N such gateways in one process on consecutive ports, node
// ids 1..N, in front of one embedded store (Config.Store) that each reaches through memory, or
// in front of IggyAddrs; a LocalFleet shuts its gateways down in node order and the store last.
//
// Without SASL every Kafka connection acts through the gateway's own Iggy login. With SASL,
// PLAIN credentials are checked by logging in to Iggy as that user, and a SCRAM connection logs
// in with the Iggy token its credential holds (scramstore.go says how a credential in
// `<stream>.meta/scram_credentials` holds a token only the password opens); the login is cached
// per user and mechanism (a small Iggy pool shared by those connections, rechecked at most a
// minute after it was last verified) and the connection acts with that user's Iggy permissions.
// A SCRAM credential an administrator provisioned for a user acts through the gateway's own Iggy
// login instead, with the user's permissions checked by the gateway with Iggy's own rule
// (package authz; scramstore.go says why).
//
// With Config.MetricsAddr set, an HTTP listener serves /metrics (Prometheus: requests by API and
// error code, request and response bytes, produced and fetched records, connections), /healthz
// (the process answers) and /readyz (the Kafka listener is up and Iggy answers a ping). Every
// count belongs to one gateway: Start makes a registry and the counts of the bridge, the Kafka
// listener, the group managers and the coordinator (bridge.Metrics, kafka.Observer,
// group.Metrics, coordinator.Metrics), passes them down in their Configs, and its /metrics
// serves that registry, so each gateway of a fleet in one process reports its own. No gateway
// package keeps a count in a package-level variable; this lists any that does:
//
//	awk '/^var \(/{b=1;next} b&&/^\)/{b=0} (b||/^var /)&&/atomic\.|prometheus\./' $(git ls-files 'gateway/*.go' | grep -v _test.go)
package gateway
