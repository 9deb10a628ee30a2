package main

import (
	"math"
	"testing"

	"github.com/spf13/pflag"
)

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		environ []string
		limit   int64
		keep    bool
	}{
		{name: "default", limit: 192 << 20},
		{name: "GOMEMLIMIT beats the default", environ: []string{"GOMEMLIMIT=1GiB"}, keep: true},
		{name: "empty GOMEMLIMIT is not set", environ: []string{"GOMEMLIMIT="}, limit: 192 << 20},
		{name: "the setting beats GOMEMLIMIT", args: []string{"--memory-limit", "300MiB"}, environ: []string{"GOMEMLIMIT=1GiB"}, limit: 300 << 20},
		{name: "from the environment", environ: []string{"IGGY_KAFKA_MEMORY_LIMIT=64MiB"}, limit: 64 << 20},
		{name: "off", args: []string{"--memory-limit", "0"}, limit: math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
			settings.AddFlags(fs, "serve", false)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			v, err := settings.Load("serve", fs, append([]string{"XDG_CONFIG_HOME=" + t.TempDir()}, tc.environ...))
			if err != nil {
				t.Fatal(err)
			}
			limit, keep := memoryLimit(v, tc.environ)
			if limit != tc.limit || keep != tc.keep {
				t.Fatalf("limit %d, keep %v; want %d, %v", limit, keep, tc.limit, tc.keep)
			}
		})
	}
}
