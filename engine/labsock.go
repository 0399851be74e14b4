package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The lab socket: the supervisor serves the lab calls of its study on an
// abstract unix stream socket, so an agent whose campaign folder is
// read-only (enclose.go) still records its work, and the supervisor alone
// writes the store. Abstract names are not files: they reach across a mount
// namespace that shares the network namespace. The name has a random part
// and is published in the supervisor's folder (labNameFile), which
// enclosed agents can read but not write, so no other process can take it
// first; each side still checks with SO_PEERCRED that the other runs as
// our account.
//
// A connection carries requests one after another, each one line of JSON,
// {"call": NAME, "args": "…"} (the arguments as the text the caller was
// given, so a malformed one is refused with the same words), answered by
// one line: the object `lab CALL` prints, {"ok":true,"result":…} or
// {"ok":false,"error":"…"}. Two requests are not calls: {"control": …}
// (RequestControl) and {"usage": true}, answered with the live figures of
// the experiments on workers (RemoteUsageOf, for a UI in another process).

// maxLabLine bounds one request or answer line: the CLI's 4 MiB of stdin,
// escaped, plus framing.
const maxLabLine = 2*(4<<20) + 4096

type labRequest struct {
	Call    string `json:"call,omitempty"`
	Args    string `json:"args,omitempty"`
	Control string `json:"control,omitempty"` // "pause" or "cancel" instead of a call (RequestControl)
	Usage   bool   `json:"usage,omitempty"`   // the live figures of the experiments on workers instead of a call (RemoteUsageOf)
}

type labResponse struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Ended  Status          `json:"ended,omitempty"` // a control refused: the study has ended in this status
	Busy   bool            `json:"busy,omitempty"`  // refused unread: the socket has its connections open (refuseBusy)
}

// labNameFile holds the name of the campaign's live lab socket, in the
// supervisor's folder (read-only to enclosed agents; not its run folder,
// which the supervisor clears as it starts).
const labNameFile = "lab-socket"

// labAddr is the address of the lab socket the campaign's supervisor
// published, if any.
func labAddr(c Campaign) (*net.UnixAddr, error) {
	name, err := os.ReadFile(filepath.Join(c.Supervisor(), labNameFile))
	if err != nil {
		return nil, fmt.Errorf("no supervisor's lab socket: %w", err)
	}
	return &net.UnixAddr{Name: strings.TrimSpace(string(name)), Net: "unix"}, nil
}

// newLabAddr is a fresh lab socket address for c: the campaign's hash and
// a random part, so another process cannot take the name first and leave
// the supervisor without its socket (its agents then not enclosed).
func newLabAddr(c Campaign) (*net.UnixAddr, error) {
	sum := sha256.Sum256([]byte(c.Dir))
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &net.UnixAddr{Name: "@simjecture-lab-" + hex.EncodeToString(sum[:12]) + "-" + hex.EncodeToString(nonce), Net: "unix"}, nil
}

// listenLab opens the campaign's lab socket and publishes its name; nil
// when it cannot (the agents are then not enclosed: they write the store
// themselves). The caller holds the campaign lock.
func listenLab(c Campaign) *net.UnixListener {
	addr, err := newLabAddr(c)
	if err != nil {
		return nil
	}
	ln, err := net.ListenUnix("unix", addr)
	if err != nil {
		return nil
	}
	if err := publishLabName(c, addr.Name); err != nil {
		_ = ln.Close()
		return nil
	}
	return ln
}

// publishLabName writes name to the supervisor folder's labNameFile (a rename, so
// a reader sees the old name or the new one).
func publishLabName(c Campaign, name string) error {
	if err := os.MkdirAll(c.Supervisor(), 0o755); err != nil {
		return err
	}
	p := filepath.Join(c.Supervisor(), labNameFile)
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(name+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// serveLab answers lab calls on ln until ctx ends, then closes ln and every
// connection and waits for their goroutines. It holds at most
// sockLimits.conns connections (one more is refused) and survives a
// temporary accept failure, such as running out of descriptors.
func (sv *Supervisor) serveLab(ctx context.Context, ln *net.UnixListener) {
	lim := sv.sockLimits.orDefault()
	slots := make(chan struct{}, lim.conns)
	big := make(chan struct{}, lim.bigLines)
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var backoff acceptBackoff
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil || !temporaryAccept(err) {
				sv.logAcceptEnd(ctx, err)
				return
			}
			d := backoff.next()
			sv.log.Warn("lab socket: accept failed; retrying", "err", err, "after", d)
			if lim.retried != nil {
				lim.retried(err)
			}
			if !waitFor(ctx, d) {
				return
			}
			continue
		}
		backoff = 0
		select {
		case slots <- struct{}{}:
		default:
			refuseBusy(conn, lim.conns)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer conn.Close()
			unwatch := context.AfterFunc(ctx, func() { _ = conn.Close() })
			defer unwatch()
			sv.serveLabConn(ctx, conn, lim, big)
		})
	}
}

