package logfmt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// pair is one key=value field of a parsed line.
type pair struct{ key, value string }

// parseLine is a strict logfmt reader for the tests: it accepts exactly what
// the handler is allowed to produce (one line, single spaces between fields,
// bare values without syntax characters, quoted values that are Go string
// literals) and reports anything else as an error.
func parseLine(line string) ([]pair, error) {
	body, ok := strings.CutSuffix(line, "\n")
	if !ok {
		return nil, errors.New("line does not end in a newline")
	}
	if strings.ContainsAny(body, "\n\r") {
		return nil, errors.New("line break inside the line")
	}
	var out []pair
	for i := 0; i < len(body); {
		j := i
		for j < len(body) && body[j] != '=' && body[j] != ' ' && body[j] != '"' {
			j++
		}
		if j == i || j == len(body) || body[j] != '=' {
			return nil, fmt.Errorf("offset %d: want key=", i)
		}
		key := body[i:j]
		j++
		var value string
		if j < len(body) && body[j] == '"' {
			k := j + 1
			for ; k < len(body) && body[k] != '"'; k++ {
				if body[k] == '\\' {
					k++
				}
			}
			if k >= len(body) {
				return nil, fmt.Errorf("offset %d: unterminated quoted value", j)
			}
			v, err := strconv.Unquote(body[j : k+1])
			if err != nil {
				return nil, fmt.Errorf("offset %d: %v", j, err)
			}
			value = v
			j = k + 1
		} else {
			k := j
			for k < len(body) && body[k] != ' ' {
				if body[k] == '"' || body[k] == '=' {
					return nil, fmt.Errorf("offset %d: %q in a bare value", k, body[k])
				}
				k++
			}
			if k == j {
				return nil, fmt.Errorf("offset %d: empty bare value", j)
			}
			value = body[j:k]
			j = k
		}
		out = append(out, pair{key, value})
		if j < len(body) {
			if body[j] != ' ' {
				return nil, fmt.Errorf("offset %d: want a space between fields", j)
			}
			j++
			if j == len(body) {
				return nil, errors.New("trailing space")
			}
		}
		i = j
	}
	return out, nil
}

// lookup returns the value of the last field named key.
func lookup(pairs []pair, key string) (string, bool) {
	for i := len(pairs) - 1; i >= 0; i-- {
		if pairs[i].key == key {
			return pairs[i].value, true
		}
	}
	return "", false
}
