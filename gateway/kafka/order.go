package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requests of one connection run in parallel, except where the client may rely on the order it
// sent them in. The reader goroutine decides, as it dispatches each request, what the request
// waits for:
//
//   - a Produce waits, per partition, for the connection's earlier Produce to that partition
//     (orderProduce), so a pipelining idempotent producer's batches never overtake each other;
//   - a Fetch waits for the connection's earlier Produce to each partition it reads, so a client
//     that writes and then reads on one connection sees its write;
//   - a group request waits for the connection's earlier group request to finish, so the
//     coordinator sees them one at a time in the order sent (an OffsetCommit before a
//     LeaveGroup is applied before it).
//
// Waiting costs nothing in answer latency: answers are written in request order anyway.

// errConnClosing ends a request whose turn never came because the connection is going away.
var errConnClosing = errors.New("kafka: connection closing")

// order notes what req must wait for; it runs in the reader goroutine, in arrival order.
func (c *conn) order(req *request) {
	if req.kreq == nil {
		return
	}
	switch {
	case req.key == produceKey:
		c.orderProduce(req)
	case req.key == fetchKey:
		c.afterProduces(req)
	case isGroupKey(req.key):
		if c.groupTail != nil {
			req.after = append(req.after, c.groupTail)
		}
		req.done = make(chan struct{})
		c.groupTail = req.done
	}
}

// afterProduces makes a fetch wait for the produces in flight on this connection to the
// partitions it reads.
func (c *conn) afterProduces(req *request) {
	freq := req.kreq.(*kmsg.FetchRequest)
	c.produceMu.Lock()
	defer c.produceMu.Unlock()
	if len(c.produceOrder) == 0 {
		return
	}
	for _, t := range freq.Topics {
		for _, p := range t.Partitions {
			if ch := c.produceOrder[topicPartition{t.Topic, p.Partition}]; ch != nil {
				req.after = append(req.after, ch)
			}
		}
	}
}

// run answers req once its turn has come: the request hooks first (control.go), then the
// handler.
func (c *conn) run(req *request) (kmsg.Response, error) {
	defer c.finish(req)
	resp, err, handled := c.s.controls.intercept(c, req)
	for _, ch := range req.after {
		select {
		case <-ch:
		case <-req.ctx.Done():
			return nil, errConnClosing
		}
	}
	if handled {
		return resp, err
	}
	return c.handle(req)
}

// finish lets the requests ordered behind req go on. Produce tickets the handler did not use (a
// hook answered, or changed the partitions) are passed on once their predecessors are done, so
// the chain of writes to each partition stays unbroken.
func (c *conn) finish(req *request) {
	if req.done != nil {
		close(req.done)
	}
	for tp, t := range req.order {
		delete(req.order, tp)
		if t.before == nil {
			c.produceDone(tp, t)
			continue
		}
		go func() {
			select {
			case <-t.before:
			case <-c.ctx.Done():
			}
			c.produceDone(tp, t)
		}()
	}
}
