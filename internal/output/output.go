// Package output is the one formatter of the operator commands (inspect, claims, replay,
// drain): the same typed rows become a text table, a JSON document or a YAML document, so the
// three formats can never disagree about what a command found.
//
// The two types to know are Row, which a row struct implements to say its text columns (the
// JSON and YAML field names come from its `json` tags and are an interface: renaming one breaks
// scripts), and Stream, which writes rows as they arrive (inspect --follow, claims --watch
// without a terminal) in bounded memory.
//
// Documents are versioned envelopes: {"version":1,"kind":"<kind>","data":<rows or object>}. A
// check (inspect --verify, replay --diff-live) adds its verdict beside the data, under
// "summary", and ends its text with the verdict's sentence (ListSummary, Stream.CloseSummary).
// Streams of changes are NDJSON: one bare row object per line. Errors go to stderr, as
// {"version":1,"kind":"error","error":{"message":"...","exit_code":N}} under -o json.
// Text tables have upper-case hyphenated headers and show "-" for a value that does not apply.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Version is the envelope version; it changes only when a field changes meaning or goes away.
const Version = 1

// Format is how a command prints.
type Format string

const (
	Text Format = "text"
	JSON Format = "json"
	YAML Format = "yaml"
)

// Formats lists the accepted values of -o.
var Formats = []string{string(Text), string(JSON), string(YAML)}

// ParseFormat reads the value of -o.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Text, JSON, YAML:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown output format %q: want text, json or yaml", s)
}

// Row is one line of a text table. Columns is the same for every value of a type (called on the
// zero value too); Cells returns one string per column, "" where the value does not apply.
type Row interface {
	Columns() []string
	Cells() []string
}

// Texter is a document with its own text layout (several tables, a summary line).
type Texter interface {
	Text(w io.Writer) error
}

// None is the text shown for a value that does not apply.
const None = "-"

type envelope struct {
	Version int    `json:"version"`
	Kind    string `json:"kind"`
	Data    any    `json:"data"`
	Summary any    `json:"summary,omitempty"`
}

// Summary is the verdict of a check: String is the sentence that ends the text output, the
// value itself (its `json` tags) is the envelope's "summary".
type Summary interface {
	String() string
}

// List prints rows as a table, or as the envelope of kind holding the rows.
func List[R Row](w io.Writer, f Format, kind string, rows []R) error {
	if f == Text {
		var zero R
		t := NewTable(zero.Columns())
		for _, r := range rows {
			t.Add(r.Cells())
		}
		return t.Write(w)
	}
	if rows == nil {
		rows = []R{}
	}
	return Document(w, f, kind, rows)
}

// ListSummary is List for the rows a check found, ending with its verdict: the sentence after
// the table, or "summary" beside "data".
func ListSummary[R Row](w io.Writer, f Format, kind string, rows []R, sum Summary) error {
	if f == Text {
		if err := List(w, f, kind, rows); err != nil {
			return err
		}
		return writeSummaryText(w, sum)
	}
	if rows == nil {
		rows = []R{}
	}
	return writeEnvelope(w, f, envelope{Version: Version, Kind: kind, Data: rows, Summary: sum})
}

// writeSummaryText ends a table with the verdict, one blank line below it so that it does not
// read as a row.
func writeSummaryText(w io.Writer, sum Summary) error {
	_, err := io.WriteString(w, "\n"+sum.String()+"\n")
	return err
}

// Print prints one document: its own text layout, or the envelope of kind around it.
func Print(w io.Writer, f Format, kind string, doc Texter) error {
	if f == Text {
		return doc.Text(w)
	}
	return Document(w, f, kind, doc)
}

// Document writes the envelope of kind around data as JSON or YAML.
func Document(w io.Writer, f Format, kind string, data any) error {
	return writeEnvelope(w, f, envelope{Version: Version, Kind: kind, Data: data})
}

func writeEnvelope(w io.Writer, f Format, env envelope) error {
	b, err := json.Marshal(env)
	if err != nil {
		return err
	}
	switch f {
	case JSON:
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "  "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = w.Write(buf.Bytes())
		return err
	case YAML:
		y, err := jsonToYAML(b)
		if err != nil {
			return err
		}
		_, err = w.Write(y)
		return err
	}
	return fmt.Errorf("output: format %q has no document form", f)
}

// jsonToYAML re-encodes JSON as block YAML with the same keys in the same order, so the YAML
// field names are the JSON ones by construction.
func jsonToYAML(b []byte) ([]byte, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	blockStyle(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.ScalarNode:
		// JSON quoted every string; YAML quotes only where a plain scalar would read as
		// another type, which the encoder decides from the tag.
		n.Style = 0
	default:
		n.Style = 0
		for _, c := range n.Content {
			blockStyle(c)
		}
	}
}

// Table is a text table: left-aligned columns two spaces apart, "-" in empty cells.
type Table struct {
	header []string
	rows   [][]string
}

// NewTable starts a table with its header.
func NewTable(header []string) *Table { return &Table{header: header} }

// Add appends one row; missing cells are shown as "-".
func (t *Table) Add(cells []string) { t.rows = append(t.rows, cells) }

// Write prints the header and every row.
func (t *Table) Write(w io.Writer) error {
	width := make([]int, len(t.header))
	for i, h := range t.header {
		width[i] = len(h)
	}
	for _, r := range t.rows {
		for i := range width {
			width[i] = max(width[i], len(cell(r, i)))
		}
	}
	var b strings.Builder
	writeLine(&b, t.header, width)
	for _, r := range t.rows {
		writeLine(&b, r, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(r []string, i int) string {
	if i >= len(r) || r[i] == "" {
		return None
	}
	return r[i]
}

func writeLine(b *strings.Builder, r []string, width []int) {
	b.WriteString(formatLine(r, width))
}

// formatLine lays one row out on the column widths, without trailing blanks (they are noise in
// diffs and golden files).
func formatLine(r []string, width []int) string {
	var line []byte
	for i := range width {
		c := cell(r, i)
		line = append(line, c...)
		if i < len(width)-1 {
			for range width[i] - len(c) + 2 {
				line = append(line, ' ')
			}
		}
	}
	return strings.TrimRight(string(line), " ") + "\n"
}
