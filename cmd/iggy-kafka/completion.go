package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
