package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/scram"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// conn is one client connection. A reader goroutine decodes requests in order and hands each to
// an idle worker goroutine of the connection, or a new one (at most MaxInFlight run at once),
// except those it runs itself (dispatch: SASL, ApiVersions, a Fetch alone on the connection); a
// writer goroutine answers them strictly in the order they were read, whatever order they
// finish in.
type conn struct {
	s  *Server
	nc net.Conn
	br *bufio.Reader

	ctx    context.Context // ends when the connection closes or the server gives up
	cancel context.CancelFunc

	// storage and authed change only in the reader goroutine, while no other request of this
	// connection runs (SASL requests are handled inline), so the goroutines it starts later see
	// the new values.
	storage  Storage
	authed   bool
	saslMech string // set by SaslHandshake
	saslRaw  bool   // SaslHandshake v0: the next frame is a bare token
	// scram is the SCRAM exchange between the client-first and the client-final message.
	scram *scram.Exchange
	// saslAttempt is the user the last authentication named, for its log line.
	saslAttempt string
	user        string // the SASL user, once authenticated
	// authUser is user as Server.CloseUser reads it, from another goroutine; the reader
	// publishes it after every authentication attempt (noteUser).
	authUser atomic.Pointer[string]

	out chan *slot
	sem chan struct{}
	// work hands a request to an idle worker of this connection (dispatch), a goroutine that
	// runs one request after another; workers counts those started, which end once work is
	// closed after the reader.
	work    chan func()
	workers sync.WaitGroup

	stopOnce sync.Once
	stopped  chan struct{}

	produceMu    sync.Mutex
	produceOrder map[topicPartition]chan struct{}

	// groupTail closes when the last group request dispatched so far has been handled; only the
	// reader goroutine touches it.
	groupTail chan struct{}
	// mutedUntil is when the connection may read its next request again, in Unix
	// nanoseconds on the server's clock (throttle.go).
	mutedUntil atomic.Int64

	// member: the last member request of this connection was answered here as its group's
	// coordinator (members.go). Guarded by Server.mu.
	member bool
}

type topicPartition struct {
	topic     string
	partition int32
}

// slot holds one request's answer until the writer's turn comes.
type slot struct {
	done       chan struct{}
	frame      []byte // nil: nothing to write (acks=0)
	closeAfter bool
	// A fetch answer's large record batches are not copied into frame: bufs[i] is written
	// where cuts[i] falls in frame, and release hands their buffers back once they are out.
	cuts    []int
	bufs    [][]byte
	release []func()
	// Room for the pieces of a fetch of a few partitions, so that it allocates none.
	cutsA [4]int
	bufsA [4][]byte
	// delay holds the answer back this long before it is written: a throttled client that
	// does not throttle itself (throttle.go).
	delay time.Duration
}

// request is one decoded request with what the handler needs to answer it.
type request struct {
	key, version int16
	corr         int32
	clientID     *string
	kreq         kmsg.Request // nil when the key or version is not served

	ctx     context.Context
	storage Storage
	user    string
	size    int

	// errCode is the first non-zero error code the response carries, for metrics.
	errCode int16
	// produce ordering: wait for before[i] before writing partition i, then close after[i].
	order map[topicPartition]orderTicket
	// after are the requests of this connection that must have been handled before this one is
	// (see order.go); done, when set, closes once this one has been.
	after []chan struct{}
	done  chan struct{}
	// release runs once the response is encoded: fetched buffers go back to their pools.
	release []func()
	// waited is how long the handler waited for data (a Fetch long poll), left out of the
	// request's time for its quota.
	waited time.Duration
}

type orderTicket struct{ before, after chan struct{} }

// connBufBytes sizes a connection's read and write buffers. They count in the Go heap whether
// or not the connection is busy, and the heap is what --memory-limit bounds: 1,000 idle
// connections with 64 KiB each way held 128 MB. Larger reads and writes than this go past the
// buffers to the socket anyway.
const connBufBytes = 16 << 10

