package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix starts the name of every environment variable the project reads.
const EnvPrefix = "IGGY_KAFKA_"

// ConfigKey is the setting that names the config file; it is a flag and an environment variable
// but never a key inside the file itself.
const ConfigKey = "config"

// Kind says how a setting's text is parsed and checked.
type Kind int

const (
	String Kind = iota
	Int
	Bool
	Duration
	Enum     // one of Setting.Enum
	HostPort // host:port with a numeric port 0..65535; the host may be empty
	List     // comma-separated strings
	Bytes    // a size: 1048576, 512KiB, 100MiB, 1GiB
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Bool:
		return "bool"
	case Duration:
		return "duration"
	case Enum:
		return "enum"
	case HostPort:
		return "host:port"
	case List:
		return "list"
	case Bytes:
		return "size"
	}
	return "string"
}

// Setting is the single declaration of one configurable value.
type Setting struct {
	Name     string   // flag name and config key, e.g. "log-level"
	Kind     Kind     //
	Default  string   // textual default, parsed like any other source
	Enum     []string // allowed values for Kind Enum
	Secret   bool     // redacted when the configuration is printed
	Usage    string   // flag help
	Commands []string // commands that use it; empty means every command
	// Flag is the flag's name when it is not Name: two settings of different commands may
	// share a flag and keep apart their environment variables and config keys.
	Flag string
}

// FlagName is the setting's flag, without the dashes.
func (s Setting) FlagName() string {
	if s.Flag != "" {
		return s.Flag
	}
	return s.Name
}

// Env is the setting's environment variable.
func (s Setting) Env() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
}

// UsedBy reports whether the named command uses the setting.
func (s Setting) UsedBy(command string) bool {
	return len(s.Commands) == 0 || slices.Contains(s.Commands, command)
}

// Registry is the list of every setting the binary knows.
type Registry struct {
	list   []Setting
	byName map[string]Setting
}

// NewRegistry indexes settings; it panics on a duplicate name because that is a programming error
// found by the first test that builds the command tree.
func NewRegistry(settings ...Setting) *Registry {
	r := &Registry{byName: make(map[string]Setting, len(settings))}
	for _, s := range settings {
		if _, dup := r.byName[s.Name]; dup {
			panic("config: duplicate setting " + s.Name)
		}
		r.byName[s.Name] = s
		r.list = append(r.list, s)
	}
	return r
}

// All returns the settings in declaration order.
func (r *Registry) All() []Setting { return slices.Clone(r.list) }

// Lookup finds a setting by name.
func (r *Registry) Lookup(name string) (Setting, bool) {
	s, ok := r.byName[name]
	return s, ok
}

// AddFlags declares the flags of the settings the command uses. Global settings (no Commands)
// are added by the root command as persistent flags instead, so they are skipped here unless
// global is true.
func (r *Registry) AddFlags(fs *pflag.FlagSet, command string, global bool) {
	for _, s := range r.list {
		if (len(s.Commands) == 0) != global || !s.UsedBy(command) {
			continue
		}
		usage := s.Usage
		if s.Kind == Enum {
			usage += " (" + strings.Join(s.Enum, "|") + ")"
		}
		usage += " [" + s.Env() + "]"
		switch s.Kind {
		case Bool:
			b, _ := strconv.ParseBool(s.Default)
			fs.Bool(s.FlagName(), b, usage)
		default:
			fs.Var(&textValue{text: s.Default, kind: s.Kind}, s.FlagName(), usage)
		}
	}
}

// Source tells where a value came from.
type Source struct {
	Kind  string // "flag", "env", "file" or "default"
	Where string // the variable name or file path, when there is one
}

func (s Source) String() string {
	if s.Where == "" {
		return s.Kind
	}
	return s.Kind + " " + s.Where
}

// Value is one resolved setting.
type Value struct {
	Setting Setting
	Raw     string
	Source  Source
	parsed  any
}

// Shown is the value as printed: secrets redacted.
func (v Value) Shown() string {
	if v.Setting.Secret && v.Raw != "" {
		return "<redacted>"
	}
	return v.Raw
}

// Values holds every setting a command resolved.
type Values struct {
	Command string
	File    string // the config file read, or ""
	byName  map[string]*Value
	order   []string
}

