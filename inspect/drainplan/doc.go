// Package drainplan is what `drain` and the console's drain key plan before they write a drain
// request, and the rules that refuse one: a drain that would leave no serving gateway, of a node
// that is unknown, gone or already drained, and an undo of a node that is not drained. The
// rules hold whatever the caller's flags; the gateways act on every request they read, so they
// are the operator library's, applied before the request is written.
//
// The two things to know are Plan, which makes a drainwatch.Plan (the moves, from fleet.Lease
// over the lease group's members without the drained nodes) from a claims.Model, and Refused,
// the error of a refusal, one sentence saying why. Drainer writes a drain or undo request;
// IggyDrainer writes it to coordinator_drains.
package drainplan
