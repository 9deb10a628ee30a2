// Command iggyuser creates an Iggy user for an interop script, logged in to the Iggy server at
// --iggy as its root user iggy (password iggy): --user and --password name it, and it gets the
// permissions to read and write every topic, not to create one (with --no-permissions, none).
// A user that exists already is left as it is.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "iggyuser:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("iggy", "", "the Iggy server's address (required)")
	user := flag.String("user", "", "the user to create (required)")
	password := flag.String("password", "", "its Iggy password (required)")
	none := flag.Bool("no-permissions", false, "create the user without permissions")
	flag.Parse()
	if *addr == "" || *user == "" || *password == "" {
		return errors.New("--iggy, --user and --password are required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{*addr}, Username: "iggy", Password: "iggy"})
	if err != nil {
		return err
	}
	defer c.Close()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true, SendMessages: true}}
	if *none {
		perms = &wire.Permissions{}
	}
	if _, err := c.CreateUser(ctx, *user, *password, wire.UserStatusActive, perms); err != nil && !errors.Is(err, wire.UserAlreadyExists) {
		return fmt.Errorf("creating %s: %w", *user, err)
	}
	return nil
}
