package output_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
)

type partRow struct {
	Partition int    `json:"partition"`
	Owner     *int32 `json:"owner_node"`
	Addr      string `json:"owner_addr,omitempty"`
	Lag       int64  `json:"owner_lag"`
}

func (partRow) Columns() []string { return []string{"PARTITION", "OWNER", "ADDRESS", "OWNER-LAG"} }
func (r partRow) Cells() []string {
	owner := ""
	if r.Owner != nil {
		owner = strconv.Itoa(int(*r.Owner))
	}
	return []string{strconv.Itoa(r.Partition), owner, r.Addr, strconv.FormatInt(r.Lag, 10)}
}

func rows() []partRow {
	one := int32(1)
	return []partRow{
		{Partition: 0, Owner: &one, Addr: "localhost:9092", Lag: 0},
		{Partition: 1, Lag: 12},
		{Partition: 15, Owner: &one, Addr: "a-much-longer-host.example:9093", Lag: 3},
	}
}

func TestListFormats(t *testing.T) {
	for _, f := range []output.Format{output.Text, output.JSON, output.YAML} {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := output.List(&b, f, "claims", rows()); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "list."+string(f), b.Bytes())
		})
	}
}

// JSON and YAML carry the same field names with the same values: YAML is derived from JSON.
func TestYAMLMatchesJSON(t *testing.T) {
	var j, y bytes.Buffer
	if err := output.List(&j, output.JSON, "claims", rows()); err != nil {
		t.Fatal(err)
	}
	if err := output.List(&y, output.YAML, "claims", rows()); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if !bytes.Equal(a, b) {
		t.Fatalf("json %s\nyaml %s", a, b)
	}
}

func TestStreamDocumentIsValid(t *testing.T) {
	for _, n := range []int{0, 1, 3, 200} {
		for _, f := range []output.Format{output.JSON, output.YAML} {
			var b bytes.Buffer
			s := output.NewStream[partRow](&b, f, "records", false)
			for i := range n {
				if err := s.Add(partRow{Partition: i, Lag: int64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Version int       `json:"version"`
				Kind    string    `json:"kind"`
				Data    []partRow `json:"data"`
			}
			var err error
			if f == output.JSON {
				err = json.Unmarshal(b.Bytes(), &doc)
			} else {
				var v any
				if err = yaml.Unmarshal(b.Bytes(), &v); err == nil {
					j, _ := json.Marshal(v)
					err = json.Unmarshal(j, &doc)
				}
			}
			if err != nil {
				t.Fatalf("%s, %d rows: %v\n%s", f, n, err, b.String())
			}
			if doc.Version != output.Version || doc.Kind != "records" || len(doc.Data) != n || doc.Data == nil {
				t.Fatalf("%s, %d rows: decoded %+v", f, n, doc)
			}
			if n > 0 && doc.Data[n-1].Lag != int64(n-1) {
				t.Fatalf("%s: last row %+v", f, doc.Data[n-1])
			}
		}
	}
}

func TestStreamLines(t *testing.T) {
	var b bytes.Buffer
	s := output.NewStream[partRow](&b, output.JSON, "records", true)
	for i := range 3 {
		if err := s.Add(partRow{Partition: i}); err != nil {
			t.Fatal(err)
		}
		// A line is out as soon as its row is added: followers depend on it.
		if got := strings.Count(b.String(), "\n"); got != i+1 {
			t.Fatalf("after %d rows %d lines", i+1, got)
		}
	}
	for i, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r partRow
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Partition != i {
			t.Fatalf("line %d %q: %v", i, line, err)
		}
	}
}

func TestStreamText(t *testing.T) {
	var b bytes.Buffer
	s := output.NewStream[partRow](&b, output.Text, "records", true)
	for _, r := range rows() {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != 0 {
		t.Fatalf("text rows written before the columns were sized: %q", b.String())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(partRow{Partition: 7}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "stream.text", b.Bytes())
}

func TestEmptyTextStreamPrintsHeader(t *testing.T) {
	var b bytes.Buffer
	s := output.NewStream[partRow](&b, output.Text, "records", false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "PARTITION  OWNER  ADDRESS  OWNER-LAG\n" {
		t.Fatalf("%q", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"text", true}, {"json", true}, {"yaml", true}, {"JSON", false}, {"", false}, {"table", false}} {
		_, err := output.ParseFormat(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.in, err)
		}
	}
}

func TestWriteError(t *testing.T) {
	var b bytes.Buffer
	output.WriteError(&b, output.JSON, "iggy-kafka", errors.New(`partition 3: "x" gap`), 1)
	var e struct {
		Version int    `json:"version"`
		Kind    string `json:"kind"`
		Error   struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b.Bytes(), &e); err != nil || e.Kind != "error" || e.Error.ExitCode != 1 || e.Error.Message != `partition 3: "x" gap` {
		t.Fatalf("%s: %v", b.String(), err)
	}
	b.Reset()
	output.WriteError(&b, output.Text, "iggy-kafka", errors.New("no store"), 2)
	if b.String() != "iggy-kafka: no store\n" {
		t.Fatalf("%q", b.String())
	}
}

type verdict struct {
	Rows  int  `json:"rows"`
	Clean bool `json:"clean"`
}

func (v verdict) String() string { return strconv.Itoa(v.Rows) + " rows" }

// A check's verdict ends the text and sits beside the rows in JSON and YAML, whether the rows
// came as a list or a stream, and whether there were any.
func TestSummaryEndsEveryFormat(t *testing.T) {
	for _, n := range []int{0, 3} {
		for _, f := range []output.Format{output.Text, output.JSON, output.YAML} {
			name := string(f) + "." + strconv.Itoa(n)
			sum := verdict{Rows: n, Clean: n == 0}
			var list, stream bytes.Buffer
			if err := output.ListSummary(&list, f, "checked", rows()[:n], sum); err != nil {
				t.Fatal(err)
			}
			s := output.NewStream[partRow](&stream, f, "checked", false)
			for _, r := range rows()[:n] {
				if err := s.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.CloseSummary(sum); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "summary."+name, list.Bytes())
			if f == output.Text {
				if stream.String() != list.String() {
					t.Fatalf("%s: stream\n%s\nlist\n%s", name, stream.String(), list.String())
				}
				continue
			}
			// The stream is compact, the list indented: they hold the same document.
			for _, b := range [][]byte{list.Bytes(), stream.Bytes()} {
				var doc struct {
					Version int       `json:"version"`
					Kind    string    `json:"kind"`
					Data    []partRow `json:"data"`
					Summary *verdict  `json:"summary"`
				}
				var err error
				if f == output.JSON {
					err = json.Unmarshal(b, &doc)
				} else {
					var v any
					if err = yaml.Unmarshal(b, &v); err == nil {
						j, _ := json.Marshal(v)
						err = json.Unmarshal(j, &doc)
					}
				}
				if err != nil || doc.Kind != "checked" || len(doc.Data) != n || doc.Data == nil || doc.Summary == nil || *doc.Summary != sum {
					t.Fatalf("%s: %+v %v\n%s", name, doc, err, b)
				}
			}
		}
	}
	s := output.NewStream[partRow](&bytes.Buffer{}, output.JSON, "checked", true)
	if err := s.CloseSummary(verdict{}); err == nil {
		t.Fatal("NDJSON lines took a summary")
	}
}
