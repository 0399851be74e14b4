package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// loop is the supervisor's state machine; it returns the final status.
func (sv *Supervisor) loop(ctx context.Context) Status {
	for {
		if b := sv.boundary(ctx); b != goOn {
			return b
		}
		if stop := sv.completion(ctx); stop != goOn {
			return stop
		}
		if stop := sv.processReviews(ctx); stop != goOn {
			return stop
		}
		if stop := sv.completion(ctx); stop != goOn {
			return stop
		}
		if stop := sv.experimentFreeze(ctx); stop != goOn {
			return stop
		}
		if stop := sv.workerTurn(ctx); stop != goOn {
			return stop
		}
	}
}

// completed reports whether the study is complete; a store that cannot be
// read counts as a harness error and as not complete.
func (sv *Supervisor) completed(ctx context.Context) bool {
	var claims []Claim
	var reviews []Review
	err := sv.s.Read(ctx, func(tx *store.Tx) (err error) {
		if claims, err = listDocs[Claim](tx, store.Claims); err != nil {
			return err
		}
		reviews, err = listDocs[Review](tx, store.Reviews, "resolved")
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			sv.storeFailed("read the claims", err)
		}
		return false
	}
	if slices.Contains(ScientificModes, sv.k.Mode) {
		return ScientificCompleted(claims, reviews)
	}
	return Completed(claims, sv.k.CompletionPolicy)
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
func (sv *Supervisor) waitForExperiments(ctx context.Context) Status {
	end := time.Now().Add(sv.turnAllowance())
	for time.Now().Before(end) {
		active, err := sv.activeExperiments(ctx)
		if err != nil {
			return sv.boundary(ctx) // counted; the boundary pauses once there are too many
		}
		if active == 0 {
			return goOn
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
		if b := sv.boundary(ctx); b != goOn {
			return b
		}
	}
	return goOn
}

// activeExperiments counts the queued and running experiments; a failed
// read goes to storeFailed.
func (sv *Supervisor) activeExperiments(ctx context.Context) (int, error) {
	var n int
	err := sv.s.Read(ctx, func(tx *store.Tx) error {
		counts, err := experimentCounts(tx)
		n = counts[ExpQueued] + counts[ExpRunning]
		return err
	})
	if err != nil && ctx.Err() == nil {
		sv.storeFailed("count the active experiments", err)
	}
	return n, err
}

func (sv *Supervisor) turnAllowance() time.Duration {
	return max(0, min(time.Duration(sv.k.TurnSeconds)*time.Second, sv.remaining()))
}

// workerTurn runs one worker turn and handles its outcome.
func (sv *Supervisor) workerTurn(ctx context.Context) Status {
	st, plan, before, steer, err := sv.turnStart(ctx)
	if errors.Is(err, errAssign) {
		return sv.harnessError(ctx, err)
	}
	if err != nil {
		return sv.harnessError(ctx, storeError("start a turn", err))
	}
	prompt, lastSeq, err := sv.workerPrompt(ctx, st, plan)
	if err != nil {
		return sv.harnessError(ctx, storeError("read the news for the turn's prompt", err))
	}
	guidance, err := steeringText(steer)
	if err != nil {
		return sv.harnessError(ctx, err)
	}
	prompt += guidance
	turn := provider.Turn{
		Role: provider.RoleWorker, Number: st.Turn, Prompt: prompt, Dir: sv.c.Research(),
		LogDir: filepath.Join(sv.c.Supervisor(), fmt.Sprintf("turn-%05d", st.Turn)),
		Env:    sv.roleEnv(plan), Timeout: sv.turnAllowance(), Cursor: plan.cursor, Model: sv.k.Model,
		Tools: LabTools(plan.role), CallTool: labCaller(sv.newLab()), Study: sv.c.Dir,
		MCPCommand: []string{sv.opt.SelfExe, "mcp", "--campaign", sv.c.Dir}, StateDir: sv.c.AgentState(),
	}
	if plan.idle > 0 {
		turn.Timeout = max(0, sv.remaining()) // frontier: the turn ends after plan.idle without activity
	}
	if err := newAgentDir(turn.LogDir); err != nil {
		return sv.harnessError(ctx, err)
	}
	sv.setActivity(ctx, fmt.Sprintf("agent turn %d%s", st.Turn, plan.label()))
	out, stop, err := sv.runTurn(ctx, turn, plan.idle)
	if stop != goOn {
		sv.endStoppedTurn(ctx, turn, "", out, stop)
		return stop
	}
	if err != nil {
		return sv.harnessError(ctx, err)
	}
	sv.recordUsage(ctx, out, fmt.Sprintf("worker-turn-%d", st.Turn))
	logs := sv.turnLogs(turn.LogDir, out) // the agent has stopped: RunTurn returned
	sv.record(ctx, "record the turn's end", func(tx *store.Tx, st *SupervisorState) error {
		if out.Failure == nil {
			st.LastPromptSeq = lastSeq // a failed turn's retry is told the same news again
		}
		if err := keepCursor(tx, st, plan, out.Cursor); err != nil {
			return err
		}
		return appendEvent(tx, TurnEndedPayload{Turn: turn.Number, Logs: logs})
	})
	if out.Failure != nil {
		return sv.providerFailure(ctx, out)
	}
	sv.providerRecovered(ctx)
	return sv.afterTurn(ctx, before)
}

// turnStart numbers the turn, assigns it (its role, in a scientific mode
// its claim), counts the records before it, records turn_started with the
// role and takes the operator guidance its prompt carries (stamping the new
// ones delivered), in one transaction.
func (sv *Supervisor) turnStart(ctx context.Context) (SupervisorState, turnPlan, int, []PromptSteering, error) {
	var st SupervisorState
	var plan turnPlan
	var records int
	var steer []PromptSteering
	err := sv.update(ctx, func(tx *store.Tx, s *SupervisorState) error {
		s.Turn++
		st = *s
		var err error
		if plan, err = sv.planTurn(tx, st); err != nil {
			return fmt.Errorf("%w: %w", errAssign, err)
		}
		if records, err = countRecords(tx); err != nil {
			return err
		}
		if err := appendEvent(tx, TurnStartedPayload{Turn: s.Turn, Role: string(plan.role)}); err != nil {
			return err
		}
		steer, err = deliverSteering(tx, s.Turn, time.Now())
		return err
	})
	return st, plan, records, steer, err
}

// errAssign marks a turn that could not be assigned (no claim to work on).
var errAssign = errors.New("assign the turn")

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
func (sv *Supervisor) runTurn(ctx context.Context, t provider.Turn, idle time.Duration) (provider.Outcome, Status, error) {
	if err := sv.checkPinRecord(); err != nil {
		sv.log.Error("a program or setting of the study is not as its record says", "err", err)
		return provider.Outcome{}, sv.needsAttention(ctx, "program changed", err.Error()), nil
	}
	if err := sv.progs.check(); err != nil {
		sv.log.Error("a program of the study changed", "err", err)
		return provider.Outcome{}, sv.needsAttention(ctx, "program changed", err.Error()), nil
	}
	if sv.enclosed {
		if err := sv.settings.check(); err != nil {
			sv.log.Error("a setting of the study changed", "err", err)
			return provider.Outcome{}, sv.needsAttention(ctx, "setting changed", err.Error()), nil
		}
	}
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		out provider.Outcome
		err error
	}
	ch := make(chan result, 1)
	go func() {
		out, err := sv.agent.RunTurn(turnCtx, sv.enclose(t))
		ch <- result{out, err}
	}()
	tick := time.NewTicker(sv.opt.Boundary)
	defer tick.Stop()
	watch := newIdleWatch(sv.s, idle)
	for {
		select {
		case r := <-ch:
			return r.out, goOn, r.err
		case <-tick.C:
			if b := sv.boundary(ctx); b != goOn {
				cancel()
				r := <-ch // its outcome says whether a process outlived it (turnLogs)
				return r.out, b, nil
			}
			if watch.expired(ctx) { // a checkpoint, not a failure
				cancel()
				r := <-ch
				r.out.TimedOut, r.out.Failure = true, nil
				return r.out, goOn, r.err
			}
		}
	}
}

// afterTurn counts idle turns and pauses between them, growing, never busy.
func (sv *Supervisor) afterTurn(ctx context.Context, before int) Status {
	var idle int
	ok := sv.record(ctx, "record the outcome of the turn", func(tx *store.Tx, st *SupervisorState) error {
		after, err := countRecords(tx)
		if err != nil {
			return err
		}
		st.HarnessErrors = 0
		if after > before {
			st.IdleStreak = 0
		} else {
			st.IdleStreak++
			err = appendEvent(tx, IdleTurnPayload{Streak: st.IdleStreak})
			if err == nil && st.IdleStreak%3 == 0 && st.WorkerCursor != "" {
				// Three idle turns in a row: start a fresh session with the full guide.
				st.WorkerCursor, st.SessionRecoveries = "", st.SessionRecoveries+1
				err = appendEvent(tx, SessionRecoveryPayload{IdleStreak: st.IdleStreak, Recoveries: st.SessionRecoveries})
			}
		}
		idle = st.IdleStreak
		return err
	})
	if !ok {
		return sv.sleep(ctx, min(sv.opt.HarnessGap, sv.remaining()))
	}
	sv.hz.reset()
	if idle == 0 {
		return goOn
	}
	if active, err := sv.activeExperiments(ctx); err != nil || active > 0 {
		return sv.boundary(ctx)
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
