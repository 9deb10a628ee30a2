package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
)

func newCompletionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script",
		Long: `Print the completion script of a shell. Packages install them for you; to load one by hand:

  bash:        source <(iggy-kafka completion bash)
  zsh:         iggy-kafka completion zsh > "${fpath[1]}/_iggy-kafka"
  fish:        iggy-kafka completion fish > ~/.config/fish/completions/iggy-kafka.fish
  powershell:  iggy-kafka completion powershell | Out-String | Invoke-Expression`,
		Example:   "  iggy-kafka completion bash > /etc/bash_completion.d/iggy-kafka",
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("completion needs one shell: bash, zsh, fish or powershell"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeCompletion(cmd.Root(), args[0], cmd.OutOrStdout())
		},
	}
	return cmd
}

// writeCompletion writes the completion script of shell for the command tree under root.
func writeCompletion(root *cobra.Command, shell string, w io.Writer) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	case "powershell":
		return root.GenPowerShellCompletionWithDesc(w)
	}
	return usageError(fmt.Errorf("unknown shell %q: want bash, zsh, fish or powershell", shell))
}

// completeSettings completes the values of every enumerated setting the command has as a flag
// (-o, --log-level, --log-format, --fsync, ...).
func completeSettings(cmd *cobra.Command) {
	for _, s := range settings.All() {
		if s.Kind != config.Enum || cmd.Flags().Lookup(s.Name) == nil {
			continue
		}
		values := s.Enum
		_ = cmd.RegisterFlagCompletionFunc(s.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completeArguments completes what the commands take beyond flags: node ids of the fleet for
// `drain node`, log partitions for `replay partition` and `inspect --partition`, group names for
// `group describe` and `group seek`.
func completeArguments(root *cobra.Command, a *app) {
	for _, c := range root.Commands() {
		switch c.Name() {
		case "drain":
			c.ValidArgsFunction = a.completeNodes
		case "replay":
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) == 0 {
					return []string{"partition"}, cobra.ShellCompDirectiveNoFileComp
				}
				if len(args) == 1 {
					return completePartitions(cmd, args, toComplete)
				}
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		case "inspect":
			_ = c.RegisterFlagCompletionFunc("partition", completePartitions)
		case "group":
			for _, sub := range c.Commands() {
				if sub.Name() == "describe" || sub.Name() == "seek" {
					sub.ValidArgsFunction = a.completeGroups
				}
			}
		}
	}
}

// completeGroups completes `group describe|seek <TAB>` with the groups the gateways list, each
// with its state, asking them within a second.
func (a *app) completeGroups(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	vals, err := settings.Load(settingsKey(cmd), cmd.Flags(), a.environ)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.values = vals
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, adm, closeAdm, err := a.groupAdmin(ctx, nil)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer closeAdm()
	listed, err := adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, g := range listed.Sorted() {
		out = append(out, g.Group+"\t"+g.State)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeNodes completes `drain node N...` with the nodes the fleet's announcements name, each
// with its state and address, asking the store within a second.
func (a *app) completeNodes(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return []string{"node"}, cobra.ShellCompDirectiveNoFileComp
	}
	vals, err := settings.Load(cmd.Name(), cmd.Flags(), a.environ)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.values = vals
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	log, closeLog, err := a.openLog(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer closeLog()
	m := claims.NewModel()
	if err := m.Refresh(ctx, log); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range m.View.Nodes(now()) {
		id := strconv.Itoa(int(n.ID))
		if !slices.Contains(args[1:], id) {
			out = append(out, id+"\t"+string(n.State)+" "+n.Addr)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
