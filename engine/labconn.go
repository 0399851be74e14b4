package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"
)

// The lab socket's bounds. A supervisor serves one agent at a time (a
// worker turn or a review), whose `lab` processes and MCP server hold a few
// connections at once, each carrying lines of a few kilobytes; the bounds
// keep a misbehaving agent (or any process of our account) from taking the
// supervisor's descriptors or memory, and none is near what a real agent
// uses (docs/security.md, "The lab socket's bounds").
type labLimits struct {
	conns    int           // open lab connections; one more is refused with labBusy and closed
	bigLines int           // connections that may hold a line longer than labLineBuf at once; the others wait for a turn
	idle     time.Duration // a request (or the answer's write) must complete within this, and a connection idle this long is closed
	retried  func(error)   // told of each temporary accept failure before its backoff (tests); may be nil
}

// defaultLabLimits are the supervisor's bounds.
var defaultLabLimits = labLimits{conns: 64, bigLines: 4, idle: 60 * time.Second}

// labLineBuf is what each connection reads into; a longer line is
// gathered in a buffer of its own that grows with what was sent, up to
// maxLabLine, and is dropped once answered.
const labLineBuf = 64 << 10

// labRedialAfter is how long a client keeps an idle connection: it dials
// again before the supervisor's idle bound can have closed it (an MCP
// server waits minutes between its agent's calls).
const labRedialAfter = 30 * time.Second

// Accept backoff after a temporary failure (out of descriptors, say), as
// net/http's server does: 5 ms, doubling, at most 1 s.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// orDefault is l with every unset bound taken from defaultLabLimits.
func (l labLimits) orDefault() labLimits {
	d := defaultLabLimits
	if l.conns > 0 {
		d.conns = l.conns
	}
	if l.bigLines > 0 {
		d.bigLines = l.bigLines
	}
	if l.idle > 0 {
		d.idle = l.idle
	}
	d.retried = l.retried
	return d
}

// temporaryAccept reports whether an accept failed for a reason that
// passes (descriptors, buffers or memory short, a connection aborted
// before it was taken, a signal): the listener is still good.
func temporaryAccept(err error) bool {
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.EINTR} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// acceptBackoff is the wait before the next accept after a temporary
// failure; zero after a success.
type acceptBackoff time.Duration

// next is the next backoff step.
func (b *acceptBackoff) next() time.Duration {
	d := min(max(2*time.Duration(*b), acceptBackoffMin), acceptBackoffMax)
	*b = acceptBackoff(d)
	return d
}

// waitFor sleeps d, or until ctx ends (false).
func waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// refuseBusy answers a connection over the cap with one error line and
// closes it: refused at once rather than left waiting, so its client (an
// operator's pause among them) hears it and falls back, and the
// supervisor keeps its descriptors for its own work.
func refuseBusy(conn *net.UnixConn, limit int) {
	defer conn.Close()
	_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
	body, _ := json.Marshal(labResponse{Busy: true, Error: fmt.Sprintf("the supervisor's lab socket has its %d connections open; try again", limit)})
	_, _ = conn.Write(append(body, '\n'))
}

// errLabLineTooLong is a request line longer than maxLabLine.
var errLabLineTooLong = fmt.Errorf("lab request longer than %d bytes", maxLabLine)

// labLineReader reads a connection's request lines: into its labLineBuf,
// and a longer line, once it holds one of the supervisor's big-line
// turns, into a buffer that grows with it.
type labLineReader struct {
	r    *bufio.Reader
	big  chan struct{} // the supervisor's big-line turns
	held bool
	buf  []byte
}

func newLabLineReader(conn net.Conn, big chan struct{}) *labLineReader {
	return &labLineReader{r: bufio.NewReaderSize(conn, labLineBuf), big: big}
}

// next is the next line, without its end of line; the connection's read
// deadline bounds it, and the wait for a big-line turn ends by deadline.
func (l *labLineReader) next(ctx context.Context, deadline time.Time) ([]byte, error) {
	l.release()
	line, err := l.r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return endLine(line, err)
	}
	if err := l.acquire(ctx, deadline); err != nil {
		return nil, err
	}
	l.buf = append(l.buf, line...)
	for {
		line, err = l.r.ReadSlice('\n')
		if len(l.buf)+len(line) > maxLabLine+2 {
			return nil, errLabLineTooLong
		}
		l.buf = append(l.buf, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return endLine(l.buf, err)
		}
	}
}

// endLine is line without its "\n" or "\r\n"; a last line without one is
// a line too (as bufio.ScanLines has it); any other failure is err.
func endLine(line []byte, err error) ([]byte, error) {
	if err != nil && (!errors.Is(err, io.EOF) || len(line) == 0) {
		return nil, err
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// acquire takes a big-line turn, waiting until ctx ends or deadline.
func (l *labLineReader) acquire(ctx context.Context, deadline time.Time) error {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case l.big <- struct{}{}:
		l.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("lab request: no turn for a long line: %w", errLabIdle)
	}
}

// release drops the long line's buffer and gives its turn back.
func (l *labLineReader) release() {
	l.buf = nil
	if l.held {
		l.held = false
		<-l.big
	}
}

// errLabIdle is a connection that sent no complete request in time.
var errLabIdle = errors.New("lab connection idle")
