package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// trashLocked moves the directory of a stream, topic or partition being deleted out of the way
// while Server.mu is held, so its slot can be taken again at once: the caller removes the
// returned directory after unlocking (closing the logs first). Removing the directory by its
// own name after unlocking would delete whatever a create that took the freed slot meanwhile
// had put there. "" when there was no directory.
func (s *Server) trashLocked(dir string) (string, error) {
	to := fmt.Sprintf("%s.deleted-%d", dir, s.trashSeq.Add(1))
	if err := os.Rename(dir, to); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		return "", fmt.Errorf("store: moving %s aside: %w", dir, err)
	}
	return to, nil
}

// removeTrash removes a directory trashLocked moved aside.
func (s *Server) removeTrash(dir string) {
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		s.log.Warn("removing a deleted directory", "dir", dir, "err", err)
	}
}
