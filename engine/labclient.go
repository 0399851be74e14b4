package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// OpenLab opens the lab of study c for a `lab` or `mcp` process (cores and
// memMB are this host's; a study with workers may ask for up to its
// largest machine's): through
// its supervisor's lab socket when one answers, so the supervisor alone
// writes the store; else (no live supervisor, say an operator's `lab
// status`) by opening the store directly. Where the store is read-only to
// this process (the agent's enclosure) it cannot write it, so a supervisor
// must answer. Close releases what it opened.
func OpenLab(ctx context.Context, c Campaign, cores int, memMB int64) (*Lab, error) {
	if conn, err := dialLab(c); err == nil {
		return &Lab{C: c, Cores: cores, MemMB: memMB, remote: newLabClient(c, conn)}, nil
	}
	if readOnlyHere(c) {
		return nil, fmt.Errorf("the study's record is read-only here and no supervisor answers on its lab socket: %w", ErrLab)
	}
	s, err := c.Open(ctx)
	if err != nil {
		return nil, err
	}
	l := &Lab{C: c, S: s, Cores: cores, MemMB: memMB, ownsStore: true}
	if k, err := LoadContract(ctx, s); err == nil {
		l.sizes = poolSizes(k, cores, memMB)
		l.Cores, l.MemMB = largest(l.sizes)
	}
	return l, nil
}

// Remote reports whether l forwards its calls to the supervisor.
func (l *Lab) Remote() bool { return l.remote != nil }

// Close releases the connection or the store OpenLab opened.
func (l *Lab) Close() error {
	if l.remote != nil {
		return l.remote.close()
	}
	if l.ownsStore {
		return l.S.Close()
	}
	return nil
}

// readOnlyHere reports whether the store's folder is mounted read-only for
// this process.
func readOnlyHere(c Campaign) bool {
	return errors.Is(syscall.Access(c.Dir, 2 /* W_OK */), syscall.EROFS)
}

func dialLab(c Campaign) (*net.UnixConn, error) {
	addr, err := labAddr(c)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		return nil, fmt.Errorf("lab socket: %w", err)
	}
	if _, err := checkPeer(conn); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

func newLineReader(conn net.Conn) *bufio.Scanner {
	s := bufio.NewScanner(conn)
	s.Buffer(make([]byte, 0, 64<<10), maxLabLine)
	return s
}

// labClient sends lab calls to the supervisor, one at a time, dialing
// again when its connection has been idle near the supervisor's bound.
type labClient struct {
	mu    sync.Mutex
	c     Campaign
	conn  *net.UnixConn
	lines *bufio.Scanner
	used  time.Time // the last answer, or the dial
}

func newLabClient(c Campaign, conn *net.UnixConn) *labClient {
	return &labClient{c: c, conn: conn, lines: newLineReader(conn), used: time.Now()}
}

// close closes the connection.
func (r *labClient) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn.Close()
}

// fresh dials again when the connection has been idle labRedialAfter, or
// failed (used is then zero).
func (r *labClient) fresh() error {
	if time.Since(r.used) < labRedialAfter {
		return nil
	}
	conn, err := dialLab(r.c)
	if err != nil {
		return fmt.Errorf("%w: %w", errNoAnswer, err)
	}
	_ = r.conn.Close()
	r.conn, r.lines, r.used = conn, newLineReader(conn), time.Now()
	return nil
}

// call sends one request and returns the result as the supervisor encoded
// it, or its refusal as an error with the supervisor's words.
func (r *labClient) call(ctx context.Context, name string, raw []byte) (any, error) {
	resp, err := r.roundTrip(ctx, labRequest{Call: name, Args: string(raw)})
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", name, err)
	}
	if !resp.OK {
		return nil, remoteError(resp.Error)
	}
	return resp.Result, nil
}

// control asks the supervisor of c to record a pause or cancel request;
// the supervisor's refusal of a study that has ended is an [EndedError].
func (r *labClient) control(ctx context.Context, c Campaign, command string) error {
	resp, err := r.roundTrip(ctx, labRequest{Control: command})
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	if !resp.OK && resp.Ended != "" {
		return &EndedError{Dir: c.Dir, Status: resp.Ended}
	}
	if !resp.OK {
		return fmt.Errorf("%s: %s: %w", command, resp.Error, ErrInvalid)
	}
	return nil
}

// roundTrip sends req and reads the answer; after a failure the next
// request dials again.
func (r *labClient) roundTrip(ctx context.Context, req labRequest) (labResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, err := r.exchange(ctx, req)
	if errors.Is(err, errNoAnswer) {
		r.used = time.Time{}
	}
	return resp, err
}

func (r *labClient) exchange(ctx context.Context, req labRequest) (labResponse, error) {
	var resp labResponse
	if err := r.fresh(); err != nil {
		return resp, err
	}
	conn := r.conn
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	body, _ := json.Marshal(req)
	if _, err := r.conn.Write(append(body, '\n')); err != nil {
		return resp, r.refusedSend(err)
	}
	if !r.lines.Scan() {
		err := r.lines.Err()
		if err == nil {
			err = errors.New("the supervisor closed the connection")
		}
		return resp, fmt.Errorf("%w: %w", errNoAnswer, err)
	}
	if err := json.Unmarshal(r.lines.Bytes(), &resp); err != nil {
		return resp, fmt.Errorf("malformed answer from the supervisor: %w", err)
	}
	if resp.Busy {
		return resp, fmt.Errorf("%w: %s", errNoAnswer, resp.Error)
	}
	r.used = time.Now()
	return resp, nil
}

// refusedSend is the error of a request that could not be sent: the
// supervisor's busy line when it refused the connection before the
// request went out (the line is then already here: the peer has closed,
// so the read does not wait), else the failure of the write.
func (r *labClient) refusedSend(err error) error {
	var resp labResponse
	if r.lines.Scan() && json.Unmarshal(r.lines.Bytes(), &resp) == nil && resp.Busy {
		return fmt.Errorf("%w: %s", errNoAnswer, resp.Error)
	}
	return fmt.Errorf("send to the supervisor: %w: %w", errNoAnswer, err)
}

// errNoAnswer marks a request the supervisor did not answer: the
// connection failed or closed first (it was stopping, or died).
var errNoAnswer = errors.New("no answer from the supervisor")

// remoteError is a lab call the supervisor refused, in its words.
type remoteError string

func (e remoteError) Error() string { return string(e) }

// Unwrap makes a refusal an ErrLab, as it is in the supervisor.
func (e remoteError) Unwrap() error { return ErrLab }
