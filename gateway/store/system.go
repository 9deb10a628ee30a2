package store

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetStats] = (*conn).getStats
	readHandlers[wire.CmdGetSnapshot] = (*conn).getSnapshot
	readHandlers[wire.CmdGetClusterMetadata] = (*conn).getClusterMetadata
	readHandlers[wire.CmdDescribeOptions] = (*conn).describeOptions
	readHandlers[wire.CmdGetMe] = (*conn).getMe
	readHandlers[wire.CmdGetClient] = (*conn).getClient
	readHandlers[wire.CmdGetClients] = (*conn).getClients
}

func (s *Server) statsLocked() wire.Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	host, _ := os.Hostname()
	st := wire.Stats{
		ProcessID:         uint32(os.Getpid()),
		MemoryUsage:       ms.Sys,
		TotalMemory:       ms.Sys,
		RunTime:           uint64(time.Since(s.started).Microseconds()),
		StartTime:         uint64(s.started.UnixMicro()),
		ReadBytes:         s.readBytes.Load(),
		WrittenBytes:      s.writtenBytes.Load(),
		Hostname:          host,
		OSName:            runtime.GOOS,
		OSVersion:         runtime.GOARCH,
		KernelVersion:     runtime.Version(),
		IggyServerVersion: Version,
		IggyServerSemver:  versionSemver,
		ThreadsCount:      uint32(runtime.GOMAXPROCS(0)),
	}
	for _, strm := range s.state.streams {
		if strm == nil {
			continue
		}
		st.StreamsCount++
		for _, t := range strm.topics {
			if t == nil {
				continue
			}
			st.TopicsCount++
			for _, p := range t.partitions {
				st.PartitionsCount++
				st.SegmentsCount += uint32(max(p.log.SegmentCount(), 1))
				st.MessagesCount += p.log.MessageCount()
				st.MessagesSizeBytes += p.log.SizeBytes()
			}
			for _, g := range t.groups {
				if g != nil {
					st.ConsumerGroupsCount++
				}
			}
		}
	}
	for c := range s.conns {
		if c.seen.Load() {
			st.ClientsCount++
		}
	}
	st.FreeDiskSpace, st.TotalDiskSpace = diskSpace(s.cfg.DataDir)
	return st
}

func (c *conn) getStats(sess *session, body []byte) error {
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.allowed(sess, authz.ReadServers) {
		return wire.Unauthorized
	}
	st := s.statsLocked()
	c.out = st.AppendTo(c.out)
	return nil
}

// getSnapshot answers with a ZIP archive describing the server: its
// metadata (without password or token hashes), its stats and a listing of
// the data directory. The requested compression picks Store or Deflate;
// the other methods are not available in archive/zip and fall back to
// Deflate.
func (c *conn) getSnapshot(sess *session, body []byte) error {
	var q wire.GetSnapshot
	if err := decode(&q, body); err != nil {
		return err
	}
	if q.Compression < 1 || q.Compression > 6 {
		return wire.InvalidCommand
	}
	s := c.s
	s.mu.RLock()
	if !s.allowed(sess, authz.ReadServers) {
		s.mu.RUnlock()
		return wire.Unauthorized
	}
	stats := s.statsLocked()
	meta, _, err := s.snapshotLocked()
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	var doc metaDoc
	if err := json.Unmarshal(meta, &doc); err != nil {
		return err
	}
	for i := range doc.Users {
		doc.Users[i].Salt, doc.Users[i].Hash = nil, nil
		for j := range doc.Users[i].PATs {
			doc.Users[i].PATs[j].Hash = nil
		}
	}
	method := zip.Deflate
	if q.Compression == 1 {
		method = zip.Store
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, v any) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Now()})
		if err != nil {
			return err
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	if err := add("metadata.json", doc); err != nil {
		return err
	}
	if err := add("stats.json", stats); err != nil {
		return err
	}
	if err := add("server.json", map[string]any{
		"version": Version, "listen": s.Addr().String(), "data_dir": s.cfg.DataDir,
		"fsync": s.cfg.Fsync.String(), "heartbeat_interval": s.cfg.HeartbeatInterval.String(),
		"requested_types": q.Types,
	}); err != nil {
		return err
	}
	if err := add("filesystem.json", s.listDataDir()); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	c.out = append(c.out, buf.Bytes()...)
	return nil
}

// listDataDir is the file-system overview of the snapshot: every file of
// the data directory with its size, at most 10,000 entries.
func (s *Server) listDataDir() []string {
	var out []string
	root := s.cfg.DataDir
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 12 || len(out) >= 10000 {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := dir + string(os.PathSeparator) + e.Name()
			if e.IsDir() {
				walk(p, depth+1)
				continue
			}
			if info, err := e.Info(); err == nil && len(out) < 10000 {
				rel := p[len(root):]
				out = append(out, fmt.Sprintf("%s %d", rel, info.Size()))
			}
		}
	}
	walk(root, 0)
	return out
}

func (c *conn) getClusterMetadata(sess *session, body []byte) error {
	ip, port := "127.0.0.1", uint16(0)
	if host, p, err := net.SplitHostPort(c.s.Addr().String()); err == nil {
		ip = host
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			port = uint16(n)
		}
	}
	md := wire.SingleNodeMetadata(ip, port)
	c.out = md.AppendTo(c.out)
	return nil
}

func (c *conn) describeOptions(sess *session, body []byte) error {
	var q wire.DescribeOptions
	if err := decode(&q, body); err != nil {
		return err
	}
	specs, ok := wire.OptionCatalog(q.Scope)
	if !ok {
		return wire.InvalidCommand
	}
	list := wire.OptionSpecs(specs)
	c.out = list.AppendTo(c.out)
	return nil
}

// clientDetailsLocked describes one connection. The caller holds Server.mu.
func clientDetailsLocked(c *conn) wire.ClientDetails {
	d := wire.ClientDetails{ClientInfo: wire.ClientInfo{
		ClientID: c.id, UserID: wire.NoUser, Transport: wire.TransportTCP, Address: c.addr,
	}}
	if c.sess != nil {
		d.UserID = c.sess.userID
		for _, g := range c.sess.groups {
			d.Groups = append(d.Groups, wire.ClientGroup{StreamID: g.topic.stream.id, TopicID: g.topic.id, GroupID: g.id})
		}
	}
	d.ConsumerGroupsCount = uint32(len(d.Groups))
	return d
}

func (c *conn) getMe(sess *session, body []byte) error {
	c.s.mu.RLock()
	d := clientDetailsLocked(c)
	c.s.mu.RUnlock()
	c.out = d.AppendTo(c.out)
	return nil
}

func (c *conn) getClient(sess *session, body []byte) error {
	var q wire.GetClient
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.allowed(sess, authz.ReadServers) {
		return wire.Unauthorized
	}
	for other := range s.conns {
		if other.id == q.ClientID {
			d := clientDetailsLocked(other)
			c.out = d.AppendTo(c.out)
			return nil
		}
	}
	return nil
}

func (c *conn) getClients(sess *session, body []byte) error {
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.allowed(sess, authz.ReadServers) {
		return wire.Unauthorized
	}
	var list wire.ClientList
	for other := range s.conns {
		if other.seen.Load() {
			list = append(list, clientDetailsLocked(other).ClientInfo)
		}
	}
	slices.SortFunc(list, func(a, b wire.ClientInfo) int { return cmp.Compare(a.ClientID, b.ClientID) })
	c.out = list.AppendTo(c.out)
	return nil
}
