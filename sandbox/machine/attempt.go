package machine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// attempt drives one experiment on a worker through reconnections.
type attempt struct {
	m       *sshMachine
	req     JobRequest
	spec    sandbox.Spec
	started time.Time

	cancelAt time.Time // when ctx ended (zero while it runs)
}

func (a *attempt) loop(ctx context.Context) (sandbox.Result, error) {
	backoff := backoffFirst
	var down time.Time // when the worker became unreachable
	for {
		res, err := a.once(ctx)
		if err == nil || !errors.Is(err, ErrUnreachable) {
			return res, err
		}
		if down.IsZero() {
			down = time.Now()
		}
		grace := time.Duration(a.m.p.Grace()) * time.Second
		switch {
		case time.Since(down) > grace:
			return sandbox.Result{}, fmt.Errorf("worker %s unreachable for %s, past its orphan grace (it stops experiments no coordinator attends): %v: %w",
				a.m.p.ID, time.Since(down).Round(time.Second), err, ErrLost)
		case !a.cancelAt.IsZero() && time.Since(a.cancelAt) > cancelWait:
			return sandbox.Result{Backend: a.spec.Backend, Cancelled: true}, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			a.noteCancel()
		}
		backoff = min(backoff*2, backoffMax)
	}
}

func (a *attempt) noteCancel() {
	if a.cancelAt.IsZero() {
		a.cancelAt = time.Now()
	}
}

// once connects (or reuses the session), makes sure the job exists, has
// its inputs and runs, waits for its end and collects its files.
func (a *attempt) once(ctx context.Context) (sandbox.Result, error) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), helloTimeout)
	s, err := a.m.conn(dctx)
	cancel()
	if err != nil {
		return sandbox.Result{}, err
	}
	var cr createReply
	if err := s.call(context.WithoutCancel(ctx), opCreate, a.req, &cr); err != nil {
		return sandbox.Result{}, err
	}
	st := cr.State
	if st.Status == jobStaged {
		if st, err = a.stage(ctx, s, cr.Missing); err != nil {
			return sandbox.Result{}, err
		}
	}
	if st.Status == jobRunning {
		if st, err = a.wait(ctx, s); err != nil {
			return sandbox.Result{}, err
		}
	}
	return a.outcome(ctx, s, st)
}

func (a *attempt) stage(ctx context.Context, s *session, missing []blobState) (JobState, error) {
	for _, b := range missing {
		if err := a.upload(ctx, s, b); err != nil {
			return JobState{}, err
		}
	}
	var st JobState
	err := s.call(context.WithoutCancel(ctx), opStart, jobArgs{ID: a.req.ID}, &st)
	return st, err
}

// upload streams one input from the offset the worker already holds.
func (a *attempt) upload(ctx context.Context, s *session, b blobState) error {
	path := ""
	for _, f := range a.spec.Sealed {
		if f.SHA256 == b.SHA256 {
			path = f.HostPath
		}
	}
	return putBlob(ctx, s, path, b)
}

// putBlob streams the file at path as blob b.SHA256 from the offset the
// worker already holds, and waits for the worker's hash check.
func putBlob(ctx context.Context, s *session, path string, b blobState) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("input %s: %w", b.SHA256, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, f, b.Have); err != nil {
		return fmt.Errorf("input %s: %w", b.SHA256, err)
	}
	seq, ch := s.open()
	defer s.forget(seq)
	if err := sendChunks(s, seq, f, h, putArgs{SHA256: b.SHA256, Offset: b.Have}); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != b.SHA256 {
		return fmt.Errorf("%s changed as it was sent: it hashes to %s, recorded %s", path, got, b.SHA256)
	}
	reply, err := s.next(context.WithoutCancel(ctx), ch)
	if err != nil {
		return err
	}
	return decodeReply(s.t.p.ID, opPut, reply, nil)
}

