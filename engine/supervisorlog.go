package engine

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// maxLogBytes bounds supervisor.log; the previous one is kept as supervisor.log.1.
const maxLogBytes = 1 << 20

// logFile is a bounded, append-only log. Each write opens the file, so a
// folder removed or replaced under a long-running supervisor is recreated
// and no descriptor is held between the (rare) entries.
type logFile struct {
	path string
	max  int64
	mu   sync.Mutex
}

// Write appends p, moving a file that would grow past max aside first.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return 0, fmt.Errorf("supervisor log: %w", err)
	}
	if st, err := os.Stat(l.path); err == nil && st.Size()+int64(len(p)) > l.max {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return 0, fmt.Errorf("rotate supervisor log: %w", err)
		}
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("supervisor log: %w", err)
	}
	n, err := f.Write(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// newSupervisorLog is the logger of the study in c: DIR/supervisor/supervisor.log.
func newSupervisorLog(c Campaign) *slog.Logger {
	return slog.New(slog.NewTextHandler(&logFile{path: c.SupervisorLog(), max: maxLogBytes}, nil))
}
