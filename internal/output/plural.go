package output

import "strconv"

// Plural is "1 record", "0 records", "2 records".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
