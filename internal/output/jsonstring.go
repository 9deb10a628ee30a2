package output

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are (encoding/json's HTML-safe set).
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendJSONString quotes s as JSON, escaping what JSON requires and <, >, & as encoding/json
// does.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if jsonSafe[c] {
			continue
		}
		if c >= 0x80 {
			// Multi-byte UTF-8 passes through; encoding/json would also escape U+2028/9 and
			// replace invalid bytes, which strconv.Quote-style handling covers below.
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == 0xFFFD && size == 1 || r == 0x2028 || r == 0x2029 {
				b = append(b, s[start:i]...)
				if r == 0xFFFD {
					b = append(b, `\ufffd`...)
				} else {
					b = append(b, `\u202`...)
					b = append(b, hexDigits[r&0xF])
				}
				start = i + size
			}
			i += size - 1
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
