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

// fields calls fn with each space-separated field of b, without allocating;
// fn returns false to stop.
func fields(b []byte, fn func(i int, f []byte) bool) {
	i, start := 0, -1
	for j := 0; j <= len(b); j++ {
		space := j == len(b) || b[j] == ' ' || b[j] == '\n' || b[j] == '\t'
		switch {
		case !space && start < 0:
			start = j
		case space && start >= 0:
			if !fn(i, b[start:j]) {
				return
			}
			i, start = i+1, -1
		}
	}
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
