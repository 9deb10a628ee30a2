package logfmt

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
	}{
		{"debug", slog.LevelDebug},
		{"INFO", slog.LevelInfo},
		{"Warn", slog.LevelWarn},
		{" error ", slog.LevelError},
	}
	for _, tc := range tests {
		got, err := ParseLevel(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "warning", "trace", "info+2", "1"} {
		_, err := ParseLevel(bad)
		if err == nil {
			t.Errorf("ParseLevel(%q) accepted", bad)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "debug, info, warn, error") || !strings.Contains(msg, `"`+bad+`"`) {
			t.Errorf("ParseLevel(%q) error not helpful: %s", bad, msg)
		}
	}
}

func TestNewLogger(t *testing.T) {
	tests := []struct {
		format string
		check  func(line string) bool
	}{
		{"logfmt", func(l string) bool {
			_, err := parseLine(l)
			return err == nil && strings.Contains(l, "level=WARN msg=hi k=v")
		}},
		{"", func(l string) bool { return strings.Contains(l, "level=WARN msg=hi k=v") }},
		{"LOGFMT", func(l string) bool { return strings.Contains(l, "level=WARN msg=hi k=v") }},
		{"json", func(l string) bool {
			var m map[string]any
			return json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "hi" && m["k"] == "v"
		}},
		{"text", func(l string) bool { return strings.Contains(l, "level=WARN msg=hi k=v") }},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		logger, err := NewLogger(&buf, tc.format, slog.LevelWarn)
		if err != nil {
			t.Fatalf("NewLogger(%q): %v", tc.format, err)
		}
		logger.Info("filtered")
		logger.Warn("hi", "k", "v")
		out := buf.String()
		if strings.Count(out, "\n") != 1 || !tc.check(out) {
			t.Errorf("format %q wrote %q", tc.format, out)
		}
	}
	if _, err := NewLogger(&bytes.Buffer{}, "xml", slog.LevelInfo); err == nil || !strings.Contains(err.Error(), "logfmt, json, text") {
		t.Fatalf("unknown format error = %v", err)
	}
}
