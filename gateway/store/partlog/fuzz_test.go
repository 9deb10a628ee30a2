package partlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzRecover appends arbitrary bytes to a valid segment: Open must not
// panic, must keep every valid batch, and must leave a log that appends.
func FuzzRecover(f *testing.F) {
	src := f.TempDir()
	l, err := Open(src, Options{PartitionID: 2, Fsync: FsyncNever})
	if err != nil {
		f.Fatal(err)
	}
	fill(f, l, 12)
	valid, _, err := l.Read(0, 1000, nil)
	if err != nil {
		f.Fatal(err)
	}
	l.Close()
	segment, err := os.ReadFile(segmentName(src, 0, logSuffix))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Add(makeBatch(f, 12, 2))
	f.Add(segment[:400])
	// One directory serves every run: creating and removing a directory per
	// run makes the filesystem, not the code, the bottleneck.
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, junk []byte) {
		overwrite(t, filepath.Join(dir, "00000000000000000000.log"), append(bytes.Clone(segment), junk...))
		if err := os.Remove(filepath.Join(dir, "00000000000000000000.index")); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		l, err := Open(dir, Options{PartitionID: 2, Fsync: FsyncNever})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		next := l.NextOffset()
		if next < 12 {
			t.Fatalf("valid prefix lost: next %d", next)
		}
		got, n, err := l.Read(0, 12, nil)
		if err != nil || n != 12 || !bytes.Equal(got, valid) {
			t.Fatalf("valid prefix changed: n %d, err %v", n, err)
		}
		if base, err := l.Append(makeBatch(t, next, 1), time.Now()); err != nil || base != next {
			t.Fatalf("append after recovery: %d, %v", base, err)
		}
	})
}
