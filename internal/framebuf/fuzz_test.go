package framebuf

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// pieces hands out its data at most size bytes per Read, as a slow peer does.
type pieces struct {
	data []byte
	size int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), p.size)], p.data)
	p.data = p.data[n:]
	return n, nil
}

// FuzzRead reads frames of arbitrary claimed sizes from arbitrary bytes arriving in arbitrary
// pieces: the frame is exactly the first n bytes when that many arrived, a partial frame is
// io.ErrUnexpectedEOF; a frame read holds its buffer's size of the budget when it is above
// FreeBytes, and nothing stays charged once it is released or the read failed.
func FuzzRead(f *testing.F) {
	f.Add([]byte("hello"), uint32(5), uint16(1))
	f.Add(make([]byte, FreeBytes+10), uint32(FreeBytes+10), uint16(999))
	f.Add(make([]byte, ChunkBytes+3), uint32(3*ChunkBytes), uint16(4096))
	f.Fuzz(func(t *testing.T, data []byte, n uint32, piece uint16) {
		n %= 4 * ChunkBytes
		// The data is stretched so that the multi-chunk paths are reached.
		for len(data) > 0 && len(data) < int(n) && len(data) < 3*ChunkBytes {
			data = append(data, data...)
		}
		b := NewBudget(8*ChunkBytes, nil)
		r := bufio.NewReaderSize(&pieces{data: data, size: int(piece) + 1}, 4096)
		got, err := b.Read(r, nil, []byte{1, 2}, int(n), time.Now().Add(time.Minute), nil)
		switch {
		case len(data) >= int(n):
			if err != nil || !bytes.Equal(got.Body, append([]byte{1, 2}, data[:n]...)) {
				t.Fatalf("frame of %d from %d bytes: err %v", n, len(data), err)
			}
			want := int64(0)
			if n > FreeBytes {
				want = int64(cap(got.Body))
			}
			if b.Used() != want || got.Charge() != want {
				t.Fatalf("frame of %d held: %d charged, frame says %d, want %d", n, b.Used(), got.Charge(), want)
			}
		case !errors.Is(err, io.ErrUnexpectedEOF):
			t.Fatalf("frame of %d from %d bytes: err %v", n, len(data), err)
		}
		got.Release()
		if b.Used() != 0 {
			t.Fatalf("%d bytes still charged", b.Used())
		}
	})
}
