package main

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

// storeConfig builds the embedded store's configuration, shared by store and by serve without
// --iggy (whose --tls-cert belongs to the Kafka listener, so withTLS is false there).
func (a *app) storeConfig(listen string, withTLS bool) (store.Config, error) {
	v := a.values
	policy, err := partlog.ParseFsyncPolicy(v.String("fsync"))
	if err != nil {
		return store.Config{}, v.Invalid("fsync", "%v", err)
	}
	cfg := store.Config{
		Listen:            listen,
		DataDir:           v.String("data"),
		Fsync:             policy,
		FsyncInterval:     v.Duration("fsync-interval"),
		SegmentBytes:      v.Bytes("segment-size"),
		RootUsername:      v.String("root-username"),
		RootPassword:      v.String("root-password"),
		HeartbeatInterval: v.Duration("heartbeat-interval"),
		BufferBudget:      v.Bytes("buffer-budget"),
		ReadTimeout:       v.Duration("read-timeout"),
		LoginTimeout:      v.Duration("auth-timeout"),
	}
	if err := checkLimits(v); err != nil {
		return cfg, err
	}
	if cfg.DataDir == "" {
		return cfg, v.Invalid("data", "must name a directory")
	}
	if cfg.FsyncInterval == 0 && policy == partlog.FsyncInterval {
		return cfg, v.Invalid("fsync-interval", "must be above zero with --fsync interval")
	}
	if cfg.HeartbeatInterval == 0 {
		return cfg, v.Invalid("heartbeat-interval", "must be above zero")
	}
	if withTLS {
		cfg.TLS, err = listenerTLS(v)
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}
