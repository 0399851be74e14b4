package e2e

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPauseWithTheLabSocketFull fills a running supervisor's lab socket
// with idle connections, more than its cap of 64 (an audit's client held
// thousands, and `simjecture pause` then waited on the socket for good):
// those over the cap are refused with a busy line, and `pause` still
// stops the study promptly (it records the request in the store when the
// socket refuses it).
func TestPauseWithTheLabSocketFull(t *testing.T) {
	t.Parallel()
	c := newCampaign(t, "busy", "e2e-seconds: 30")
	reapMarker(t, c.marker)
	sup := start(t, c.args(300, 120)...)
	waitRunning(t, c, sup, "")
	name, err := os.ReadFile(filepath.Join(c.dir, "supervisor", "lab-socket"))
	if err != nil {
		t.Fatalf("the supervisor published no lab socket: %v", err)
	}
	addr := &net.UnixAddr{Name: strings.TrimSpace(string(name)), Net: "unix"}
	busy := 0
	for i := range 100 {
		conn, err := net.DialUnix("unix", nil, addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer conn.Close()
		if i >= 64 { // past the cap whatever the agent holds: refused at once
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil || !strings.Contains(line, `"busy":true`) {
				t.Fatalf("connection %d over the cap: %q, %v; want a busy line", i, line, err)
			}
			busy++
		}
	}
	t.Logf("%d connections over the cap refused", busy)
	stopPromptly(t, c, sup, "pause", "pause with the lab socket full")
	if snap := status(t, c.dir); snap.Status != "paused" {
		t.Errorf("status after pause = %q, want paused", snap.Status)
	}
}
