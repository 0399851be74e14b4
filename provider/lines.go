package provider

import "bytes"

// Lines splits a stream written in chunks into complete lines for Line
// (without the newline). A line longer than Max bytes is skipped, never
// buffered without limit. It is not safe for concurrent use: its owner
// serialises Write.
type Lines struct {
	Max  int
	Line func([]byte)

	buf      []byte
	skipping bool // inside an over-long line
}

// Write takes a chunk; it never fails.
func (l *Lines) Write(p []byte) (int, error) {
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.keep(rest)
			break
		}
		l.keep(rest[:i])
		if !l.skipping {
			l.Line(l.buf)
		}
		l.buf, l.skipping = l.buf[:0], false
		rest = rest[i+1:]
	}
	return len(p), nil
}

func (l *Lines) keep(b []byte) {
	if l.skipping || len(l.buf)+len(b) > l.Max {
		l.buf, l.skipping = l.buf[:0], true
		return
	}
	l.buf = append(l.buf, b...)
}
