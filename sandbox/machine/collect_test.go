package machine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// TestReleaseRemovesCollectedJobs: once its outputs arrived hash-checked,
// a job's folder on the worker is gone, and so is its input blob unless
// another unreleased job still names it; the same job id is still answered
// with its outcome (also by a new daemon), and never run again.
func TestReleaseRemovesCollectedJobs(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, time.Minute)
	spec := w.spec(t, "echo $$ > out.txt\n")
	ctx := context.Background()
	blob := w.d.blobPath(spec.Sealed[0].SHA256)

	// A second job with the same input, staged but not run, holds the blob.
	held, _ := jobRequest("job_held", sandbox.Bubblewrap, spec)
	var cr createReply
	if err := w.m.sess.call(ctx, opCreate, held, &cr); err != nil {
		t.Fatal(err)
	}
	first, _, err := w.m.Run(ctx, "job_one", spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.d.root, "jobs", "job_one")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the collected job's folder is still there (%v)", err)
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("the blob another job names was removed: %v", err)
	}

	spec.ArtifactDir = filepath.Join(w.dir, "artifacts2")
	if _, _, err := w.m.Run(ctx, "job_held", spec); err != nil {
		t.Fatalf("Run of the held job: %v", err)
	}
	if _, err := os.Stat(blob); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the blob no job names any more is still there (%v)", err)
	}

	// The released id keeps its outcome, here and in a daemon started afresh.
	spec.ArtifactDir = filepath.Join(w.dir, "artifacts")
	again, _, err := w.m.Run(ctx, "job_one", spec)
	if err != nil || !again.StartedAt.Equal(first.StartedAt) {
		t.Errorf("the released job again = %+v, %v; want its first outcome", again, err)
	}
	fresh := &daemon{root: w.d.root, jobs: map[string]*job{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	fresh.reconcile()
	fresh.reconcileCollected()
	j, ok := fresh.jobs["job_one"]
	if !ok || !j.state.Collected || j.state.Status != jobFinished || j.state.Result == nil {
		t.Fatalf("a new daemon's view of the released job: %+v (known %v)", j, ok)
	}
}
