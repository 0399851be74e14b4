package provider

import (
	"bytes"
	"sync"
)

// Lines splits a stream written in chunks into complete lines for its
// line function (without the newline), holding its owner's lock while it
// does. A line longer than max bytes is skipped, never buffered without
// limit.
type Lines struct {
	max  int
	mu   sync.Locker
	line func([]byte)

	buf      []byte
	skipping bool // inside an over-long line
}

// NewLines splits into lines of at most max bytes for line, under mu.
func NewLines(max int, mu sync.Locker, line func([]byte)) *Lines {
	return &Lines{max: max, mu: mu, line: line}
}

// Write takes a chunk; it never fails.
func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.keep(rest)
			break
		}
		l.keep(rest[:i])
		if !l.skipping {
			l.line(l.buf)
		}
		l.buf, l.skipping = l.buf[:0], false
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (l *Lines) keep(b []byte) {
	if l.skipping || len(l.buf)+len(b) > l.max {
		l.buf, l.skipping = l.buf[:0], true
		return
	}
	l.buf = append(l.buf, b...)
}
