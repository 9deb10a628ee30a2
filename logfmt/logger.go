package logfmt

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Formats lists the names NewLogger accepts, for flag help and completion.
func Formats() []string { return []string{"logfmt", "json", "text"} }

// Levels lists the names ParseLevel accepts, from most to least verbose.
func Levels() []string { return []string{"debug", "info", "warn", "error"} }

// NewLogger builds a logger writing to w in the named format: "logfmt" (this
// package's Handler, also chosen by an empty name), "json" or "text" (the
// standard library's handlers). Names are case-insensitive. Records below
// level are dropped.
func NewLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "logfmt":
		h = New(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("unknown log format %q: want one of %s", format, strings.Join(Formats(), ", "))
	}
	return slog.New(h), nil
}

// ParseLevel turns a level name from a flag or a config file into a
// slog.Level. It accepts debug, info, warn and error in any case, and nothing
// else: a typo in a level should stop the program, not silently log at the
// wrong level.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q: want one of %s", s, strings.Join(Levels(), ", "))
}
