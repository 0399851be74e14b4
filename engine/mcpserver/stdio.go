package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainGrace bounds how long the end of the client's input waits for the
// replies still owed (a request the SDK never answers must not keep the
// server alive).
const drainGrace = time.Minute

// Stdio is the server's transport over in and out (stdin and stdout):
// newline-delimited JSON-RPC, as mcp.StdioTransport, except that the end of
// in ends the session only once every request read before it has had its
// reply written to out. The SDK's connection, told of the end at once,
// would cancel the requests still in flight and exit without answering
// them: a client that writes its requests and closes its end in one go
// would get nothing back.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	d := newOwed()
	return &mcp.IOTransport{Reader: &drainReader{d: d, r: in}, Writer: &answerWriter{d: d, w: out}}
}

// owed counts the requests read whose replies are not written yet.
type owed struct {
	mu        sync.Mutex
	ids       map[jsonrpc.ID]int
	in, out   lines
	answered  chan struct{} // a reply was written (buffered 1)
	closed    chan struct{} // the transport was closed
	closeOnce sync.Once
}

func newOwed() *owed {
	return &owed{ids: map[jsonrpc.ID]int{}, answered: make(chan struct{}, 1), closed: make(chan struct{})}
}

// count adds the calls among msgs (requests with an id) when read, and
// removes the replies among them when written.
func (d *owed) count(msgs []jsonrpc.Message, read bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range msgs {
		switch m := m.(type) {
		case *jsonrpc.Request:
			if read && m.ID.IsValid() {
				d.ids[m.ID]++
			}
		case *jsonrpc.Response:
			if !read && d.ids[m.ID] > 0 {
				if d.ids[m.ID]--; d.ids[m.ID] == 0 {
					delete(d.ids, m.ID)
				}
			}
		}
	}
	if !read {
		select {
		case d.answered <- struct{}{}:
		default:
		}
	}
}

func (d *owed) settled() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.ids) == 0
}

// wait returns once nothing is owed, the transport is closed or the grace
// has passed.
func (d *owed) wait() {
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	for !d.settled() {
		select {
		case <-d.answered:
		case <-d.closed:
			return
		case <-grace.C:
			return
		}
	}
}

// drainReader is the client's input; at its end it waits for the replies
// owed before it reports io.EOF.
type drainReader struct {
	d *owed
	r io.Reader
}

func (r *drainReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.d.count(r.d.in.feed(p[:n]), true)
	if !errors.Is(err, io.EOF) {
		return n, err
	}
	r.d.count(r.d.in.flush(), true) // a last message without its newline
	if n > 0 {
		return n, nil // the next Read reports the end
	}
	r.d.wait()
	return 0, io.EOF
}

// Close ends a wait and closes the input when it can be closed (stdin).
func (r *drainReader) Close() error {
	r.d.closeOnce.Do(func() { close(r.d.closed) })
	if c, ok := r.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// answerWriter is the server's output; it counts the replies written.
type answerWriter struct {
	d *owed
	w io.Writer
}

func (w *answerWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.d.count(w.d.out.feed(p[:n]), false)
	return n, err
}

// Close leaves the output open (stdout outlives the session).
func (w *answerWriter) Close() error { return nil }

// lines splits a stream into newline-delimited JSON-RPC messages.
type lines struct {
	mu  sync.Mutex
	buf []byte
}

// feed adds p and returns the messages of the lines it completed.
func (l *lines) feed(p []byte) []jsonrpc.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	var msgs []jsonrpc.Message
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 && len(l.buf) > mcp.DefaultMaxLineLength {
			l.buf = nil // a frame the SDK refuses too
		}
		if i < 0 {
			return msgs
		}
		msgs = append(msgs, decodeLine(l.buf[:i])...)
		l.buf = l.buf[i+1:]
	}
}

// flush returns the messages of an unterminated last line.
func (l *lines) flush() []jsonrpc.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	msgs := decodeLine(l.buf)
	l.buf = nil
	return msgs
}

// decodeLine decodes one line: a message or a batch of them. What does not
// decode is left to the SDK to refuse.
func decodeLine(line []byte) []jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	raws := []json.RawMessage{line}
	if line[0] == '[' && json.Unmarshal(line, &raws) != nil {
		return nil
	}
	var msgs []jsonrpc.Message
	for _, raw := range raws {
		if m, err := jsonrpc.DecodeMessage(raw); err == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}
