package engine

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkLabSocketFlood is the audit's scenario against the supervisor's
// lab socket: 300 connections at once, each sending one request line just
// under maxLabLine, and one more sending a byte a second; it reports this
// process's peak RSS (VmHWM), its RSS while they are held, right after
// they close, and after the collector returns what it can to the system
// (debug.FreeOSMemory), and how many were answered or refused. Run it
// alone (-run '^$' -bench LabSocketFlood -benchtime 1x): the peak is the
// process's.
func BenchmarkLabSocketFlood(b *testing.B) {
	c, s := newTestStudy(b, nil)
	serveTestLab(b, c, s)
	addr, err := labAddr(c)
	if err != nil {
		b.Fatal(err)
	}
	line := floodLine()
	before := procStatusKB(b, "VmRSS")
	for b.Loop() {
		stopDrip := slowLoris(b, addr)
		conns, answered := flood(b, addr, line, 300)
		held := procStatusKB(b, "VmRSS")
		for _, conn := range conns {
			_ = conn.Close()
		}
		stopDrip()
		after := procStatusKB(b, "VmRSS")
		debug.FreeOSMemory()
		b.ReportMetric(float64(before)/1024, "rss-before-MB")
		b.ReportMetric(float64(procStatusKB(b, "VmHWM"))/1024, "peak-rss-MB")
		b.ReportMetric(float64(held)/1024, "rss-held-MB")
		b.ReportMetric(float64(after)/1024, "rss-after-close-MB")
		b.ReportMetric(float64(procStatusKB(b, "VmRSS"))/1024, "rss-after-free-MB")
		b.ReportMetric(float64(answered), "answered")
		b.ReportMetric(float64(len(conns)-answered), "refused")
	}
}

// floodLine is a lab request line of maxLabLine-1 bytes with its "\n".
func floodLine() []byte {
	head, tail := `{"call":"notes","args":"`, `"}`
	return []byte(head + strings.Repeat("x", maxLabLine-2-len(head)-len(tail)) + tail + "\n")
}

// flood opens n connections to addr at once, each sending line and
// reading its answer (an error line is an answer; a refusal or a closed
// connection is not), and returns them open with how many were answered.
func flood(b *testing.B, addr *net.UnixAddr, line []byte, n int) ([]*net.UnixConn, int) {
	conns := make([]*net.UnixConn, n)
	ok := make([]bool, n)
	var wg sync.WaitGroup
	for i := range conns {
		conn, err := net.DialUnix("unix", nil, addr)
		if err != nil {
			b.Fatalf("dial %d: %v", i, err)
		}
		conns[i] = conn
		wg.Go(func() {
			_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
			if _, err := conn.Write(line); err != nil {
				return
			}
			answer, err := bufio.NewReaderSize(conn, 4096).ReadBytes('\n')
			ok[i] = err == nil && !bytes.Contains(answer, []byte(`"busy":true`))
		})
	}
	wg.Wait()
	answered := 0
	for _, a := range ok {
		if a {
			answered++
		}
	}
	return conns, answered
}

// slowLoris sends a request a byte a second until stopped.
func slowLoris(b *testing.B, addr *net.UnixAddr) (stop func()) {
	conn, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if _, err := conn.Write([]byte("{")); err != nil {
				return
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() { close(done); _ = conn.Close(); wg.Wait() }
}

// procStatusKB is a "kB" field of /proc/self/status.
func procStatusKB(b *testing.B, field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for l := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
