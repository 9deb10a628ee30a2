//go:build race

package logfmt

const raceEnabled = true