// UsageError marks an error caused by what the user asked for (exit status 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// TestEnvPrefix starts the variables of the project's test harness (which Iggy server the tests
// run against, for one): they configure the tests, not the binary, which ignores them, so a
// gateway started by a test inherits them harmlessly.
const TestEnvPrefix = EnvPrefix + "TEST_"

// CheckEnvironment refuses IGGY_KAFKA_* variables that name no setting, except the test
// harness's (TestEnvPrefix).
func (r *Registry) CheckEnvironment(environ []string) error {
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || strings.HasPrefix(name, TestEnvPrefix) {
			continue
		}
		if !r.knownEnv(name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	msgs := make([]string, 0, len(unknown))
	for _, name := range unknown {
		msg := "unknown environment variable " + name
		if near := r.closest(name, func(s Setting) string { return s.Env() }); near != "" {
			msg += " (did you mean " + near + "?)"
		}
		msgs = append(msgs, msg)
	}
	return usagef("%s", strings.Join(msgs, "; "))
}

func (r *Registry) knownEnv(name string) bool {
	for _, s := range r.list {
		if s.Env() == name {
			return true
		}
	}
	return false
}

func (r *Registry) closest(name string, key func(Setting) string) string {
	keys := make([]string, len(r.list))
	for i, s := range r.list {
		keys[i] = key(s)
	}
	return Closest(name, keys)
}

// Closest is the candidate nearest to name, ignoring case, when it is near enough to be a typo
// of it (an edit distance of at most 3, or a third of name); "" otherwise. Every "did you mean"
// of the binary (settings, commands, flags) uses it.
func Closest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, k := range candidates {
		if d := distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if bestD > max(3, len(name)/3) {
		return ""
	}
	return best
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DefaultFiles are the config files tried, in order, when none is named.
func DefaultFiles(getenv func(string) string) []string {
	var files []string
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "iggy-kafka", "config.yaml"))
	} else if h := getenv("HOME"); h != "" {
		files = append(files, filepath.Join(h, ".config", "iggy-kafka", "config.yaml"))
	}
	return append(files, "/etc/iggy-kafka/config.yaml")
}

// Load resolves the settings of command from its flags, the environment and the config file.
func (r *Registry) Load(command string, fs *pflag.FlagSet, environ []string) (*Values, error) {
	if err := r.CheckEnvironment(environ); err != nil {
		return nil, err
	}
	env := make(map[string]string)
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	v := viper.New()
	file, err := r.findFile(fs, env)
	if err != nil {
		return nil, err
	}
	if file != "" {
		v.SetConfigFile(file)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, usagef("config file %s: %v", file, err)
		}
		for _, key := range v.AllKeys() {
			top, _, _ := strings.Cut(key, ".")
			if _, ok := r.byName[top]; ok && top != ConfigKey {
				continue
			}
			msg := fmt.Sprintf("config file %s: unknown key %q", file, key)
			if near := r.closest(top, func(s Setting) string { return s.Name }); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			return nil, usagef("%s", msg)
		}
	}
	vals := &Values{Command: command, File: file, byName: map[string]*Value{}}
	for _, s := range r.list {
		if !s.UsedBy(command) {
			continue
		}
		val := &Value{Setting: s}
		f := fs.Lookup(s.FlagName())
		switch {
		case f != nil && f.Changed:
			val.Raw, val.Source = f.Value.String(), Source{Kind: "flag", Where: "--" + s.FlagName()}
		case hasEnv(env, s.Env()):
			val.Raw, val.Source = env[s.Env()], Source{Kind: "env", Where: s.Env()}
		case file != "" && v.IsSet(s.Name):
			val.Raw, val.Source = fileText(v.Get(s.Name)), Source{Kind: "file", Where: file}
		default:
			val.Raw, val.Source = s.Default, Source{Kind: "default"}
		}
		if s.Name == ConfigKey {
			val.Raw = file
		}
		p, err := parse(s, val.Raw)
		if err != nil {
			return nil, usagef("invalid value %q for %s (from %s): %v", val.Raw, s.Name, val.Source, err)
		}
		val.parsed = p
		vals.byName[s.Name] = val
		vals.order = append(vals.order, s.Name)
	}
	return vals, nil
}

func hasEnv(env map[string]string, name string) bool {
	_, ok := env[name]
	return ok
}