func newConn(s *Server, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(s.ctx)
	return &conn{
		s:            s,
		nc:           nc,
		br:           bufio.NewReaderSize(nc, connBufBytes),
		ctx:          ctx,
		cancel:       cancel,
		storage:      s.cfg.Storage,
		out:          make(chan *slot, s.cfg.MaxInFlight),
		sem:          make(chan struct{}, s.cfg.MaxInFlight),
		work:         make(chan func()),
		stopped:      make(chan struct{}),
		produceOrder: make(map[topicPartition]chan struct{}),
	}
}

// stopReading makes the reader stop at the next frame boundary (or now, if it is waiting for
// one); requests already read are still answered.
func (c *conn) stopReading() {
	c.stopOnce.Do(func() {
		close(c.stopped)
		c.nc.SetReadDeadline(time.Now())
	})
}

func (c *conn) isStopped() bool {
	select {
	case <-c.stopped:
		return true
	default:
		return false
	}
}

func (c *conn) serve() {
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	c.readLoop()
	if !c.isStopped() {
		// The peer is gone or broke the protocol: nobody will read the answers, so in-flight
		// work (a long poll, say) is abandoned rather than awaited.
		c.cancel()
	}
	close(c.out)
	<-writerDone
	close(c.work) // the reader, which alone sends on it, has returned
	c.workers.Wait()
	c.cancel()
	c.nc.Close()
	c.s.forget(c)
}

func (c *conn) logAttrs() []any {
	return []any{"remote", c.nc.RemoteAddr().String()}
}

// readLoop reads and dispatches requests until the peer closes, a frame is refused, or the
// server shuts down.
func (c *conn) readLoop() {
	for {
		if !c.waitMuted() {
			return
		}
		f, err := c.readFrame()
		if err != nil {
			return
		}
		// A throttle that began while the reader waited for this frame holds it too.
		if !c.waitMuted() {
			f.Release()
			return
		}
		body := f.Body
		if c.saslRaw {
			ok := c.rawSASL(body)
			c.noteUser()
			f.Release()
			if !ok {
				return
			}
			continue
		}
		req, err := c.parse(body)
		if err != nil {
			f.Release()
			c.s.log.Warn("kafka malformed request; closing connection", append(c.logAttrs(), "err", err)...)
			return
		}
		if reason := closingRequest(req); reason != "" {
			f.Release()
			c.s.log.Warn("kafka "+reason+"; closing connection",
				append(c.logAttrs(), "api_key", req.key, "version", req.version)...)
			return
		}
		if c.s.cfg.SASL && !c.authed && !preAuthKey(req.key) {
			f.Release()
			c.s.log.Warn("kafka request before SASL authentication; closing connection",
				append(c.logAttrs(), "api_key", req.key)...)
			return
		}
		sl, ok := c.dispatch(req, f)
		if !ok {
			return
		}
		// A connection under a quota is read one request at a time, as Kafka reads every
		// connection: the next request waits until this one is recorded and any throttle it
		// calls for has muted the connection (throttle.go).
		if c.quotaLimited(req) {
			select {
			case <-sl.done:
			case <-c.ctx.Done():
				return
			}
		}
	}
}

// noteUser publishes the connection's SASL user for Server.CloseUser.
func (c *conn) noteUser() {
	u := c.user
	c.authUser.Store(&u)
}

func preAuthKey(key int16) bool {
	return key == apiVersionsKey || key == saslHandshakeKey || key == saslAuthenticateKey
}

