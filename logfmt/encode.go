package logfmt

import (
	"encoding"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf8"
)

// recordTimeLayout is used for the record's own timestamp: fixed width and
// always UTC, so lines from several hosts sort as text.
const recordTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// needsQuote reports whether s cannot be written bare: a logfmt reader ends a
// bare value at the first space and treats '=' and '"' as syntax, and anything
// not printable (control characters, line breaks, invalid UTF-8) would corrupt
// the line or the terminal showing it.
func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !strconv.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendString writes s bare when that is unambiguous and as a Go quoted
// string otherwise; strconv's escapes keep every byte, valid UTF-8 or not,
// recoverable with strconv.Unquote.
func appendString(b []byte, s string) []byte {
	if needsQuote(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

// appendKey writes k with every byte that would need quoting replaced by '_'.
// Keys are never quoted: most logfmt readers do not accept quoted keys, and a
// key that changes shape a little is better than a line nobody can split.
func appendKey(b []byte, k string) []byte {
	if k == "" {
		return append(b, '_')
	}
	for i := 0; i < len(k); {
		c := k[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				c = '_'
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(k[i:])
		if (r == utf8.RuneError && size == 1) || !strconv.IsPrint(r) {
			b = append(b, '_')
		} else {
			b = append(b, k[i:i+size]...)
		}
		i += size
	}
	return b
}

// appendValue writes a resolved, non-group value.
func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendString(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		return strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		return appendDuration(b, v.Duration())
	case slog.KindTime:
		return v.Time().AppendFormat(b, time.RFC3339Nano)
	case slog.KindGroup:
		// Groups are flattened by the handler; one only gets here if a
		// caller hands a group to appendValue directly.
		return appendString(b, v.String())
	default:
		return appendAny(b, v.Any())
	}
}

func appendAny(b []byte, x any) []byte {
	switch x := x.(type) {
	case nil:
		return append(b, "<nil>"...)
	case slog.Level:
		return append(b, x.String()...)
	case *slog.Source:
		return appendSource(b, x)
	case error:
		// fmt rather than x.Error(): it survives nil receivers and panics.
		return appendString(b, fmt.Sprint(x))
	case encoding.TextMarshaler:
		return appendString(b, marshalText(x))
	case []byte:
		return appendString(b, string(x))
	default:
		return appendString(b, fmt.Sprintf("%+v", x))
	}
}

// marshalText turns a failure or a panic of MarshalText into visible text:
// logging must never take the process down or lose the line.
func marshalText(m encoding.TextMarshaler) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("!PANIC: %v", r)
		}
	}()
	text, err := m.MarshalText()
	if err != nil {
		return "!ERROR: " + err.Error()
	}
	return string(text)
}

// appendSource writes file:line as one value.
func appendSource(b []byte, src *slog.Source) []byte {
	if src == nil {
		return append(b, "<nil>"...)
	}
	if !needsQuote(src.File) {
		b = append(b, src.File...)
		b = append(b, ':')
		return strconv.AppendInt(b, int64(src.Line), 10)
	}
	return strconv.AppendQuote(b, src.File+":"+strconv.Itoa(src.Line))
}

// appendDuration writes d the way time.Duration.String does ("1h2m3.5s",
// "1.5ms", "0s"), without the allocation String makes.
func appendDuration(b []byte, d time.Duration) []byte {
	if d == 0 {
		return append(b, "0s"...)
	}
	u := uint64(d)
	if d < 0 {
		b = append(b, '-')
		u = -u // two's complement: also right for math.MinInt64
	}
	if u < uint64(time.Second) {
		switch {
		case u < uint64(time.Microsecond):
			b = strconv.AppendUint(b, u, 10)
			return append(b, "ns"...)
		case u < uint64(time.Millisecond):
			b = appendFixed(b, u, 3)
			return append(b, "µs"...)
		default:
			b = appendFixed(b, u, 6)
			return append(b, "ms"...)
		}
	}
	hours := u / uint64(time.Hour)
	u -= hours * uint64(time.Hour)
	minutes := u / uint64(time.Minute)
	u -= minutes * uint64(time.Minute)
	if hours > 0 {
		b = strconv.AppendUint(b, hours, 10)
		b = append(b, 'h')
	}
	if hours > 0 || minutes > 0 {
		b = strconv.AppendUint(b, minutes, 10)
		b = append(b, 'm')
	}
	b = appendFixed(b, u, 9)
	return append(b, 's')
}

// appendFixed writes v / 10^scale as a decimal without trailing zeros in the
// fraction (and without the point when the fraction is zero).
func appendFixed(b []byte, v uint64, scale int) []byte {
	pow := uint64(1)
	for range scale {
		pow *= 10
	}
	b = strconv.AppendUint(b, v/pow, 10)
	frac := v % pow
	if frac == 0 {
		return b
	}
	digits := scale
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	var tmp [20]byte
	f := strconv.AppendUint(tmp[:0], frac, 10)
	b = append(b, '.')
	for i := len(f); i < digits; i++ {
		b = append(b, '0')
	}
	return append(b, f...)
}
