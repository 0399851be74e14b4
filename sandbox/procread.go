package sandbox

import "golang.org/x/sys/unix"

// readProc reads a small /proc file into buf with plain syscalls: no
// os.File, no poller registration, no allocation. The watchdog reads a few
// files per process every 50 ms, so this matters (BenchmarkWatchdogSample).
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
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}
