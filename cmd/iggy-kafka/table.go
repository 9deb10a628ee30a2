package main

import (
	"fmt"
	"io"
	"strings"
)

// writeTable prints rows as left-aligned columns separated by two spaces; the first row is the
// header.
func writeTable[T ~[3]string](w io.Writer, rows []T) {
	var width [3]int
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		line := fmt.Sprintf("%-*s  %-*s  %s", width[0], r[0], width[1], r[1], r[2])
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}
