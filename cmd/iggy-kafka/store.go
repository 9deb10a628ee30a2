package main

import (
	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
)

func newStoreCmd(a *app) *cobra.Command {
	return withSettings(&cobra.Command{
		Use:   "store",
		Short: "Run the embedded Iggy-compatible store alone",
		Long: `Run the embedded Iggy-compatible store as a server that several gateways, and any Iggy
client such as the official SDKs, can share. Messages live in append-only segment files
under --data; the store recovers them after a crash.

The root user (--root-username/--root-password, iggy/iggy by default) is a development
default: change it for anything reachable by others.`,
		Example: `  iggy-kafka store
  iggy-kafka store --listen 127.0.0.1:8090 --data /var/lib/iggy --fsync always
  IGGY_KAFKA_ROOT_PASSWORD=secret iggy-kafka store --tls-cert cert.pem --tls-key key.pem`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.values.Bool("print-config") {
				a.printConfig(cmd)
				return nil
			}
			log, err := a.logger(cmd)
			if err != nil {
				return err
			}
			cfg, err := a.storeConfig(a.values.String("listen"), true)
			if err != nil {
				return err
			}
			cfg.Logger = log
			srv, err := store.New(cfg)
			if err != nil {
				return err
			}
			log.Info("store listening", "addr", srv.Addr().String(), "data", cfg.DataDir, "fsync", cfg.Fsync.String(), "tls", cfg.TLS != nil)
			err = srv.Serve(cmd.Context())
			log.Info("store stopped")
			return err
		},
	})
}
