package machine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/simjecture/simjecture/sandbox"
)

// hog holds 100 MiB (every page written) and burns CPU for up to 60 s.
const hog = `python3 - <<'EOF'
import time
b = bytearray(100 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.time()
while time.time() - t < 60:
    pass
EOF
`

// liveFigures keeps what spec.Usage received and says when the figures
// first showed the hog.
type liveFigures struct {
	mu   sync.Mutex
	last []sandbox.Usage
	ok   chan struct{}
	once sync.Once
}

func (l *liveFigures) add(u sandbox.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = append(l.last, u)
	if n := len(l.last); n >= 2 && u.CPUPercent(l.last[n-2]) > 0 && u.RSSBytes >= 100<<20 && u.RSSBytes <= 300<<20 && u.Processes >= 1 {
		l.once.Do(func() { close(l.ok) })
	}
}

func (l *liveFigures) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%+v", l.last)
}

// TestRemoteUsageReachesTheCoordinator: while a job that burns CPU and
// holds 100 MiB runs on the worker, the coordinator's spec.Usage receives
// its live figures (CPU above 0 between two of them, memory 100–300 MiB);
// once the job ended its status carries none.
func TestRemoteUsageReachesTheCoordinator(t *testing.T) {
	t.Parallel()
	w := newTestWorker(t, time.Minute)
	spec := w.spec(t, hog)
	live := &liveFigures{ok: make(chan struct{})}
	spec.Usage = live.add
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := w.m.Run(ctx, "job_usage", spec)
		done <- err
	}()
	select {
	case <-live.ok:
	case err := <-done:
		t.Fatalf("the job ended before its figures showed it (%v): %s", err, live)
	case <-time.After(30 * time.Second):
		t.Fatalf("no live figures with CPU > 0 and 100–300 MiB within 30 s: %s", live)
	}
	t.Logf("live figures: %s", live)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cancelled run: %v", err)
	}
	w.d.mu.Lock()
	j := w.d.jobs["job_usage"]
	w.d.mu.Unlock()
	if st := j.snapshot(); st.Usage != nil || st.Status == jobRunning {
		t.Errorf("an ended job's status = %s with usage %+v, want no live figures", st.Status, st.Usage)
	}
}
