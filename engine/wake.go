package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"time"
)

// The lab CLI runs in the agent's process, not the supervisor's. After it
// records new work it sends one datagram to the supervisor's abstract unix
// socket, so the executor starts the experiment at once instead of at its
// next poll. Losing a wake-up only delays work to the next poll.

func wakeAddr(c Campaign) *net.UnixAddr {
	sum := sha256.Sum256([]byte(c.Dir))
	return &net.UnixAddr{Name: "@simjecture-" + hex.EncodeToString(sum[:12]), Net: "unixgram"}
}

// listenWake opens the campaign's wake-up socket; nil when it cannot (the
// executor then relies on polling).
func listenWake(c Campaign) *net.UnixConn {
	conn, err := net.ListenUnixgram("unixgram", wakeAddr(c))
	if err != nil {
		return nil
	}
	return conn
}

// Wake tells the campaign's supervisor, if any, that new work was recorded.
func Wake(c Campaign) {
	conn, err := net.DialUnix("unixgram", nil, wakeAddr(c))
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	_, _ = conn.Write([]byte{1})
}

// pumpWake forwards datagrams to the bus until the socket is closed.
func pumpWake(conn *net.UnixConn, notify func()) {
	buf := make([]byte, 16)
	for {
		if _, _, err := conn.ReadFromUnix(buf); err != nil {
			return
		}
		notify()
	}
}
