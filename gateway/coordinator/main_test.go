package coordinator

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the package starts is ended by its owner's Close: a test that leaves one
// running fails the package.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
