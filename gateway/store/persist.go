package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// metaVersion is the version of the metadata document; New refuses a
// document with a newer one rather than dropping fields it does not know.
const metaVersion = 1

// metaDoc is the persisted form of state. Field names are part of the
// on-disk format.
type metaDoc struct {
	Version     int         `json:"version"`
	NextSession uint64      `json:"next_session"`
	Streams     []streamDoc `json:"streams"`
	Users       []userDoc   `json:"users"`
}

type streamDoc struct {
	ID        uint32     `json:"id"`
	Name      string     `json:"name"`
	CreatedAt uint64     `json:"created_at"`
	Topics    []topicDoc `json:"topics"`
}

type topicDoc struct {
	ID          uint32         `json:"id"`
	Name        string         `json:"name"`
	CreatedAt   uint64         `json:"created_at"`
	Options     topicOptions   `json:"options"`
	Partitions  []partitionDoc `json:"partitions"`
	Groups      []groupDoc     `json:"groups"`
	NextGroupID uint32         `json:"next_group_id"`
}

type partitionDoc struct {
	ID        uint32      `json:"id"`
	CreatedAt uint64      `json:"created_at"`
	Offsets   []offsetDoc `json:"offsets,omitempty"`
}

type offsetDoc struct {
	Kind   uint8  `json:"kind"`
	ID     uint32 `json:"id"`
	Offset uint64 `json:"offset"`
}

type groupDoc struct {
	ID      uint32      `json:"id"`
	Name    string      `json:"name"`
	Members []memberDoc `json:"members,omitempty"`
}

// memberDoc is a consumer-group member as the real server keeps it in its metadata: it outlives
// a restart, with no connection left to close or go stale, until the group is deleted.
type memberDoc struct {
	Slot  uint32   `json:"slot"`
	Owned []uint32 `json:"owned,omitempty"`
}

type userDoc struct {
	ID        uint32 `json:"id"`
	Username  string `json:"username"`
	CreatedAt uint64 `json:"created_at"`
	Status    uint8  `json:"status"`
	Salt      []byte `json:"salt"`
	Hash      []byte `json:"hash"`
	// Iterations of the hash's PBKDF2; absent in stores written before it was kept, whose
	// hashes have pbkdf2Iterations.
	Iterations int      `json:"iterations,omitempty"`
	Perms      []byte   `json:"permissions,omitempty"`
	PATs       []patDoc `json:"personal_access_tokens,omitempty"`
}

type patDoc struct {
	Name     string `json:"name"`
	Hash     []byte `json:"hash"`
	ExpiryAt uint64 `json:"expiry_at"`
}

// metaStore writes the metadata document. Writers marshal under Server.mu
// and take a sequence number there; the write itself happens under mu of the
// store and skips any document older than the last one written, so a slow
// writer never replaces newer metadata with older.
type metaStore struct {
	path    string
	mu      sync.Mutex
	seq     atomic.Uint64 // last sequence handed out
	written uint64
}

// snapshotLocked marshals the state. The caller holds Server.mu (read or
// write).
func (s *Server) snapshotLocked() ([]byte, uint64, error) {
	doc := metaDoc{Version: metaVersion, NextSession: s.nextSession}
	for _, st := range s.state.streams {
		if st == nil {
			continue
		}
		sd := streamDoc{ID: st.id, Name: st.name, CreatedAt: st.createdAt}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			td := topicDoc{ID: t.id, Name: t.name, CreatedAt: t.createdAt, Options: t.opts, NextGroupID: t.nextGroupID}
			for _, p := range t.partitions {
				pd := partitionDoc{ID: p.id, CreatedAt: p.createdAt}
				for k, off := range p.offsets {
					pd.Offsets = append(pd.Offsets, offsetDoc{Kind: uint8(k.kind), ID: k.id, Offset: off})
				}
				td.Partitions = append(td.Partitions, pd)
			}
			for _, g := range t.groups {
				if g != nil {
					gd := groupDoc{ID: g.id, Name: g.name}
					for _, m := range g.members {
						if m != nil {
							gd.Members = append(gd.Members, memberDoc{Slot: m.slot, Owned: slices.Clone(m.owned)})
						}
					}
					td.Groups = append(td.Groups, gd)
				}
			}
			sd.Topics = append(sd.Topics, td)
		}
		doc.Streams = append(doc.Streams, sd)
	}
	for _, u := range s.state.users {
		if u == nil {
			continue
		}
		ud := userDoc{ID: u.id, Username: u.username, CreatedAt: u.createdAt, Status: u.status, Salt: u.salt, Hash: u.hash, Iterations: u.iter}
		if u.perms != nil {
			ud.Perms = u.perms.AppendTo(nil)
		}
		for _, p := range u.pats {
			ud.PATs = append(ud.PATs, patDoc{Name: p.name, Hash: p.hash, ExpiryAt: p.expiryAt})
		}
		doc.Users = append(doc.Users, ud)
	}
	b, err := json.MarshalIndent(&doc, "", " ")
	if err != nil {
		return nil, 0, err
	}
	return b, s.meta.seq.Add(1), nil
}

// write stores doc atomically unless a newer document was written already.
func (m *metaStore) write(doc []byte, seq uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if seq <= m.written {
		return nil
	}
	if err := writeFileAtomic(m.path, doc); err != nil {
		return err
	}
	m.written = seq
	return nil
}

// saveState writes the current state; it takes Server.mu itself.
func (s *Server) saveState() error {
	s.mu.RLock()
	if s.state == nil {
		s.mu.RUnlock()
		return nil
	}
	doc, seq, err := s.snapshotLocked()
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	return s.meta.write(doc, seq)
}

