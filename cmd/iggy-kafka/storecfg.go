package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/iggy-kafka/iggy-kafka/config"
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

// listenerTLS loads --tls-cert and --tls-key; it returns nil when neither is set.
func listenerTLS(v *config.Values) (*tls.Config, error) {
	cert, key := v.String("tls-cert"), v.String("tls-key")
	switch {
	case cert == "" && key == "":
		return nil, nil
	case cert == "":
		return nil, v.Invalid("tls-key", "--tls-cert is needed too")
	case key == "":
		return nil, v.Invalid("tls-cert", "--tls-key is needed too")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, v.Invalid("tls-cert", "%v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// caPool reads a PEM file of CA certificates.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
