package wire

import "strconv"

// DecodeError reports malformed bytes. It matches InvalidFormat under
// errors.Is, which is the code a client reports for a reply it cannot parse;
// a server usually answers a malformed request body with InvalidCommand.
type DecodeError struct {
	What   string // the field or structure being decoded
	Offset int    // byte offset in the input where decoding failed
	Reason string
}

func (e *DecodeError) Error() string {
	return "iggy wire: " + e.What + " at offset " + strconv.Itoa(e.Offset) + ": " + e.Reason
}

// Is makes errors.Is(err, InvalidFormat) hold for every decode failure.
func (e *DecodeError) Is(target error) bool { return target == InvalidFormat }