// dispatch starts req and queues its slot. SASL requests and ApiVersions run inline: they change
// or describe connection state that the next request depends on. So does a Fetch alone on its
// connection (fetchAlone). It reports false when the connection must stop reading, and the
// request's slot. The request's frame, and its share of the buffer budget, is released once the
// handler is done with it and its answer is encoded.
func (c *conn) dispatch(req *request, f framebuf.Frame) (*slot, bool) {
	sl := &slot{done: make(chan struct{})}
	inline := preAuthKey(req.key) || (c.s.cfg.SASL && !c.authed) || c.fetchAlone(req)
	select {
	case c.sem <- struct{}{}:
	case <-c.ctx.Done():
		f.Release()
		return nil, false
	}
	c.order(req)
	req.ctx = c.ctx
	req.storage = c.storage
	req.user = c.user
	c.out <- sl
	run := func() {
		defer func() { <-c.sem }()
		c.process(req, sl)
		f.Release()
		close(sl.done)
	}
	if inline {
		run()
		if req.key == saslAuthenticateKey {
			c.noteUser()
		}
		return sl, !sl.closeAfter
	}
	select {
	case c.work <- run:
	default:
		c.workers.Add(1)
		go c.worker(run)
	}
	return sl, true
}

// worker runs run, then every request handed to it on work until work is closed. A request goes
// to a worker that has run others, whose stack has grown already: a goroutine started for each
// request grew its stack (copied, every frame adjusted) on each, 10 % of the gateway's samples
// under a producer sending one record at a time.
func (c *conn) worker(run func()) {
	defer c.workers.Done()
	for ok := true; ok; run, ok = <-c.work {
		run()
	}
}

// fetchAlone reports whether req is a Fetch with nothing else in flight on the connection and
// nothing more sent behind it: a consumer's fetch connection, which asks again once answered.
// It runs on the reader, as Kafka reads every connection one request at a time: a request sent
// after it is read once it is answered (a pipelined one, already read into the buffer, still
// runs beside it). A consumer's every fetch then costs no goroutine started, no stack grown
// again, and no wake-up of another thread to run it.
func (c *conn) fetchAlone(req *request) bool {
	return req.key == fetchKey && len(c.sem) == 0 && c.br.Buffered() == 0
}

// orderProduce keeps one connection's writes to a partition in the order the client sent them:
// idempotent producers pipeline batches and rely on it, while different partitions still proceed
// in parallel.
func (c *conn) orderProduce(req *request) {
	preq := req.kreq.(*kmsg.ProduceRequest)
	req.order = make(map[topicPartition]orderTicket)
	c.produceMu.Lock()
	defer c.produceMu.Unlock()
	for _, t := range preq.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			if _, dup := req.order[tp]; dup {
				continue
			}
			next := make(chan struct{})
			req.order[tp] = orderTicket{before: c.produceOrder[tp], after: next}
			c.produceOrder[tp] = next
		}
	}
}

// produceDone releases the partition for the next request and forgets it when nobody follows.
func (c *conn) produceDone(tp topicPartition, t orderTicket) {
	c.produceMu.Lock()
	if c.produceOrder[tp] == t.after {
		delete(c.produceOrder, tp)
	}
	c.produceMu.Unlock()
	close(t.after)
}

// process runs the handler and encodes the answer into sl. A panic or a handler error closes the
// connection after the answers before it are written.
func (c *conn) process(req *request, sl *slot) {
	defer func() {
		if r := recover(); r != nil {
			c.s.log.Error("kafka handler panicked; closing connection",
				append(c.logAttrs(), "api_key", req.key, "version", req.version, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))...)
			sl.frame = nil
			sl.closeAfter = true
		}
	}()
	defer func() {
		for _, f := range req.release {
			f()
		}
		req.release = nil
	}()
	start := c.s.clock.Now()
	resp, err := c.run(req)
	if err != nil {
		c.s.log.Warn("kafka request failed; closing connection",
			append(c.logAttrs(), "api_key", req.key, "version", req.version, "err", err)...)
		sl.closeAfter = true
		return
	}
	c.enforceQuotas(req, resp, sl, c.s.clock.Now().Sub(start)-req.waited)
	if resp != nil {
		c.noteMember(req)
	}
	// A SaslAuthenticate that did not authenticate, and did not start a SCRAM exchange, closes
	// the connection once its answer is out.
	if req.key == saslAuthenticateKey && !c.authed && c.scram == nil {
		sl.closeAfter = true
	}
	if o := c.s.cfg.Observer; o != nil {
		o.Request(req.key, req.errCode, req.size+4, sl.size())
		if req.key == produceKey || req.key == fetchKey {
			user, cid := quotaNames(req)
			o.ClientTraffic(user, cid, req.key, req.size+4, sl.size())
		}
	}
}

