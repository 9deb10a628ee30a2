package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// textBatch is how many rows a text stream holds to size its columns before the first line.
const textBatch = 64

// Stream writes rows one at a time. As a document (lines false) it writes the envelope of kind
// with the rows under data, item by item, so a million rows never sit in memory; as lines it
// writes NDJSON (one row object per line), YAML documents separated by ---, or table lines under
// one header.
type Stream[R Row] struct {
	w     *bufio.Writer
	f     Format
	kind  string
	lines bool

	n       int
	buf     []byte
	encode  func(R, []byte) []byte
	pending [][]string
	width   []int
	started bool
}

// NewStream starts a stream on w.
func NewStream[R Row](w io.Writer, f Format, kind string, lines bool) *Stream[R] {
	return &Stream[R]{w: bufio.NewWriterSize(w, 64<<10), f: f, kind: kind, lines: lines}
}

// WithJSON makes the stream encode rows with fn (a row type's own encoder, such as
// RecordRow.AppendJSON) instead of encoding/json, where millions of rows go out. fn must write
// what encoding/json would.
func (s *Stream[R]) WithJSON(fn func(R, []byte) []byte) *Stream[R] {
	s.encode = fn
	return s
}

// Add writes one row (text rows are held until textBatch of them size the columns, or Flush).
func (s *Stream[R]) Add(r R) error {
	defer func() { s.n++ }()
	switch s.f {
	case Text:
		s.pending = append(s.pending, r.Cells())
		if s.width == nil && len(s.pending) < textBatch {
			return nil
		}
		return s.flushText()
	case JSON:
		if !s.lines {
			if s.n == 0 {
				s.w.WriteString(`{"version":` + strconv.Itoa(Version) + `,"kind":` + strconv.Quote(s.kind) + `,"data":[` + "\n")
			} else {
				s.w.WriteString(",\n")
			}
		}
		var err error
		if s.encode != nil {
			s.buf = s.encode(r, s.buf[:0])
		} else if s.buf, err = json.Marshal(r); err != nil {
			return err
		}
		s.w.Write(s.buf)
		if s.lines {
			s.w.WriteByte('\n')
		}
	case YAML:
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		y, err := jsonToYAML(b)
		if err != nil {
			return err
		}
		if s.lines {
			s.w.WriteString("---\n")
			s.w.Write(y)
			break
		}
		if s.n == 0 {
			s.w.WriteString("version: " + strconv.Itoa(Version) + "\nkind: " + yamlString(s.kind) + "\ndata:\n")
		}
		for i, line := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
			if i == 0 {
				s.w.WriteString("  - " + line + "\n")
			} else {
				s.w.WriteString("    " + line + "\n")
			}
		}
	}
	if s.lines {
		return s.w.Flush()
	}
	return nil
}

func yamlString(v string) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return strconv.Quote(v)
	}
	return strings.TrimRight(string(b), "\n")
}

func (s *Stream[R]) flushText() error {
	if s.width == nil {
		var zero R
		header := zero.Columns()
		s.width = make([]int, len(header))
		for i, h := range header {
			s.width[i] = len(h)
		}
		for _, r := range s.pending {
			for i := range s.width {
				s.width[i] = max(s.width[i], len(cell(r, i)))
			}
		}
		s.w.WriteString(formatLine(header, s.width))
		s.started = true
	}
	for _, r := range s.pending {
		s.w.WriteString(formatLine(r, s.width))
	}
	s.pending = s.pending[:0]
	return s.w.Flush()
}

// Flush writes what is held: the rows a text stream keeps for sizing, and buffered bytes. A
// follower calls it when it has caught up, so lines appear as their records arrive.
func (s *Stream[R]) Flush() error {
	if s.f == Text && len(s.pending) > 0 {
		return s.flushText()
	}
	return s.w.Flush()
}

// Close ends the document (closing the envelope, printing the header of an empty table) and
// flushes.
func (s *Stream[R]) Close() error { return s.close(nil) }

// CloseSummary is Close for the rows of a check: the document ends with its verdict, the
// sentence after the table or "summary" beside "data". Lines have no envelope to hold one.
func (s *Stream[R]) CloseSummary(sum Summary) error {
	if s.lines && s.f != Text {
		return fmt.Errorf("output: a stream of %s lines has no summary", s.f)
	}
	return s.close(sum)
}

func (s *Stream[R]) close(sum Summary) error {
	var tail []byte
	if sum != nil && s.f != Text {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		if s.f == JSON {
			tail = append(append([]byte(`,"summary":`), b...), '}')
		} else {
			y, err := jsonToYAML(b)
			if err != nil {
				return err
			}
			tail = []byte("summary:\n")
			for _, line := range strings.Split(strings.TrimRight(string(y), "\n"), "\n") {
				tail = append(append(append(tail, "  "...), line...), '\n')
			}
		}
	}
	switch {
	case s.f == Text:
		if len(s.pending) > 0 || !s.started {
			if err := s.flushText(); err != nil {
				return err
			}
		}
		if sum != nil {
			if err := writeSummaryText(s.w, sum); err != nil {
				return err
			}
		}
	case s.lines:
	case s.f == JSON && s.n == 0:
		s.w.WriteString(`{"version":` + strconv.Itoa(Version) + `,"kind":` + strconv.Quote(s.kind) + `,"data":[]`)
		s.closeJSON(tail)
	case s.f == JSON:
		s.w.WriteString("\n]")
		s.closeJSON(tail)
	case s.f == YAML && s.n == 0:
		s.w.WriteString("version: " + strconv.Itoa(Version) + "\nkind: " + yamlString(s.kind) + "\ndata: []\n")
		s.w.Write(tail)
	case s.f == YAML:
		s.w.Write(tail)
	}
	return s.w.Flush()
}

// closeJSON ends the envelope after "data", with the summary when there is one.
func (s *Stream[R]) closeJSON(tail []byte) {
	if tail == nil {
		s.w.WriteString("}\n")
		return
	}
	s.w.Write(tail)
	s.w.WriteByte('\n')
}
