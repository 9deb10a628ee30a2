// Package config resolves the settings of every iggy-kafka command with one precedence:
// command-line flags, then IGGY_KAFKA_* environment variables, then the config file, then the
// defaults.
//
// A Setting is declared once, with its name, kind, default and help; from that one declaration the
// package derives the flag (--name), the environment variable (IGGY_KAFKA_NAME with dashes as
// underscores) and the config file key (name). Commands register the settings they use on their
// flag set and call Load, which reads the config file through viper, refuses any IGGY_KAFKA_*
// variable or config key it does not know (naming the closest known one, because a typo must never
// be silently ignored), parses every value by its kind and reports a bad value together with the
// setting and the place it came from. Values remembers where each value came from so that
// `iggy-kafka config` can show the effective configuration with secrets redacted.
package config
