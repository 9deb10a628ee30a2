package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// A topic created in the slot of one being deleted, before the delete removed its directory,
// keeps its own directory: the delete removes only the directory it moved aside. The same holds
// for a stream. Nothing of the deleted ones is left on disk.
func TestDeleteLeavesAReusedSlotAlone(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, nil)
	c, other := loggedIn(t, s), loggedIn(t, s)
	mustCreateStream(t, c, "s")
	sid := wire.NumericID(0)
	mustCreateTopic(t, c, sid, "old", 2)

	var created wire.TopicDetails
	s.afterDelete = func() {
		s.afterDelete = nil
		created = mustCreateTopic(t, other, sid, "new", 2)
	}
	ok(t, c.do(wire.CmdDeleteTopic, (&wire.TopicRequest{Stream: sid, Topic: wire.NumericID(0)}).AppendTo(nil)))
	if created.ID != 0 {
		t.Fatalf("the new topic took id %d, want the freed 0", created.ID)
	}
	for p := range uint32(2) {
		if _, err := os.Stat(s.partitionDir(0, 0, p)); err != nil {
			t.Fatalf("partition %d of the new topic: %v", p, err)
		}
	}

	mustCreateStream(t, c, "t")
	mustCreateTopic(t, c, wire.NumericID(1), "x", 1)
	s.afterDelete = func() {
		s.afterDelete = nil
		if d := mustCreateStream(t, other, "u"); d.ID != 1 {
			t.Errorf("the new stream took id %d, want the freed 1", d.ID)
		}
		mustCreateTopic(t, other, wire.NumericID(1), "y", 1)
	}
	ok(t, c.do(wire.CmdDeleteStream, (&wire.StreamRequest{Stream: wire.NumericID(1)}).AppendTo(nil)))
	if _, err := os.Stat(s.partitionDir(1, 0, 0)); err != nil {
		t.Fatalf("the topic of the stream that took the freed id: %v", err)
	}
	err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if strings.Contains(filepath.Base(path), ".deleted-") {
			t.Errorf("left on disk: %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