// encodeSlot encodes resp for sl. A fetch answer keeps its record batches where the Storage
// left them (sl.bufs), and the buffers are released once the writer has sent them.
func (c *conn) encodeSlot(req *request, resp kmsg.Response, sl *slot) []byte {
	fr, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		return c.encode(req, resp)
	}
	buf := getBuf(256)[:8]
	binary.BigEndian.PutUint32(buf[4:], uint32(req.corr))
	if fr.IsFlexible() {
		buf = append(buf, 0)
	}
	buf, cuts, bufs, ok := appendFetchResponse(buf, sl.cutsA[:0], sl.bufsA[:0], fr)
	if !ok {
		putBuf(buf)
		return c.encode(req, resp)
	}
	size := len(buf) - 4
	for _, b := range bufs {
		size += len(b)
	}
	binary.BigEndian.PutUint32(buf, uint32(size))
	if len(bufs) > 0 {
		sl.cuts, sl.bufs, sl.release, req.release = cuts, bufs, req.release, nil
	}
	return buf
}

// size is the number of bytes sl puts on the wire.
func (sl *slot) size() int {
	n := len(sl.frame)
	for _, b := range sl.bufs {
		n += len(b)
	}
	return n
}

// writeSlot writes a slot whose frame is interleaved with bufs, in one vectored write once what
// is buffered is out. vecs is the writer's to reuse, so a write allocates nothing.
func (c *conn) writeSlot(bw *bufio.Writer, sl *slot, vecs *net.Buffers) error {
	if err := bw.Flush(); err != nil {
		return err
	}
	iov := (*vecs)[:0]
	at := 0
	for i, b := range sl.bufs {
		iov = append(iov, sl.frame[at:sl.cuts[i]], b)
		at = sl.cuts[i]
	}
	if at < len(sl.frame) {
		iov = append(iov, sl.frame[at:])
	}
	*vecs = iov
	_, err := iov.WriteTo(c.nc)
	clear(*vecs) // WriteTo consumed iov, not the backing array: drop the references
	return err
}

func (sl *slot) releaseBufs() {
	for _, f := range sl.release {
		f()
	}
	clear(sl.bufsA[:])
	sl.cuts, sl.bufs, sl.release = nil, nil, nil
}

