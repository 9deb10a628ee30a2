package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// buildInfo reports the version, commit and date set at link time, or else what the Go toolchain
// recorded in the binary.
func buildInfo() (v, c, d string) {
	v, c, d = version, commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && c == "":
				c = s.Value
			case s.Key == "vcs.time" && d == "":
				d = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	if c == "" {
		c = "unknown"
	}
	if d == "" {
		d = "unknown"
	}
	return v, c, d
}

// versionDoc is `version`. JSON field names are an interface.
type versionDoc struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Built   string `json:"built"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

func (d versionDoc) Text(w io.Writer) error {
	_, err := fmt.Fprintf(w, "iggy-kafka %s\ncommit: %s\nbuilt: %s\ngo: %s %s/%s\n", d.Version, d.Commit, d.Built, d.Go, d.OS, d.Arch)
	return err
}

func newVersionCmd(a *app) *cobra.Command {
	return operatorCmd(&cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
		Long: `Print this binary's version, commit and build date. Each gateway announces its own version to
the fleet: 'iggy-kafka claims --nodes' lists them (VERSION), as does the console.`,
		Example: "  iggy-kafka version\n  iggy-kafka version -o json",
		RunE: func(cmd *cobra.Command, args []string) error {
			v, c, d := buildInfo()
			doc := versionDoc{Version: v, Commit: c, Built: d, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
			return a.fail(output.Print(cmd.OutOrStdout(), a.format(), "version", doc))
		},
	}, noArgs)
}
