package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// loop is the supervisor's state machine; it returns the final status.
func (sv *Supervisor) loop(ctx context.Context) string {
	for {
		if b := sv.boundary(ctx); b != "" {
			return b
		}
		if done, err := sv.completed(ctx); err == nil && done {
			return StatusCompleted
		}
		if stop := sv.processReviews(ctx); stop != "" {
			return stop
		}
		if done, err := sv.completed(ctx); err == nil && done {
			return StatusCompleted
		}
		if stop := sv.waitForExperiments(ctx); stop != "" {
			return stop
		}
		if stop := sv.workerTurn(ctx); stop != "" {
			return stop
		}
	}
}

func (sv *Supervisor) completed(ctx context.Context) (bool, error) {
	var claims []Claim
	err := sv.s.Read(ctx, func(tx *store.Tx) (err error) { claims, err = listDocs[Claim](tx, store.Claims); return err })
	if err != nil {
		return false, err
	}
	return Completed(claims, sv.k.CompletionPolicy), nil
}

// Completed is the completion predicate: the root is supported, or it is
// falsified and either a repair descending from it is supported or the
// policy is "answer".
func Completed(claims []Claim, policy string) bool {
	byID := map[string]Claim{}
	for _, c := range claims {
		byID[c.ID] = c
	}
	root, ok := byID[RootClaim]
	switch {
	case !ok:
		return false
	case root.Status == "supported":
		return true
	case root.Status != "falsified":
		return false
	case policy == "answer":
		return true
	}
	for _, c := range claims {
		if c.ID != RootClaim && c.Status == "supported" && ancestorsFalsified(c, byID) {
			return true
		}
	}
	return false
}

// ancestorsFalsified reports whether every ancestor of c up to root has an
// accepted falsification.
func ancestorsFalsified(c Claim, byID map[string]Claim) bool {
	for depth := 0; c.Parent != nil && depth < 1000; depth++ {
		p, ok := byID[*c.Parent]
		if !ok || p.Status != "falsified" {
			return false
		}
		c = p
	}
	return c.ID == RootClaim
}

// waitForExperiments waits while experiments are queued or running, for at
// most one turn allowance, checking the boundary.
func (sv *Supervisor) waitForExperiments(ctx context.Context) string {
	end := time.Now().Add(sv.turnAllowance())
	for time.Now().Before(end) {
		active, err := sv.activeExperiments(ctx)
		if err != nil || active == 0 {
			return ""
		}
		sv.setActivity(ctx, fmt.Sprintf("waiting for %d experiment(s)", active))
		wake, unsub := sv.Bus.Subscribe()
		t := time.NewTimer(sv.opt.Boundary)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		unsub()
		if b := sv.boundary(ctx); b != "" {
			return b
		}
	}
	return ""
}

func (sv *Supervisor) activeExperiments(ctx context.Context) (int, error) {
	var n int
	err := sv.s.Read(ctx, func(tx *store.Tx) error {
		counts, err := tx.CountByStatus(store.Experiments)
		n = counts[ExpQueued] + counts[ExpRunning]
		return err
	})
	return n, err
}

func (sv *Supervisor) turnAllowance() time.Duration {
	return max(0, min(time.Duration(sv.k.TurnSeconds)*time.Second, sv.remaining()))
}

// workerTurn runs one worker turn and handles its outcome.
func (sv *Supervisor) workerTurn(ctx context.Context) string {
	st, before, err := sv.turnStart(ctx)
	if err != nil {
		return sv.harnessError(ctx, err)
	}
	prompt, lastSeq, err := sv.workerPrompt(ctx, st)
	if err != nil {
		return sv.harnessError(ctx, err)
	}
	turn := provider.Turn{
		Role: provider.RoleWorker, Number: st.Turn, Prompt: prompt, Dir: sv.c.Research(),
		LogDir: filepath.Join(sv.c.Supervisor(), fmt.Sprintf("turn-%05d", st.Turn)),
		Env:    sv.agentEnv(true), Timeout: sv.turnAllowance(), Cursor: st.WorkerCursor, Model: sv.k.Model,
		Tools: LabTools(), CallTool: labCaller(sv.c, sv.s, sv.opt.MemMB), Study: sv.c.Dir,
		MCPCommand: []string{sv.opt.SelfExe, "mcp", "--campaign", sv.c.Dir},
	}
	sv.setActivity(ctx, fmt.Sprintf("agent turn %d", st.Turn))
	out, stop, err := sv.runTurn(ctx, turn)
	if stop != "" {
		return stop
	}
	if err != nil {
		return sv.harnessError(ctx, err)
	}
	sv.recordUsage(ctx, out, fmt.Sprintf("worker-turn-%d", st.Turn))
	_ = sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		if out.Failure == nil {
			st.LastPromptSeq = lastSeq // a failed turn's retry is told the same news again
		}
		if out.Cursor != "" {
			st.WorkerCursor = out.Cursor
		}
		return nil
	})
	if out.Failure != nil {
		return sv.providerFailure(ctx, out)
	}
	sv.providerRecovered(ctx)
	return sv.afterTurn(ctx, before)
}

