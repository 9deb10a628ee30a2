package kafka

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// FuzzServeStream writes arbitrary bytes, not framed by the test, to a connection in pieces of
// arbitrary size: several requests back to back, a request cut short, a size that claims more
// than follows. No input may panic the server, keep budget charged once the connection is gone,
// or disturb another connection.
func FuzzServeStream(f *testing.F) {
	api := encodeRequest(kmsg.NewPtrApiVersionsRequest(), 1)
	meta := kmsg.NewPtrMetadataRequest()
	meta.SetVersion(versions[meta.Key()].max)
	md := encodeRequest(meta, 2)
	f.Add(append(append([]byte(nil), api...), md...), uint8(0))
	f.Add(append(append([]byte(nil), api...), md[:len(md)/2]...), uint8(3))
	f.Add(binary.BigEndian.AppendUint32(append([]byte(nil), api...), 100<<20), uint8(200))
	f.Add(append(binary.BigEndian.AppendUint32(nil, 200<<10), make([]byte, 100<<10)...), uint8(255))
	ts := startServer(f, func(c *Config) { c.ReadTimeout = 50 * time.Millisecond })
	health := dialRaw(f, ts.addr)

	f.Fuzz(func(t *testing.T, stream []byte, piece uint8) {
		c, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, c)
		c.SetWriteDeadline(time.Now().Add(time.Second))
		for len(stream) > 0 {
			n := min(len(stream), int(piece)*64+1)
			if _, err := c.Write(stream[:n]); err != nil {
				break
			}
			stream = stream[n:]
		}
		c.Close()
		health.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
		checkfor.Eventually(t, 2*time.Second, "budget given back", func() error {
			if used := ts.s.budget.Used(); used != 0 {
				return fmt.Errorf("%d bytes charged", used)
			}
			return nil
		})
	})
}
