package sandbox

import "golang.org/x/sys/unix"

// readProc reads a small /proc file into buf with plain syscalls: no
// os.File, no poller registration, no allocation. The watchdog reads a few
// files per process every 50 ms, so this matters (BenchmarkWatchdogSample).
// A short read ends it: /proc files of one page are produced whole by the
// first read, so reading on to EOF would cost one more syscall per file.
func readProc(path string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		n += m
		if m == 0 || n < len(buf) {
			break
		}
	}
	return buf[:n], nil
}

// fieldScanner yields the space-separated fields of b without allocating
// (the watchdog's hot path: no closure escapes to the heap).
type fieldScanner struct {
	b   []byte
	pos int
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' }

func (s *fieldScanner) next() ([]byte, bool) {
	for s.pos < len(s.b) && isSpace(s.b[s.pos]) {
		s.pos++
	}
	start := s.pos
	for s.pos < len(s.b) && !isSpace(s.b[s.pos]) {
		s.pos++
	}
	return s.b[start:s.pos], s.pos > start
}

// atoi parses a decimal number without allocating; -1 when f is not one.
func atoi(f []byte) int64 {
	if len(f) == 0 {
		return -1
	}
	var n int64
	for _, c := range f {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
