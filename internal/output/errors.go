package output

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteError prints a command's failure on w (stderr): one line "<program>: <message>" in text
// and YAML, the error envelope under -o json, so a script reading JSON never has to parse
// prose.
func WriteError(w io.Writer, f Format, program string, err error, exitCode int) {
	if f != JSON {
		fmt.Fprintf(w, "%s: %v\n", program, err)
		return
	}
	b, _ := json.Marshal(struct {
		Version int    `json:"version"`
		Kind    string `json:"kind"`
		Error   struct {
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		} `json:"error"`
	}{Version: Version, Kind: "error", Error: struct {
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
	}{err.Error(), exitCode}})
	fmt.Fprintf(w, "%s\n", b)
}