func sendChunks(s *session, seq uint64, f io.Reader, h io.Writer, args putArgs) error {
	buf := make([]byte, chunkSize)
	first := true
	for {
		k, rerr := io.ReadFull(f, buf)
		h.Write(buf[:k])
		last := errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF)
		if rerr != nil && !last {
			return fmt.Errorf("input %s: %w", args.SHA256, rerr)
		}
		fr := frame{Seq: seq, Op: opPut, Data: buf[:k], Final: last}
		if first {
			fr.Body, first = body(args), false
		}
		if err := s.w.write(fr, last); err != nil {
			return fmt.Errorf("worker %s: %w: %w", s.t.p.ID, err, ErrUnreachable)
		}
		if last {
			return nil
		}
	}
}

// wait waits for the job's end, forwarding a cancel when ctx ends.
func (a *attempt) wait(ctx context.Context, s *session) (JobState, error) {
	type reply struct {
		st  JobState
		err error
	}
	done := make(chan reply, 1)
	go func() {
		var st JobState
		err := s.call(context.Background(), opWait, jobArgs{ID: a.req.ID}, &st)
		done <- reply{st, err}
	}()
	var watching sync.WaitGroup
	uctx, stopUsage := context.WithCancel(context.Background())
	defer watching.Wait()
	defer stopUsage() // before the wait for the watcher: it ends a status call in flight
	if a.spec.Usage != nil {
		watching.Go(func() { a.watchUsage(uctx, s) })
	}
	select {
	case r := <-done:
		return r.st, r.err
	case <-ctx.Done():
	}
	a.noteCancel()
	var st JobState
	if err := s.call(context.Background(), opCancel, cancelArgs{ID: a.req.ID, Reason: "cancel"}, &st); err != nil {
		return JobState{}, err
	}
	r := <-done
	return r.st, r.err
}

// watchUsage asks the worker for the job's status every UsageEvery until
// ctx ends, and hands the live figures it carries to spec.Usage. A failed
// status call is skipped: the wait reports what the session does.
func (a *attempt) watchUsage(ctx context.Context, s *session) {
	tick := time.NewTicker(sandbox.UsageEvery)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var st JobState
		if err := s.call(ctx, opStatus, jobArgs{ID: a.req.ID}, &st); err != nil {
			continue
		}
		if st.Status == jobRunning && st.Usage != nil && st.Usage.At.After(last) {
			last = st.Usage.At
			a.spec.Usage(*st.Usage)
		}
	}
}

// outcome turns the worker's final state into a result, fetching the files.
func (a *attempt) outcome(ctx context.Context, s *session, st JobState) (sandbox.Result, error) {
	switch {
	case st.Status == jobLost:
		return sandbox.Result{}, fmt.Errorf("worker %s: %s: %w", a.m.p.ID, st.Reason, ErrLost)
	case st.Status == jobNotFound:
		return sandbox.Result{}, fmt.Errorf("worker %s no longer knows the experiment: %w", a.m.p.ID, ErrLost)
	case st.Status != jobFinished:
		return sandbox.Result{}, fmt.Errorf("worker %s: job is %s: %w", a.m.p.ID, st.Status, ErrUnreachable)
	case st.Result == nil:
		return sandbox.Result{}, fmt.Errorf("worker %s: %s", a.m.p.ID, st.Reason)
	}
	if err := a.fetchAll(ctx, s, st.Files); err != nil {
		return sandbox.Result{}, err
	}
	if !st.Collected {
		// Every file arrived hash-checked: the worker may remove the job's
		// folder. A failed release leaves it there, never fails the run.
		_ = s.call(context.WithoutCancel(ctx), opRelease, jobArgs{ID: a.req.ID}, nil)
	}
	return *st.Result, nil
}

func (a *attempt) fetchAll(ctx context.Context, s *session, files map[string]sandbox.Artifact) error {
	if err := ensureDir(a.spec.ArtifactDir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		dst := artifactPath(a.spec.ArtifactDir, n)
		if sum, _, err := sandbox.HashFile(dst); err == nil && sum == files[n].SHA256 {
			continue // fetched before the connection dropped
		}
		if err := fetchFile(ctx, s, a.req.ID, n, dst, files[n].SHA256); err != nil {
			return err
		}
	}
	return nil
}
