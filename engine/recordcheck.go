package engine

import (
	"context"
	"fmt"

	"github.com/simjecture/simjecture/store"
)

// The supervisor checks that the record means what its history says
// (CheckConsistency) before it resumes a study and before it records it
// completed: a claim status or a contract forged straight into the store
// must not complete a study, nor be built on by a resumed one.

// CategoryRecord is the error category of a study stopped for a record
// that contradicts its own history.
const CategoryRecord = "record"

// recordFinding is the first consistency finding of the record, or "".
func (sv *Supervisor) recordFinding(ctx context.Context) (string, error) {
	findings, err := CheckConsistency(ctx, sv.s)
	if err != nil || len(findings) == 0 {
		return "", err
	}
	return recordAttention(findings), nil
}

func recordAttention(findings []string) string {
	msg := "the record contradicts its history: " + findings[0]
	if len(findings) > 1 {
		msg += fmt.Sprintf(" (and %d more; see simjecture verify)", len(findings)-1)
	}
	return msg
}

// refuseToResume stops a study whose record failed the check before it
// ran: paused_external_error, with the finding as the operator's message,
// the experiments a dead supervisor left running recorded as interrupted,
// and the reports written. The error carries the message (exit 1).
func (sv *Supervisor) refuseToResume(ctx context.Context, msg string) (Status, error) {
	final := StatusPausedExternalError
	err := sv.update(ctx, func(tx *store.Tx, st *SupervisorState) error {
		if err := settleRunning(tx, ExpInterrupted, reasonSupervisorStopped); err != nil {
			return err
		}
		if err := tx.ClearControl(); err != nil {
			return err
		}
		cat, text := CategoryRecord, msg
		st.Status, st.PID, st.Activity = final, 0, "stopped: "+string(final)
		st.Provider.ErrorCategory, st.Provider.Attention, st.LastError = &cat, &text, msg
		if err := appendEvent(tx, ProviderNeedsAttentionPayload{Category: cat, Attention: msg}); err != nil {
			return err
		}
		return appendEvent(tx, StudyStatePayload{Status: final, Activity: st.Activity, ReportFormat: ReportFormat})
	})
	if err != nil {
		return "", storeError("record that the record is inconsistent", err)
	}
	if err := WriteReports(ctx, sv.c, sv.s); err != nil {
		return final, err
	}
	return final, fmt.Errorf("%s: %s", sv.c.Dir, msg)
}

// completion is the status the study stops with when it is complete:
// completed, or paused_external_error when the claims that complete it
// contradict the record's history; goOn when it is not complete.
func (sv *Supervisor) completion(ctx context.Context) Status {
	if !sv.completed(ctx) {
		return goOn
	}
	msg, err := sv.recordFinding(ctx)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			sv.storeFailed("check the record", err)
		}
		return goOn
	case msg != "":
		return sv.needsAttention(ctx, CategoryRecord, msg)
	}
	return StatusCompleted
}
