package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	w := &answerWriter{d: d, w: out}
	return &mcp.IOTransport{Reader: &drainReader{d: d, r: in, w: w}, Writer: w}
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

// drainReader is the client's input, handed to the SDK a line at a time:
// a line that is not a JSON-RPC message (or batch of them) is answered
// here with a JSON-RPC error (-32700 parse error, -32600 invalid request;
// id null) and never reaches the SDK, whose connection would end on it
// and leave the requests read before it unanswered. At the end of the
// input it waits for the replies owed before it reports io.EOF.
type drainReader struct {
	d    *owed
	r    io.Reader
	w    *answerWriter // where the refusals of bad lines go
	pass []byte        // accepted lines not yet read by the SDK
	eof  bool
}

func (r *drainReader) Read(p []byte) (int, error) {
	for len(r.pass) == 0 {
		if r.eof {
			r.d.wait()
			return 0, io.EOF
		}
		n, err := r.r.Read(p)
		if err := r.take(r.d.in.split(p[:n])); err != nil {
			return 0, err
		}
		switch {
		case errors.Is(err, io.EOF):
			r.eof = true
			if err := r.take(r.d.in.rest()); err != nil { // a last message without its newline
				return 0, err
			}
		case err != nil:
			return 0, err
		}
	}
	n := copy(p, r.pass)
	r.pass = r.pass[n:]
	return n, nil
}

// take passes the lines that hold messages on to the SDK, counting the
// calls among them, and answers the others.
func (r *drainReader) take(lines [][]byte) error {
	for _, line := range lines {
		msgs, refusal := decodeLine(line)
		if refusal != nil {
			if err := r.w.refuse(refusal); err != nil {
				return err
			}
			continue
		}
		if len(msgs) > 0 {
			r.d.count(msgs, true)
			r.pass = append(append(r.pass, line...), '\n')
		}
	}
	return nil
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
// Each write is one whole line (the SDK writes a message and its newline
// at once), so the reader's refusals never split a reply.
type answerWriter struct {
	d  *owed
	mu sync.Mutex
	w  io.Writer
}

func (w *answerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(p)
	w.d.count(w.d.out.feed(p[:n]), false)
	return n, err
}

// refuse writes the JSON-RPC error reply to a line that is no message.
func (w *answerWriter) refuse(e *jsonrpc.Error) error {
	b, err := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, e})
	if err != nil {
		return fmt.Errorf("encode a refusal: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write a refusal: %w", err)
	}
	return nil
}

// Close leaves the output open (stdout outlives the session).
func (w *answerWriter) Close() error { return nil }

// lines splits a stream into newline-delimited JSON-RPC messages.
type lines struct {
	mu   sync.Mutex
	buf  []byte
	long bool // dropping the rest of a line over the SDK's bound
}

// feed adds p and returns the messages of the lines it completed.
func (l *lines) feed(p []byte) []jsonrpc.Message {
	var msgs []jsonrpc.Message
	for _, line := range l.split(p) {
		m, _ := decodeLine(line)
		msgs = append(msgs, m...)
	}
	return msgs
}

// split adds p and returns the lines it completed, without their
// newlines. A line longer than mcp.DefaultMaxLineLength is returned as
// one over-long placeholder line (which decodes to a refusal) and the
// rest of it dropped.
func (l *lines) split(p []byte) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	var out [][]byte
	for {
		i := bytes.IndexByte(l.buf, '\n')
		switch {
		case i < 0 && len(l.buf) > mcp.DefaultMaxLineLength:
			if !l.long {
				out = append(out, tooLong)
			}
			l.buf, l.long = nil, true
			return out
		case i < 0:
			return out
		case l.long:
			l.long = false
		default:
			out = append(out, bytes.Clone(l.buf[:i]))
		}
		l.buf = l.buf[i+1:]
	}
}

// rest returns an unterminated last line.
func (l *lines) rest() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, long := l.buf, l.long
	l.buf, l.long = nil, false
	if long || len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	return [][]byte{line}
}

// tooLong stands for a line over the SDK's bound.
var tooLong = []byte("\x00too long")

// decodeLine decodes one line: a message or a batch of them, or the
// refusal of a line that is neither. A blank line is nothing.
func decodeLine(line []byte) ([]jsonrpc.Message, *jsonrpc.Error) {
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return nil, nil
	case bytes.Equal(line, tooLong):
		return nil, refusal(jsonrpc.CodeParseError, "parse error: the line is longer than %d bytes", mcp.DefaultMaxLineLength)
	case !json.Valid(line):
		return nil, refusal(jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	raws := []json.RawMessage{line}
	if line[0] == '[' {
		if json.Unmarshal(line, &raws) != nil || len(raws) == 0 {
			return nil, refusal(jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC batch")
		}
	}
	var msgs []jsonrpc.Message
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, refusal(jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message")
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func refusal(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
