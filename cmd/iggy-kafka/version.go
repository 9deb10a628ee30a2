package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
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

func newVersionCmd() *cobra.Command {
	return withSettings(&cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and build date",
		Example: "  iggy-kafka version",
		RunE: func(cmd *cobra.Command, args []string) error {
			v, c, d := buildInfo()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "iggy-kafka %s\ncommit: %s\nbuilt: %s\ngo: %s %s/%s\n",
				v, c, d, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	})
}