func fileText(x any) string {
	switch t := x.(type) {
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	case nil:
		return ""
	}
	return fmt.Sprint(x)
}

func (r *Registry) findFile(fs *pflag.FlagSet, env map[string]string) (string, error) {
	named := ""
	if f := fs.Lookup(ConfigKey); f != nil && f.Changed {
		named = f.Value.String()
	} else if e, ok := env[EnvPrefix+"CONFIG"]; ok {
		named = e
	}
	if named != "" {
		if _, err := os.Stat(named); err != nil {
			return "", usagef("config file %s: %v", named, errors.Unwrap(err))
		}
		return named, nil
	}
	for _, f := range DefaultFiles(func(k string) string { return env[k] }) {
		if _, err := os.Stat(f); err == nil {
			return f, nil
		}
	}
	return "", nil
}

func parse(s Setting, raw string) (any, error) {
	switch s.Kind {
	case Int:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, errors.New("not an integer")
		}
		return n, nil
	case Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, errors.New("not a boolean (true or false)")
		}
		return b, nil
	case Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return nil, errors.New("not a duration (like 500ms, 30s, 5m)")
		}
		if d < 0 {
			return nil, errors.New("negative duration")
		}
		return d, nil
	case Enum:
		if !slices.Contains(s.Enum, raw) {
			return nil, fmt.Errorf("must be one of %s", strings.Join(s.Enum, ", "))
		}
		return raw, nil
	case HostPort:
		if raw == "" {
			return raw, nil
		}
		if err := checkHostPort(raw); err != nil {
			return nil, err
		}
		return raw, nil
	case List:
		var out []string
		for _, p := range strings.Split(raw, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	case Bytes:
		return ParseBytes(raw)
	}
	return raw, nil
}

func checkHostPort(raw string) error {
	_, port, err := net.SplitHostPort(raw)
	if err != nil {
		return errors.New("not host:port")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number in 0..65535", port)
	}
	return nil
}

// ParseBytes reads a size such as 1048576, 64KiB, 100MiB or 1GiB (also KB/MB/GB as powers of 1000).
func ParseBytes(raw string) (int64, error) {
	s := strings.TrimSpace(raw)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errors.New("not a size (like 1048576, 512KiB, 100MiB, 1GiB)")
	}
	return n * mult, nil
}

func (v *Values) get(name string) *Value {
	val, ok := v.byName[name]
	if !ok {
		panic("config: setting " + name + " is not used by command " + v.Command)
	}
	return val
}

// String returns a String, Enum or HostPort setting.
func (v *Values) String(name string) string { return v.get(name).parsed.(string) }

// Int returns an Int setting.
func (v *Values) Int(name string) int64 { return v.get(name).parsed.(int64) }

// Bool returns a Bool setting.
func (v *Values) Bool(name string) bool { return v.get(name).parsed.(bool) }

// Duration returns a Duration setting.
func (v *Values) Duration(name string) time.Duration { return v.get(name).parsed.(time.Duration) }

// List returns a List setting.
func (v *Values) List(name string) []string { return v.get(name).parsed.([]string) }

// Bytes returns a Bytes setting.
func (v *Values) Bytes(name string) int64 { return v.get(name).parsed.(int64) }

// Source says where a setting's value came from.
func (v *Values) Source(name string) Source { return v.get(name).Source }

// Invalid builds a usage error about a value that parsed but does not fit (a range, a
// combination), naming the setting and its source.
func (v *Values) Invalid(name, format string, args ...any) error {
	val := v.get(name)
	return usagef("invalid value %q for %s (from %s): %s", val.Raw, name, val.Source, fmt.Sprintf(format, args...))
}

// All returns every resolved value in declaration order.
func (v *Values) All() []Value {
	out := make([]Value, 0, len(v.order))
	for _, n := range v.order {
		out = append(out, *v.byName[n])
	}
	return out
}

// textValue keeps a flag's text as given; Load parses it with the other sources so that every
// source gets the same checks and messages. Type names the kind in --help.
type textValue struct {
	text string
	kind Kind
}

func (t *textValue) String() string     { return t.text }
func (t *textValue) Set(s string) error { t.text = s; return nil }
func (t *textValue) Type() string       { return t.kind.String() }
