package logfmt

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
)

// Handler is a slog.Handler that writes records as logfmt lines. Create one
// with New; the zero value is not usable.
type Handler struct {
	opts slog.HandlerOptions
	out  *output

	// pre holds the attributes given to WithAttrs, already formatted, each
	// with its leading space.
	pre []byte
	// prefix is the sanitized dotted path of the open groups ("a.b."), and
	// groups the same names as given, for ReplaceAttr.
	prefix string
	groups []string
}

// output is shared by a handler and everything derived from it, so that all
// of them serialize their writes on the same lock.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns a Handler writing to w. A nil opts means the defaults of
// slog.HandlerOptions: level Info, no source, no ReplaceAttr.
func New(w io.Writer, opts *slog.HandlerOptions) *Handler {
	h := &Handler{out: &output{w: w}}
	if opts != nil {
		h.opts = *opts
	}
	return h
}

// Enabled reports whether a record at level would be written.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	minLevel := slog.LevelInfo
	if h.opts.Level != nil {
		minLevel = h.opts.Level.Level()
	}
	return level >= minLevel
}

// WithAttrs returns a handler that writes attrs, qualified by the groups open
// on h, on every line after the record's own fields.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	s := newState(h)
	defer s.free()
	s.prefix = append(s.prefix, h.prefix...)
	s.groups = append(s.groups, h.groups...)
	for _, a := range attrs {
		s.appendAttr(a)
	}
	h2 := h.clone()
	h2.pre = append(slices.Clip(h.pre), s.buf...)
	return h2
}

// WithGroup returns a handler that prefixes the keys of later attributes with
// name and a dot. An empty name changes nothing, as slog requires.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := h.clone()
	h2.prefix = string(append(appendKey([]byte(h.prefix), name), '.'))
	h2.groups = append(slices.Clip(h.groups), name)
	return h2
}

func (h *Handler) clone() *Handler {
	h2 := *h
	return &h2
}

// Handle formats r as one line and writes it with a single Write call.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	s := newState(h)
	defer s.free()
	rep := h.opts.ReplaceAttr

	if !r.Time.IsZero() {
		if rep == nil {
			s.buf = append(s.buf, " "+slog.TimeKey+"="...)
			s.buf = r.Time.UTC().AppendFormat(s.buf, recordTimeLayout)
		} else {
			s.appendBuiltin(slog.Time(slog.TimeKey, r.Time))
		}
	}
	if rep == nil {
		s.buf = append(s.buf, " "+slog.LevelKey+"="...)
		s.buf = append(s.buf, r.Level.String()...)
	} else {
		s.appendBuiltin(slog.Any(slog.LevelKey, r.Level))
	}
	if h.opts.AddSource {
		if src := r.Source(); src != nil {
			if rep == nil {
				s.buf = append(s.buf, " "+slog.SourceKey+"="...)
				s.buf = appendSource(s.buf, src)
			} else {
				s.appendBuiltin(slog.Any(slog.SourceKey, src))
			}
		}
	}
	if rep == nil {
		s.buf = append(s.buf, " "+slog.MessageKey+"="...)
		s.buf = appendString(s.buf, r.Message)
	} else {
		s.appendBuiltin(slog.String(slog.MessageKey, r.Message))
	}

	s.buf = append(s.buf, h.pre...)
	if r.NumAttrs() > 0 {
		s.prefix = append(s.prefix, h.prefix...)
		s.groups = append(s.groups, h.groups...)
		r.Attrs(func(a slog.Attr) bool {
			s.appendAttr(a)
			return true
		})
	}
	s.buf = append(s.buf, '\n')

	// Every field was written with a leading space; the first one's is
	// dropped here rather than tracked field by field.
	line := s.buf
	if line[0] == ' ' {
		line = line[1:]
	}
	h.out.mu.Lock()
	_, err := h.out.w.Write(line)
	h.out.mu.Unlock()
	return err
}

// state is the scratch space of one Handle or WithAttrs call.
type state struct {
	h      *Handler
	buf    []byte
	prefix []byte
	groups []string
}

// maxPooledBuf keeps one huge record from pinning its buffer in the pool.
const maxPooledBuf = 64 << 10

var statePool = sync.Pool{
	New: func() any {
		return &state{buf: make([]byte, 0, 1024), prefix: make([]byte, 0, 64)}
	},
}

func newState(h *Handler) *state {
	s := statePool.Get().(*state)
	s.h = h
	return s
}

func (s *state) free() {
	if cap(s.buf) > maxPooledBuf {
		return
	}
	clear(s.groups)
	s.h = nil
	s.buf = s.buf[:0]
	s.prefix = s.prefix[:0]
	s.groups = s.groups[:0]
	statePool.Put(s)
}

// appendBuiltin writes one of time, level, source and msg after passing it
// through ReplaceAttr; builtins belong to no group.
func (s *state) appendBuiltin(a slog.Attr) {
	a = s.h.opts.ReplaceAttr(nil, a)
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		s.appendAttr(a)
		return
	}
	s.buf = append(s.buf, ' ')
	s.buf = appendKey(s.buf, a.Key)
	s.buf = append(s.buf, '=')
	if a.Key == slog.TimeKey && a.Value.Kind() == slog.KindTime {
		s.buf = a.Value.Time().UTC().AppendFormat(s.buf, recordTimeLayout)
		return
	}
	s.buf = appendValue(s.buf, a.Value)
}

// appendAttr writes a, flattening groups into dotted keys. Empty groups and
// zero attributes write nothing, and a group with an empty key is inlined, as
// the slog.Handler contract asks.
func (s *state) appendAttr(a slog.Attr) {
	a.Value = a.Value.Resolve()
	if rep := s.h.opts.ReplaceAttr; rep != nil && a.Value.Kind() != slog.KindGroup {
		// nil rather than an empty slice at the top level, whatever the
		// pooled state held before, so a hook sees the same thing every time.
		var groups []string
		if len(s.groups) > 0 {
			groups = s.groups
		}
		a = rep(groups, a)
		a.Value = a.Value.Resolve()
	}
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		attrs := a.Value.Group()
		if len(attrs) == 0 {
			return
		}
		if a.Key == "" {
			for _, ga := range attrs {
				s.appendAttr(ga)
			}
			return
		}
		prefixLen, groupsLen := len(s.prefix), len(s.groups)
		s.prefix = append(appendKey(s.prefix, a.Key), '.')
		if s.h.opts.ReplaceAttr != nil {
			s.groups = append(s.groups, a.Key)
		}
		for _, ga := range attrs {
			s.appendAttr(ga)
		}
		s.prefix = s.prefix[:prefixLen]
		s.groups = s.groups[:groupsLen]
		return
	}
	s.buf = append(s.buf, ' ')
	s.buf = append(s.buf, s.prefix...)
	s.buf = appendKey(s.buf, a.Key)
	s.buf = append(s.buf, '=')
	s.buf = appendValue(s.buf, a.Value)
}
