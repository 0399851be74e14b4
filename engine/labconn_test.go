package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// notesRequest is a lab call any study answers.
const notesRequest = `{"call":"notes","args":"{}"}` + "\n"

// rawLab is a bare connection to c's lab socket, a line reader on it and
// a read deadline of ten seconds, so a test that hears nothing fails.
func rawLab(t *testing.T, c Campaign) (*net.UnixConn, *bufio.Reader) {
	t.Helper()
	conn, err := dialLab(c)
	if err != nil {
		t.Fatalf("dial the lab socket: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}

// ask sends one request line and reads the answer.
func ask(t *testing.T, conn *net.UnixConn, r *bufio.Reader, line string) labResponse {
	t.Helper()
	if _, err := conn.Write([]byte(line)); err != nil {
		t.Fatalf("send %q: %v", line, err)
	}
	return readAnswer(t, r)
}

func readAnswer(t *testing.T, r *bufio.Reader) labResponse {
	t.Helper()
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer from the lab socket: %v", err)
	}
	var resp labResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("malformed answer %q: %v", line, err)
	}
	return resp
}

// lowestFreeFD is the descriptor the next open would get.
func lowestFreeFD(t *testing.T) int {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return int(f.Fd())
}

// TestLabSocketAnswersAfterEMFILE runs the process out of descriptors for
// real (RLIMIT_NOFILE lowered so that a client's socket takes the last
// one): the supervisor's accept fails with EMFILE, backs off, and once
// descriptors are free again accepts and answers the waiting client. The
// accept loop used to return on the first failure and never answer again.
// Other goroutines of the test binary open and close descriptors too, so
// an attempt where one of them took the last descriptor first (the dial
// fails) or freed one (the accept succeeds) is tried again.
// (Setrlimit also turns off Go's restore of the original soft limit for
// the test's later children; the limit itself is restored.)
func TestLabSocketAnswersAfterEMFILE(t *testing.T) {
	c, s := newTestStudy(t, nil)
	retried := make(chan error, 64)
	serveTestLabLimits(t, c, s, labLimits{retried: func(err error) {
		select {
		case retried <- err:
		default:
		}
	}})
	addr, err := labAddr(c)
	if err != nil {
		t.Fatal(err)
	}
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
			t.Fatalf("restore RLIMIT_NOFILE: %v", err)
		}
	}
	defer restore()
	for attempt := 1; attempt <= 20; attempt++ {
		conn, why := dialWithTheLastDescriptor(t, addr, orig, retried, restore)
		if conn == nil {
			t.Logf("attempt %d: %s; again", attempt, why)
			continue
		}
		defer conn.Close()
		if resp := readAnswer(t, bufio.NewReader(conn)); !resp.OK {
			t.Fatalf("answer after EMFILE: %+v", resp)
		}
		conn2, r2 := rawLab(t, c)
		if resp := ask(t, conn2, r2, notesRequest); !resp.OK {
			t.Fatalf("a new connection after EMFILE: %+v", resp)
		}
		return
	}
	t.Fatal("in 20 attempts the accept never failed with the descriptors used up")
}

// dialWithTheLastDescriptor lowers RLIMIT_NOFILE so that a new socket
// takes the last descriptor, dials addr with it, sends a request and waits
// for the supervisor's accept to fail with EMFILE; the limit is restored
// before it returns. It returns the connection (its answer still to be
// read), or nil and why this attempt did not exhaust the descriptors.
func dialWithTheLastDescriptor(t *testing.T, addr *net.UnixAddr, orig syscall.Rlimit, retried <-chan error, restore func()) (*net.UnixConn, string) {
	t.Helper()
	low := orig
	low.Cur = uint64(lowestFreeFD(t) + 1)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatalf("lower RLIMIT_NOFILE: %v", err)
	}
	conn, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		restore()
		if errors.Is(err, syscall.EMFILE) {
			return nil, "another goroutine took the last descriptor before the dial"
		}
		t.Fatalf("dial with one descriptor left: %v", err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(notesRequest)); err != nil {
		restore()
		t.Fatalf("send: %v", err)
	}
	select {
	case err := <-retried:
		restore()
		if !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("accept failed with %v; want EMFILE", err)
		}
		return conn, ""
	case <-time.After(3 * time.Second):
		restore()
		_ = conn.Close()
		return nil, "the accept did not fail (a descriptor was freed meanwhile)"
	}
}