// commitLocked snapshots the state while the caller still holds Server.mu
// for writing and returns a function that writes it; the caller runs that
// after unlocking and before acknowledging the change.
func (s *Server) commitLocked() func() error {
	doc, seq, err := s.snapshotLocked()
	if err != nil {
		return func() error { return err }
	}
	return func() error { return s.meta.write(doc, seq) }
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".metadata-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		_ = os.Remove(tmp)
		return werr
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func (s *Server) partitionDir(streamID, topicID, partitionID uint32) string {
	return filepath.Join(s.cfg.DataDir, "streams", strconv.FormatUint(uint64(streamID), 10),
		"topics", strconv.FormatUint(uint64(topicID), 10),
		"partitions", strconv.FormatUint(uint64(partitionID), 10))
}

func (s *Server) streamDir(streamID uint32) string {
	return filepath.Join(s.cfg.DataDir, "streams", strconv.FormatUint(uint64(streamID), 10))
}

func (s *Server) topicDir(streamID, topicID uint32) string {
	return filepath.Join(s.streamDir(streamID), "topics", strconv.FormatUint(uint64(topicID), 10))
}

// recover loads metadata.json (or creates the root user in a new data
// directory) and opens every partition log it names. Directories of
// partitions the metadata does not name are left alone: they are what a
// crash between removing metadata and removing files leaves behind, and a
// later create at the same id removes them first.
func (s *Server) recover() error {
	st := &state{}
	s.state = st
	raw, err := os.ReadFile(s.meta.path)
	if errors.Is(err, os.ErrNotExist) {
		salt, hash, herr := hashPassword(s.cfg.RootPassword, s.cfg.PasswordIterations)
		if herr != nil {
			return herr
		}
		st.users = []*user{{id: 0, username: s.cfg.RootUsername, createdAt: nowMicros(), status: userActive,
			salt: salt, hash: hash, iter: s.cfg.PasswordIterations, perms: allPermissions()}}
		return s.saveState()
	}
	if err != nil {
		return fmt.Errorf("store: read metadata: %w", err)
	}
	var doc metaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("store: metadata %s is corrupt: %w", s.meta.path, err)
	}
	if doc.Version > metaVersion {
		return fmt.Errorf("store: metadata version %d is newer than this server (%d)", doc.Version, metaVersion)
	}
	s.nextSession = doc.NextSession
	for _, sd := range doc.Streams {
		if sd.ID >= maxStreams {
			return fmt.Errorf("store: metadata names stream id %d", sd.ID)
		}
		strm := &stream{id: sd.ID, name: sd.Name, createdAt: sd.CreatedAt}
		for _, td := range sd.Topics {
			if td.ID >= maxTopicsPerStream {
				return fmt.Errorf("store: metadata names topic id %d", td.ID)
			}
			t := &topic{stream: strm, id: td.ID, name: td.Name, createdAt: td.CreatedAt, opts: td.Options, nextGroupID: td.NextGroupID}
			for i, pd := range td.Partitions {
				if pd.ID != uint32(i) {
					return fmt.Errorf("store: metadata topic %d/%d partition %d out of order", sd.ID, td.ID, pd.ID)
				}
				p, err := s.openPartition(sd.ID, td.ID, pd.ID, pd.CreatedAt, t.opts)
				if err != nil {
					return err
				}
				for _, od := range pd.Offsets {
					p.offsets[consumerKey{kind: wire.ConsumerKind(od.Kind), id: od.ID}] = od.Offset
				}
				t.partitions = append(t.partitions, p)
			}
			for _, gd := range td.Groups {
				for uint32(len(t.groups)) <= gd.ID {
					t.groups = append(t.groups, nil)
				}
				g := &group{topic: t, id: gd.ID, name: gd.Name}
				for _, md := range gd.Members {
					// A member of a session that died with the previous run: no connection will
					// ever close or go stale for it, so it stays, as on the real server.
					for uint32(len(g.members)) <= md.Slot {
						g.members = append(g.members, nil)
					}
					g.members[md.Slot] = &member{slot: md.Slot, owned: slices.Clone(md.Owned)}
				}
				t.groups[gd.ID] = g
				if gd.ID >= t.nextGroupID {
					t.nextGroupID = gd.ID + 1
				}
			}
			for uint32(len(strm.topics)) <= td.ID {
				strm.topics = append(strm.topics, nil)
			}
			strm.topics[td.ID] = t
		}
		for uint32(len(st.streams)) <= sd.ID {
			st.streams = append(st.streams, nil)
		}
		st.streams[sd.ID] = strm
	}
	for _, ud := range doc.Users {
		u := &user{id: ud.ID, username: ud.Username, createdAt: ud.CreatedAt, status: ud.Status, salt: ud.Salt, hash: ud.Hash, iter: ud.Iterations}
		if len(ud.Perms) > 0 {
			var p wire.Permissions
			if err := p.Decode(ud.Perms); err != nil {
				return fmt.Errorf("store: metadata user %d permissions: %w", ud.ID, err)
			}
			u.perms = &p
		}
		for _, pd := range ud.PATs {
			u.pats = append(u.pats, &pat{name: pd.Name, hash: pd.Hash, expiryAt: pd.ExpiryAt})
		}
		for uint32(len(st.users)) <= ud.ID {
			st.users = append(st.users, nil)
		}
		st.users[ud.ID] = u
	}
	return nil
}
