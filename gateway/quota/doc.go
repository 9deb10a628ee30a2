// Package quota owns Kafka's client quotas on the gateway: the entities they are kept for and
// their one encoding, the keys and what a value may be, which quota applies to a connection
// (Resolve, Kafka's precedence), and the rates a gateway measures and throttles against
// (Manager). The Kafka listener (gateway/kafka) records each request here and answers with
// the throttle time it returns; the store of the quotas is the bridge's, in Iggy.
//
// The two types to know are Entity, a quota's user and client-id (a name, the type's default,
// or absent), and Manager, one gateway's view of the fleet's quotas with its rates.
//
// # Which quota applies
//
// Kafka's ClientQuotaManager (KIP-55) looks, per quota key, for the first entity with a value
// for that key in this order, user being the connection's principal and client-id the
// request header's:
//
//  1. user and client-id
//  2. user and the default client-id
//  3. user
//  4. the default user and client-id
//  5. the default user and the default client-id
//  6. the default user
//  7. client-id
//  8. the default client-id
//
// The level found also says what shares the quota (Tags): a level with a client-id part
// (exact or default) measures each user and client-id pair alone, a user level each user
// across its client ids, a client-id level each client id across users. A default applies to
// each name on its own: two users under the default user quota each get the whole quota.
//
// # Rates
//
// A rate is measured as Kafka's Rate over SampledStat: Windows samples of WindowSize each (11
// and 1 s, Kafka's quota.window.num and quota.window.size.seconds), the oldest dropped once
// the window is past, divided by the time they cover but never less than Windows-1 sample
// windows (so a new client is not throttled for its first bytes). A value is recorded first
// and then checked: over the limit, the throttle is the time that brings the rate back to
// the limit if nothing more came, (rate-limit)/limit * covered time, as Kafka's
// QuotaUtils.throttleTime (rounded up to the millisecond where Kafka rounds to the nearest). The request_percentage throttle is capped at one WindowSize, as
// Kafka caps it.
//
// Every gateway measures only what it serves, as every Kafka broker does: a client spread over
// n gateways may reach n times its quota in all.
package quota