// TestLabSocketRefusesOverItsCap: with its connections open, the socket
// answers one more with a busy line and closes it, while those it holds
// are still answered; over the cap a lab call fails with that line and a
// pause falls back to the store (here: no supervisor holds the lock, so
// it applies at once).
func TestLabSocketRefusesOverItsCap(t *testing.T) {
	cases := []struct {
		name  string
		extra func(t *testing.T, c Campaign) string // the over-cap client; what it got
		want  string
	}{
		{"raw", func(t *testing.T, c Campaign) string {
			conn, r := rawLab(t, c)
			resp := readAnswer(t, r) // refused before it sends anything
			_ = conn.Close()
			if !resp.Busy {
				return "not busy: " + resp.Error
			}
			return resp.Error
		}, "has its 2 connections open"},
		{"lab call", func(t *testing.T, c Campaign) string {
			lab, err := OpenLab(context.Background(), c, 2, 8192)
			if err != nil {
				return err.Error()
			}
			defer lab.Close()
			_, err = lab.Call(context.Background(), "notes", []byte(`{}`))
			return errString(err)
		}, "lab notes: no answer from the supervisor: the supervisor's lab socket has its 2 connections open"},
		{"pause", func(t *testing.T, c Campaign) string {
			got, err := RequestControl(context.Background(), c, Pause)
			return string(got) + " " + errString(err)
		}, "paused <nil>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			serveTestLabLimits(t, c, s, labLimits{conns: 2})
			held := make([]*net.UnixConn, 2)
			readers := make([]*bufio.Reader, 2)
			for i := range held {
				held[i], readers[i] = rawLab(t, c)
				if resp := ask(t, held[i], readers[i], notesRequest); !resp.OK {
					t.Fatalf("connection %d under the cap: %+v", i, resp)
				}
			}
			if got := tc.extra(t, c); !strings.Contains(got, tc.want) {
				t.Errorf("over the cap: %q; want %q", got, tc.want)
			}
			for i := range held {
				if resp := ask(t, held[i], readers[i], notesRequest); !resp.OK {
					t.Errorf("connection %d after the refusal: %+v", i, resp)
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestLabSocketClosesIdleConnections: a connection that sends no complete
// request within the idle bound is closed, whether silent from the start,
// silent after an answer, or sending a byte at a time (a slow loris,
// which a per-read deadline would keep forever), with a short line or a
// long one.
func TestLabSocketClosesIdleConnections(t *testing.T) {
	cases := []struct {
		name  string
		first string // a request answered before the idleness
		drip  string // sent a byte at a time, never ending its line
	}{
		{"silent", "", ""},
		{"silent after an answer", notesRequest, ""},
		{"slow loris", "", `{"call":"notes","args":"` + strings.Repeat("x", 1000)},
		{"slow loris after a long line", `{"call":"notes","args":"` + strings.Repeat("x", 3*labLineBuf) + `"}` + "\n", `{"call":"notes"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			serveTestLabLimits(t, c, s, labLimits{idle: 300 * time.Millisecond})
			conn, r := rawLab(t, c)
			if tc.first != "" {
				if resp := ask(t, conn, r, tc.first); resp.Error == "malformed lab request" {
					t.Fatalf("first request: %+v", resp)
				}
			}
			done := make(chan struct{})
			defer close(done)
			go drip(conn, tc.drip, done)
			_, err := r.ReadByte()
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("idle connection: read %v; want it closed (EOF)", err)
			}
		})
	}
}

// drip writes text one byte every 20 ms until done.
func drip(conn *net.UnixConn, text string, done <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < len(text); i++ {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{text[i]}); err != nil {
			return
		}
	}
}

// TestRequestControlDoesNotWaitOnADeafSocket: a lab socket that accepts a
// pause and never answers, or never accepts (the accept loop of a
// supervisor out of descriptors used to end so), does not hold the
// request: it gives up after controlAnswerWait and records the request as
// when no supervisor answers.
func TestRequestControlDoesNotWaitOnADeafSocket(t *testing.T) {
	cases := []struct {
		name   string
		accept bool
	}{
		{"accepts and never answers", true},
		{"never accepts", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			ln := listenLab(c)
			if ln == nil {
				t.Skip("no abstract unix sockets here")
			}
			defer ln.Close()
			if tc.accept {
				go holdConnections(ln)
			}
			type result struct {
				status Status
				err    error
			}
			got := make(chan result, 1)
			start := time.Now()
			go func() { st, err := RequestControl(context.Background(), c, Pause); got <- result{st, err} }()
			select {
			case r := <-got:
				t.Logf("RequestControl returned after %v", time.Since(start).Round(time.Millisecond))
				if r.err != nil || r.status != StatusPaused {
					t.Fatalf("RequestControl(pause) = %q, %v; want %q", r.status, r.err, StatusPaused)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("RequestControl still waits on the socket after 20 s")
			}
			var p StudyStatePayload
			if ev := lastEvent(t, s); json.Unmarshal(ev.Payload, &p) != nil || p.Status != StatusPaused {
				t.Fatalf("last event %s %s; want study_state paused", ev.Type, ev.Payload)
			}
		})
	}
}

// holdConnections accepts on ln and keeps every connection open, unread,
// until ln is closed.
func holdConnections(ln *net.UnixListener) {
	var held []*net.UnixConn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		held = append(held, conn)
	}
}

// TestLabSocketLongLines: a line over maxLabLine is answered with why and
// the connection closed; with one long-line turn, a long line waits for
// the one holding it and both are answered.
func TestLabSocketLongLines(t *testing.T) {
	long := func(n int) string { return `{"call":"notes","args":"` + strings.Repeat("x", n) }
	t.Run("too long", func(t *testing.T) {
		c, s := newTestStudy(t, nil)
		serveTestLab(t, c, s)
		conn, r := rawLab(t, c)
		go func() { _, _ = conn.Write([]byte(long(maxLabLine + 2*labLineBuf))) }()
		if resp := readAnswer(t, r); !strings.Contains(resp.Error, "lab request longer than") {
			t.Fatalf("a line over maxLabLine: %+v; want it refused as too long", resp)
		}
	})
	t.Run("turns", func(t *testing.T) {
		c, s := newTestStudy(t, nil)
		serveTestLabLimits(t, c, s, labLimits{bigLines: 1})
		a, ra := rawLab(t, c)
		b, rb := rawLab(t, c)
		if _, err := a.Write([]byte(long(2 * labLineBuf))); err != nil { // holds the turn, unfinished
			t.Fatal(err)
		}
		go func() { _, _ = b.Write([]byte(long(2*labLineBuf) + `"}` + "\n")) }() // waits for the turn
		if resp := ask(t, a, ra, `"}`+"\n"+notesRequest); resp.Error == "" {
			t.Fatalf("first long line: %+v; want the notes call's refusal of its arguments", resp)
		}
		if resp := readAnswer(t, ra); !resp.OK {
			t.Fatalf("the request after it: %+v", resp)
		}
		if resp := readAnswer(t, rb); resp.Error == "" {
			t.Fatalf("second long line: %+v", resp)
		}
	})
}

// TestLabClientDialsAgainWhenIdle: a client (an MCP server between its
// agent's calls) whose connection the supervisor closed for idleness
// dials again once its own idle time has passed, and its next call is
// answered; one that kept the closed connection fails that call, and
// dials again for the next.
func TestLabClientDialsAgainWhenIdle(t *testing.T) {
	cases := []struct {
		name   string
		idle   time.Duration // how long the client has been idle, as it sees it
		wantOK bool
	}{
		{"idle past labRedialAfter", labRedialAfter, true},
		{"kept the closed connection", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, s := newTestStudy(t, nil)
			serveTestLabLimits(t, c, s, labLimits{idle: 200 * time.Millisecond})
			ctx := context.Background()
			lab, err := OpenLab(ctx, c, 2, 8192)
			if err != nil || !lab.Remote() {
				t.Fatalf("OpenLab: remote=%v err=%v", lab != nil && lab.Remote(), err)
			}
			defer lab.Close()
			if _, err := lab.Call(ctx, "notes", []byte(`{}`)); err != nil {
				t.Fatalf("first call: %v", err)
			}
			old := lab.remote.conn
			_ = old.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := old.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Fatalf("the supervisor did not close the idle connection: %v", err)
			}
			lab.remote.used = time.Now().Add(-tc.idle)
			_, err = lab.Call(ctx, "notes", []byte(`{}`))
			if (err == nil) != tc.wantOK || (err != nil && !errors.Is(err, errNoAnswer)) {
				t.Fatalf("call after the supervisor closed the connection: %v; want ok=%v", err, tc.wantOK)
			}
			if _, err := lab.Call(ctx, "notes", []byte(`{}`)); err != nil {
				t.Fatalf("the call after that (a new connection): %v", err)
			}
		})
	}
}