// turnStart numbers the turn and counts the records before it.
func (sv *Supervisor) turnStart(ctx context.Context) (SupervisorState, int, error) {
	var st SupervisorState
	var records int
	err := sv.update(ctx, func(tx *store.Tx, s *SupervisorState) error {
		s.Turn++
		st = *s
		var err error
		records, err = countRecords(tx)
		if err != nil {
			return err
		}
		_, err = tx.Append("turn_started", map[string]any{"turn": s.Turn, "role": provider.RoleWorker})
		return err
	})
	return st, records, err
}

func countRecords(tx *store.Tx) (int, error) {
	n := 0
	for _, k := range []store.Kind{store.Experiments, store.Claims, store.Reviews} {
		counts, err := tx.CountByStatus(k)
		if err != nil {
			return 0, err
		}
		for _, c := range counts {
			n += c
		}
	}
	notes, err := tx.CountNotes()
	return n + notes, err
}

// runTurn runs a turn while checking the boundary; a boundary stops the turn.
func (sv *Supervisor) runTurn(ctx context.Context, t provider.Turn) (provider.Outcome, string, error) {
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		out provider.Outcome
		err error
	}
	ch := make(chan result, 1)
	go func() {
		out, err := sv.agent.RunTurn(turnCtx, t)
		ch <- result{out, err}
	}()
	tick := time.NewTicker(sv.opt.Boundary)
	defer tick.Stop()
	for {
		select {
		case r := <-ch:
			return r.out, "", r.err
		case <-tick.C:
			if b := sv.boundary(ctx); b != "" {
				cancel()
				<-ch
				return provider.Outcome{}, b, nil
			}
		}
	}
}

// afterTurn counts idle turns and pauses between them, growing, never busy.
func (sv *Supervisor) afterTurn(ctx context.Context, before int) string {
	var idle int
	_ = sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		after, err := countRecords(tx)
		if err != nil {
			return err
		}
		st.HarnessErrors = 0
		if after > before {
			st.IdleStreak = 0
		} else {
			st.IdleStreak++
			_, err = tx.Append("idle_turn", map[string]int{"streak": st.IdleStreak})
			if err == nil && st.IdleStreak%3 == 0 && st.WorkerCursor != "" {
				// Three idle turns in a row: start a fresh session with the full guide.
				st.WorkerCursor, st.SessionRecoveries = "", st.SessionRecoveries+1
				_, err = tx.Append("session_recovery", map[string]int{"idle_streak": st.IdleStreak, "recoveries": st.SessionRecoveries})
			}
		}
		idle = st.IdleStreak
		return err
	})
	if idle == 0 {
		return ""
	}
	active, _ := sv.activeExperiments(ctx)
	if active > 0 {
		return ""
	}
	return sv.sleep(ctx, sv.opt.IdlePause(idle))
}

// IdlePause is the pause after the n-th idle turn in a row: 1, 2, 4 … 60 s.
func IdlePause(n int) time.Duration {
	return time.Duration(min(60, 1<<min(max(n-1, 0), 6))) * time.Second
}

func (sv *Supervisor) agentEnv(worker bool) map[string]string {
	env := map[string]string{"SIMJECTURE_BIN": sv.opt.SelfExe}
	if worker {
		env["SIMJECTURE_STUDY"] = sv.c.Dir
	}
	return env
}

// harnessError counts a failure of our own; too many in a row pause the study.
func (sv *Supervisor) harnessError(ctx context.Context, err error) string {
	var n int
	_ = sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		st.HarnessErrors++
		st.LastError = err.Error()
		n = st.HarnessErrors
		_, aerr := tx.Append("harness_error", map[string]any{"error": err.Error(), "consecutive": n})
		return aerr
	})
	if n >= sv.opt.HarnessMax {
		return sv.needsAttention(ctx, "harness", fmt.Sprintf("%d consecutive harness errors; last: %v. Check the logs, then resume this study.", n, err))
	}
	return sv.sleep(ctx, min(3*time.Second, sv.remaining()))
}
