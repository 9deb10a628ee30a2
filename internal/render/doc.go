// Package render is the operator commands' text beyond a single table: the layouts of documents
// made of several tables (replay, claims, a group's detail) and the sentences the operator model's
// values say (a console status's problems, a drain's state, a gateway that does not answer, a
// handover, a check's verdict).
//
// The model packages under inspect/ hold values and their JSON fields only; what an operator reads
// of them is written here, once, for the commands and the tui alike. A document type wraps a model
// value: its JSON and YAML are the value's own, its Text the layout (output.Print uses both).
package render