func (c *conn) encode(req *request, resp kmsg.Response) []byte {
	buf := getBuf(encodedSizeHint(resp))[:8]
	binary.BigEndian.PutUint32(buf[4:], uint32(req.corr))
	// ApiVersions always answers with the v0 response header so that a client that does not
	// know our versions yet can read it (KIP-511).
	if resp.IsFlexible() && req.key != apiVersionsKey {
		buf = append(buf, 0)
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}

// encodedSizeHint is about the encoded size of resp, so that a fetch answer,
// megabytes of record batches, is encoded into one buffer of the right size
// instead of one regrown (and copied) a dozen times.
func encodedSizeHint(resp kmsg.Response) int {
	f, ok := resp.(*kmsg.FetchResponse)
	if !ok {
		return 256
	}
	n := 64
	for i := range f.Topics {
		t := &f.Topics[i]
		n += len(t.Topic) + 16
		for j := range t.Partitions {
			n += len(t.Partitions[j].RecordBatches) + 64
		}
	}
	return n
}

func (c *conn) writeLoop() {
	bw := bufio.NewWriterSize(c.nc, connBufBytes)
	var vecs net.Buffers
	dead := false
	for sl := range c.out {
		select {
		case <-sl.done:
		default:
			// The next answer is not ready (a long poll, say): send what is buffered now
			// rather than holding finished answers back behind it.
			if !dead && bw.Buffered() > 0 {
				if err := bw.Flush(); err != nil {
					dead = true
				}
			}
			<-sl.done
		}
		if !dead && sl.delay > 0 {
			if err := bw.Flush(); err != nil {
				dead = true
			} else if !c.holdAnswer(sl) {
				dead = true
			}
		}
		if dead {
			sl.releaseBufs()
			continue
		}
		if sl.frame != nil {
			var err error
			if len(sl.bufs) > 0 {
				err = c.writeSlot(bw, sl, &vecs)
			} else {
				_, err = bw.Write(sl.frame)
			}
			if err != nil {
				dead = true
			}
			putBuf(sl.frame)
			sl.frame = nil
		}
		sl.releaseBufs()
		// Flush when nothing else is ready, so pipelined answers share writes.
		if !dead && (len(c.out) == 0 || sl.closeAfter) {
			if err := bw.Flush(); err != nil {
				dead = true
			}
		}
		if dead || sl.closeAfter {
			dead = true
			c.stopReading()
			c.cancel()
			c.nc.Close()
		}
	}
	if !dead {
		bw.Flush()
	}
}

// parse decodes the request header and, when the key and version are served or listed, the body.
func (c *conn) parse(body []byte) (*request, error) {
	if len(body) < 10 {
		return nil, fmt.Errorf("request of %d bytes is shorter than a header", len(body))
	}
	req := &request{
		key:     int16(binary.BigEndian.Uint16(body)),
		version: int16(binary.BigEndian.Uint16(body[2:])),
		corr:    int32(binary.BigEndian.Uint32(body[4:])),
		size:    len(body),
	}
	idLen := int(int16(binary.BigEndian.Uint16(body[8:])))
	rest := body[10:]
	if idLen >= 0 {
		if idLen > len(rest) {
			return nil, errors.New("client id longer than the request")
		}
		id := string(rest[:idLen])
		req.clientID = &id
		rest = rest[idLen:]
	}
	kreq := kmsg.RequestForKey(req.key)
	if kreq == nil || !c.s.serves(req.key, req.version) {
		return req, nil
	}
	if err := decodeBody(kreq, req.version, rest); err != nil {
		return nil, fmt.Errorf("decoding %s v%d: %w", kmsg.NameForKey(req.key), req.version, err)
	}
	req.kreq = kreq
	return req, nil
}

// decodeBody reads a request body at version, after the header's tag section if flexible.
func decodeBody(kreq kmsg.Request, version int16, rest []byte) error {
	kreq.SetVersion(version)
	if kreq.IsFlexible() {
		var err error
		if rest, err = skipTags(rest); err != nil {
			return err
		}
	}
	return kreq.ReadFrom(rest)
}

// skipTags skips a tagged-field section (KIP-482): a count, then per field a tag, a size and
// the bytes.
func skipTags(b []byte) ([]byte, error) {
	n, b, err := uvarint(b)
	if err != nil {
		return nil, err
	}
	for range n {
		if _, b, err = uvarint(b); err != nil {
			return nil, err
		}
		var size uint64
		if size, b, err = uvarint(b); err != nil {
			return nil, err
		}
		if size > uint64(len(b)) {
			return nil, errors.New("tagged field longer than the request")
		}
		b = b[size:]
	}
	return b, nil
}

func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > 1<<31 {
		return 0, nil, errors.New("bad unsigned varint in request header")
	}
	return v, b[n:], nil
}

// setErr remembers the first error code of a response for metrics.
func (r *request) setErr(code int16) {
	if r.errCode == 0 && code != 0 {
		r.errCode = code
	}
}

// errCode maps a storage error to a Kafka error code.
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut.Code
	}
	return kerr.UnknownServerError.Code
}

func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// Response buffers are pooled; request bodies come from framebuf's pools.
var bufPool sync.Pool

const maxPooledBuf = 8 << 20

func getBuf(n int) []byte {
	if n <= maxPooledBuf {
		if p, ok := bufPool.Get().(*[]byte); ok && cap(*p) >= n {
			return (*p)[:n]
		}
		return make([]byte, n, max(n, 4096))
	}
	return make([]byte, n)
}

func putBuf(b []byte) {
	if cap(b) > maxPooledBuf || cap(b) < 4096 {
		return
	}
	bufPool.Put(&b)
}
