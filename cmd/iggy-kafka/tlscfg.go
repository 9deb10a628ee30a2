package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/iggy-kafka/iggy-kafka/config"
)

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

// clientTLS is the TLS of a connection the command dials, from the settings named by setting:
// setting itself turns it on, setting-server-name names the server to verify and setting-ca
// holds the CA certificates to trust (the system's when unset). It returns nil when TLS is off.
func clientTLS(v *config.Values, setting string) (*tls.Config, error) {
	if !v.Bool(setting) {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: v.String(setting + "-server-name")}
	if ca := v.String(setting + "-ca"); ca != "" {
		pool, err := caPool(ca)
		if err != nil {
			return nil, v.Invalid(setting+"-ca", "%v", err)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}
