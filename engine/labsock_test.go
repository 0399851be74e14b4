package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/simjecture/simjecture/store"
)

// serveTestLab serves c's lab socket as a supervisor would until the test
// (or stop) ends it.
func serveTestLab(t testing.TB, c Campaign, s *store.Store) (stop func()) {
	t.Helper()
	return serveTestLabLimits(t, c, s, labLimits{})
}

// serveTestLabLimits is serveTestLab with the socket's bounds lim.
func serveTestLabLimits(t testing.TB, c Campaign, s *store.Store, lim labLimits) (stop func()) {
	t.Helper()
	ln := listenLab(c)
	if ln == nil {
		t.Fatal("lab socket: cannot listen")
	}
	sv := &Supervisor{c: c, s: s, Bus: NewBus(), log: newSupervisorLog(c), opt: Options{MemMB: 8192}, sockLimits: lim}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { sv.serveLab(ctx, ln) })
	stop = sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return stop
}

func encode(v any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLabSocketAnswersAsTheStore: every call through the supervisor's
// socket gives exactly what the same call on the store gives, refusals
// included, and OpenLab uses the socket only while a supervisor listens.
func TestLabSocketAnswersAsTheStore(t *testing.T) {
	c, s := newTestStudy(t, nil)
	writeResearch(t, c, "sim.py", "print(1)\n", 0o644)
	direct := &Lab{C: c, S: s, Cores: 2, MemMB: 8192}
	cases := []struct{ name, call, args string }{
		{"run", "run", `{"source":"sim.py","outputs":["o.txt"]}`},
		{"same run again", "run", `{"source":"sim.py","outputs":["o.txt"]}`},
		{"refused run", "run", `{"source":"../x.py","outputs":["o"]}`},
		{"malformed args", "run", `{"source":`},
		{"note", "note", `{"statement":"a note","kind":"observation"}`},
		{"notes", "notes", `{}`},
		{"unknown call", "approve", `{}`},
	}
	stop := serveTestLab(t, c, s)
	ctx := context.Background()
	remote, err := OpenLab(ctx, c, 2, 8192)
	if err != nil || !remote.Remote() {
		t.Fatalf("OpenLab with a supervisor listening: remote=%v err=%v", remote != nil && remote.Remote(), err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := encode(remote.Call(ctx, tc.call, []byte(tc.args)))
			want := encode(direct.Call(ctx, tc.call, []byte(tc.args)))
			if tc.call == "note" { // a second note is a new record: compare the shape
				got, want = fmt.Sprint(strings.HasPrefix(got, "error")), fmt.Sprint(strings.HasPrefix(want, "error"))
			}
			if got != want {
				t.Errorf("through the socket:\n%s\non the store:\n%s", got, want)
			}
		})
	}
	_ = remote.Close()
	stop()
	local, err := OpenLab(ctx, c, 2, 8192)
	if err != nil || local.Remote() {
		t.Fatalf("OpenLab with no supervisor: want the store, got remote=%v err=%v", local != nil && local.Remote(), err)
	}
	_ = local.Close()
}

// TestControlThroughLabSocket: pause from another process reaches a live
// supervisor's socket and is recorded by it in the control row.
func TestControlThroughLabSocket(t *testing.T) {
	c, s := newTestStudy(t, nil)
	serveTestLab(t, c, s)
	got, err := RequestControl(context.Background(), c, "pause")
	if err != nil || got != "requested" {
		t.Fatalf("RequestControl: %q, %v", got, err)
	}
	var cmd string
	if err := s.Read(context.Background(), func(tx *store.Tx) (err error) { cmd, err = tx.GetControl(); return err }); err != nil {
		t.Fatal(err)
	}
	if cmd != "pause" {
		t.Errorf("control row = %q, want pause", cmd)
	}
}

// BenchmarkLabRunSocketVsStore: one `lab run` of a new experiment as an
// agent's `lab` process makes it: through the supervisor's socket (dial,
// peer check, request, answer) against opening the store itself (open,
// migrate check, one transaction, close).
func BenchmarkLabRunSocketVsStore(b *testing.B) {
	c, s := newTestStudy(b, nil)
	writeResearch(b, c, "sim.py", "print(1)\n", 0o644)
	ctx := context.Background()
	n := 0
	run := func(b *testing.B, lab *Lab) {
		n++
		if _, err := lab.Call(ctx, "run", fmt.Appendf(nil, `{"source":"sim.py","outputs":["o"],"key":"k%d"}`, n)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("socket", func(b *testing.B) {
		stop := serveTestLab(b, c, s)
		defer stop()
		for b.Loop() {
			lab, err := OpenLab(ctx, c, 2, 8192)
			if err != nil || !lab.Remote() {
				b.Fatalf("OpenLab: %v", err)
			}
			run(b, lab)
			_ = lab.Close()
		}
	})
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			ls, err := c.Open(ctx)
			if err != nil {
				b.Fatal(err)
			}
			run(b, &Lab{C: c, S: ls, Cores: 2, MemMB: 8192})
			_ = ls.Close()
		}
	})
}

// TestLabSocketCannotBeTakenFirst binds the name a squatter could derive
// from the campaign's folder (its hash, as the socket's name used to be)
// before the supervisor listens: the supervisor still gets its socket, and
// a client reaches the supervisor, not the squatter.
func TestLabSocketCannotBeTakenFirst(t *testing.T) {
	c := Campaign{Dir: t.TempDir()}
	sum := sha256.Sum256([]byte(c.Dir))
	squat, err := net.ListenUnix("unix", &net.UnixAddr{Name: "@simjecture-lab-" + hex.EncodeToString(sum[:12]), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer squat.Close()
	ln := listenLab(c)
	if ln == nil {
		t.Fatal("listenLab failed with the derivable name taken")
	}
	defer ln.Close()
	accepted := make(chan error, 1)
	go func() {
		conn, err := ln.AcceptUnix()
		if err == nil {
			_ = conn.Close()
		}
		accepted <- err
	}()
	conn, err := dialLab(c)
	if err != nil {
		t.Fatalf("dial the published socket: %v", err)
	}
	_ = conn.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("the supervisor's listener did not get the connection: %v", err)
	}
}
