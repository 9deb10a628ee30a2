// Package stateview turns the coordinator's fold (record.State) into the typed views the operator
// commands print: groups with their members and committed offsets, KIP-848 consumer groups with
// their epochs and assignments, transactions, and the claim a partition is held under. `replay`
// lists them, `inspect` shows a record's fields with them, the console's group pane and `group
// describe` compare them with what the gateways answer.
//
// The type to know is GroupView, one group as the log has it (GroupViews lists a state's);
// TransactionView is one transactional id. JSON field names are an interface. Assignments are
// text ("topic[0,1] other[2]"), decoded as the consumer protocol lays them out.
package stateview
