package installer

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// reporter prints the installer's progress: numbered steps, indented
// details, and the final summary.
type reporter struct {
	w io.Writer
	n int
}

func (r *reporter) step(format string, args ...any) {
	r.n++
	fmt.Fprintf(r.w, "[%d] %s\n", r.n, fmt.Sprintf(format, args...))
}

func (r *reporter) detail(format string, args ...any) {
	fmt.Fprintf(r.w, "    %s\n", fmt.Sprintf(format, args...))
}

// indented returns a writer that prints each line as a detail.
func (r *reporter) indented() *lineWriter { return &lineWriter{r: r} }

// lineWriter splits a command's output into detail lines. It is safe for
// the two copying goroutines os/exec uses for stdout and stderr.
type lineWriter struct {
	mu  sync.Mutex
	r   *reporter
	buf bytes.Buffer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.r.detail("%s", line[:len(line)-1])
	}
}

func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.r.detail("%s", l.buf.String())
		l.buf.Reset()
	}
}

// summary is what the final block lists.
type summary struct {
	rows     [][2]string
	warnings []string
}

func (s *summary) add(key, format string, args ...any) {
	s.rows = append(s.rows, [2]string{key, fmt.Sprintf(format, args...)})
}

// warn adds a warning once.
func (s *summary) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, w := range s.warnings {
		if w == msg {
			return
		}
	}
	s.warnings = append(s.warnings, msg)
}

func (s *summary) print(w io.Writer) {
	fmt.Fprintln(w, "\nSummary")
	for _, row := range s.rows {
		fmt.Fprintf(w, "  %-14s %s\n", row[0]+":", row[1])
	}
	for _, warning := range s.warnings {
		fmt.Fprintf(w, "WARNING: %s\n", warning)
	}
}