// logAcceptEnd says why the accept loop ended, unless the study stopped it.
func (sv *Supervisor) logAcceptEnd(ctx context.Context, err error) {
	if ctx.Err() == nil {
		sv.log.Error("lab socket: no longer accepting", "err", err)
	}
}

// serveLabConn answers the requests of one connection, each of which must
// arrive whole within lim.idle of the last answer (or of the connection).
func (sv *Supervisor) serveLabConn(ctx context.Context, conn *net.UnixConn, lim labLimits, big chan struct{}) {
	pid, err := checkPeer(conn)
	if err != nil {
		sv.log.Warn("lab socket: refused a connection", "err", err)
		return
	}
	by := requester(pid)
	lab := sv.newLab()
	lines := newLabLineReader(conn, big)
	defer lines.release()
	enc := json.NewEncoder(conn)
	for {
		deadline := time.Now().Add(lim.idle)
		_ = conn.SetReadDeadline(deadline)
		line, err := lines.next(ctx, deadline)
		if err != nil {
			sv.endLabConn(conn, enc, lim, err)
			return
		}
		var req labRequest
		resp := labResponse{Error: "malformed lab request"}
		if err := json.Unmarshal(line, &req); err == nil {
			resp = sv.answer(ctx, lab, req, by)
		}
		lines.release()
		_ = conn.SetWriteDeadline(time.Now().Add(lim.idle))
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

// endLabConn tells the client of a line too long why it is closed; any
// other end (EOF, the idle bound, the study stopping) needs no answer.
func (sv *Supervisor) endLabConn(conn *net.UnixConn, enc *json.Encoder, lim labLimits, err error) {
	if errors.Is(err, errLabLineTooLong) {
		_ = conn.SetWriteDeadline(time.Now().Add(lim.idle))
		_ = enc.Encode(labResponse{Error: err.Error()})
	}
}

// answer runs one request as `lab CALL` would, and wakes the executor after
// a call that hands it work.
func (sv *Supervisor) answer(ctx context.Context, lab *Lab, req labRequest, by string) labResponse {
	if req.Control != "" {
		return sv.answerControl(ctx, req.Control, by)
	}
	if req.Usage {
		return answerUsage(sv.RemoteUsage())
	}
	if sv.judging.Load() {
		return labResponse{Error: "lab: no lab call while the tool-free judge runs (role judge has no tools)"}
	}
	result, err := lab.Call(ctx, req.Call, []byte(req.Args))
	if err != nil {
		return labResponse{Error: err.Error()}
	}
	body, err := json.Marshal(result)
	if err != nil {
		return labResponse{Error: fmt.Sprintf("encode result: %v", err)}
	}
	if spec, ok := FindCall(req.Call); ok && spec.Wakes {
		sv.Bus.Notify()
	}
	return labResponse{OK: true, Result: body}
}

// answerControl records a pause or cancel request as RequestControl would,
// and refuses it as RequestControl would for a study that has ended (its
// supervisor still serves the socket in the instant after the end).
func (sv *Supervisor) answerControl(ctx context.Context, command, by string) labResponse {
	cmd := Command(command)
	if _, ok := stopStatus[cmd]; !ok {
		return labResponse{Error: fmt.Sprintf("unknown control %q", command)}
	}
	if err := setControl(ctx, sv.c, sv.s, cmd, by); err != nil {
		var ended *EndedError
		if errors.As(err, &ended) {
			return labResponse{Error: err.Error(), Ended: ended.Status}
		}
		return labResponse{Error: err.Error()}
	}
	sv.Bus.Notify()
	return labResponse{OK: true, Result: json.RawMessage(`"requested"`)}
}

// checkPeer refuses a peer that does not run as our account; it returns
// the peer's pid (as this process's pid namespace sees it).
func checkPeer(conn *net.UnixConn) (int32, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer credentials: %w", os.NewSyscallError("getsockopt", cerr))
	}
	if cred.Uid != uint32(os.Getuid()) {
		return 0, fmt.Errorf("peer pid %d runs as uid %d, not %d: %w", cred.Pid, cred.Uid, os.Getuid(), ErrLabPeer)
	}
	return cred.Pid, nil
}

// requester is "agent" when the peer pid runs in a pid namespace nested
// in ours — an agent's enclosure has its own (docs/security.md) —,
// "unknown" when that cannot be read (the process that connected is gone:
// an operator's command waits for its answer, so it is not), and ""
// otherwise.
func requester(pid int32) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok && len(strings.Fields(rest)) > 1 {
			return "agent"
		}
	}
	return ""
}

// ErrLabPeer marks a lab socket peer that runs as another account.
var ErrLabPeer = errors.New("lab socket peer is another account")
