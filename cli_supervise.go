package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/tui"
)

// Running a study in this process, shared by study, resume and demo.

// supervise runs the study until it stops — headless with batch (or without
// a terminal), else in the dashboard — and maps its final status to the exit code.
func supervise(ctx context.Context, c engine.Campaign, batch, jsonl bool, io stdio) int {
	return superviseLocked(ctx, c, nil, batch, jsonl, io)
}

// superviseLocked is supervise with the campaign lock this process holds
// (nil: take it), handed to the supervisor.
func superviseLocked(ctx context.Context, c engine.Campaign, lock *engine.Lock, batch, jsonl bool, io stdio) int {
	sup, err := openStudyLocked(ctx, c, lock)
	if err != nil {
		return fail(io, err)
	}
	defer sup.Close()
	var final engine.Status
	if batch || jsonl || !interactive(io) {
		announceBackend(io, sup.Contract())
		final, err = runHeadless(ctx, sup, jsonl, io)
	} else {
		final, err = runDashboard(ctx, sup, io)
	}
	if err != nil {
		return fail(io, err)
	}
	return exitFor(final)
}

// runHeadless runs sup while printing its status line (or, with jsonl, its
// events) and returns its final status.
func runHeadless(ctx context.Context, sup *engine.Supervisor, jsonl bool, io stdio) (engine.Status, error) {
	view := sup.View()
	from, _ := view.LastSeq(ctx)
	h := &tui.Headless{View: view, Stdout: io.out, Stderr: io.err, JSONL: jsonl, From: from, TTY: isTerminal(io.err)}
	viewCtx, stopView := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = h.Run(viewCtx) })
	final, err := sup.Run(ctx)
	stopView()
	wg.Wait()
	_ = h.Drain(context.WithoutCancel(ctx))
	h.Finish(context.WithoutCancel(ctx), final)
	return final, err
}

// exitFor is the exit code of a study that stopped with status final.
func exitFor(final engine.Status) int {
	switch final {
	case engine.StatusBudgetExhausted:
		return exitBudget
	case engine.StatusPausedExternalError:
		return exitAttention
	}
	return exitOK
}

// openStudy opens a supervisor for the study in c (engine.OpenStudy) with
// this binary and this machine's cores and memory.
func openStudy(ctx context.Context, c engine.Campaign) (*engine.Supervisor, error) {
	return openStudyLocked(ctx, c, nil)
}

// openStudyLocked is openStudy with the campaign lock this process holds
// (nil: take it), which the supervisor takes over.
func openStudyLocked(ctx context.Context, c engine.Campaign, lock *engine.Lock) (*engine.Supervisor, error) {
	self, err := os.Executable()
	if err != nil {
		_ = lock.Release()
		return nil, fmt.Errorf("find own binary: %w", err)
	}
	return engine.OpenStudyLocked(ctx, c, lock, engine.Options{SelfExe: self, Cores: runtime.NumCPU(), MemMB: memoryMB()})
}

func announceBackend(io stdio, k engine.Contract) {
	fmt.Fprintf(io.err, "Execution backend: %s", k.ExecutionBackend)
	if sandbox.IsCooperative(k.ExecutionBackend) {
		fmt.Fprintf(io.err, " — WARNING: %s", sandbox.CooperativeClause)
	}
	fmt.Fprintln(io.err)
}

// runDashboard shows the dashboard for a study this process supervises.
// It runs sup.Run itself (the caller must not), lets the operator pause,
// resume and cancel it, and returns when the operator leaves: a study still
// running then is paused first (after asking), so final is its status at
// that point ("paused", or the status the study ended with). The caller
// still owns sup and closes it. Without a terminal on stdin and stdout it
// falls back to the headless status line.
func runDashboard(ctx context.Context, sup *engine.Supervisor, io stdio) (final engine.Status, err error) {
	if !interactive(io) {
		return runHeadless(ctx, sup, false, io)
	}
	opt := tuiOptions(io)
	opt.Supervisor = sup
	final, err = tui.Run(ctx, opt)
	if err != nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	if final == "" {
		snap, serr := sup.View().DisplaySnapshot(context.WithoutCancel(ctx))
		if serr == nil {
			final = snap.Status
		}
	}
	return final, err
}
