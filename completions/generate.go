// Package completions holds the shell completion scripts of iggy-kafka, generated from its
// command tree and shipped in the release archives and packages. A test in cmd/iggy-kafka fails
// when they no longer match the commands.
package completions

//go:generate sh -c "go run ../cmd/iggy-kafka completion bash > iggy-kafka.bash"
//go:generate sh -c "go run ../cmd/iggy-kafka completion zsh > iggy-kafka.zsh"
//go:generate sh -c "go run ../cmd/iggy-kafka completion fish > iggy-kafka.fish"
