package machine

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Protocol is the wire protocol's version, checked at connect.
const Protocol = "simjecture-worker/1"

// Limits of one frame.
const (
	maxHeader = 1 << 20 // a header's JSON
	chunkSize = 1 << 20 // file data per frame
)

// ErrProtocol is a malformed frame or an unexpected reply: transport
// uncertainty, never an experiment's failure.
var ErrProtocol = errors.New("worker protocol error")

// frame is one message: a JSON header, then Data raw bytes.
type frame struct {
	Seq   uint64          `json:"seq"`             // the request; a reply carries the same
	Op    string          `json:"op"`              // the request's operation, or "reply"
	Body  json.RawMessage `json:"body,omitempty"`  // the operation's arguments or result
	Error string          `json:"error,omitempty"` // a refusal (semantic error) in a reply
	Final bool            `json:"final,omitempty"` // the last frame of a stream
	Data  []byte          `json:"-"`               // raw bytes after the header
	Size  int             `json:"size,omitempty"`  // len(Data) on the wire
}

// frameWriter writes frames; it is safe for concurrent use.
type frameWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

// write sends f; flush sends what is buffered (false while a stream goes on).
func (fw *frameWriter) write(f frame, flush bool) error {
	f.Size = len(f.Data)
	h, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(h)))
	if _, err := fw.w.Write(n[:]); err != nil {
		return fmt.Errorf("send frame: %w", err)
	}
	if _, err := fw.w.Write(h); err != nil {
		return fmt.Errorf("send frame: %w", err)
	}
	if _, err := fw.w.Write(f.Data); err != nil {
		return fmt.Errorf("send frame: %w", err)
	}
	if flush {
		if err := fw.w.Flush(); err != nil {
			return fmt.Errorf("send frame: %w", err)
		}
	}
	return nil
}

// readFrame reads one frame from r.
func readFrame(r io.Reader) (frame, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return frame{}, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size == 0 || size > maxHeader {
		return frame{}, fmt.Errorf("%w: header of %d bytes", ErrProtocol, size)
	}
	h := make([]byte, size)
	if _, err := io.ReadFull(r, h); err != nil {
		return frame{}, fmt.Errorf("%w: short header: %w", ErrProtocol, err)
	}
	var f frame
	if err := json.Unmarshal(h, &f); err != nil {
		return frame{}, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if f.Size < 0 || f.Size > chunkSize {
		return frame{}, fmt.Errorf("%w: data of %d bytes", ErrProtocol, f.Size)
	}
	if f.Size > 0 {
		f.Data = make([]byte, f.Size)
		if _, err := io.ReadFull(r, f.Data); err != nil {
			return frame{}, fmt.Errorf("%w: short data: %w", ErrProtocol, err)
		}
	}
	return f, nil
}

// body marshals v for a frame.
func body(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("machine: encode %T: %v", v, err)) // only our own plain structs are sent
	}
	return b
}
