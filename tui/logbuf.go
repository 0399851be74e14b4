package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// Bounds of one stream in the log viewer: it keeps the newest lines within
// both, whatever the size of the file it follows.
const (
	maxLogLines     = 10000
	maxLogBytes     = 512 << 10
	maxLogLineBytes = 4 << 10 // a longer line is cut
)

// logStream is what the viewer holds of one log file: its newest complete
// lines, the unterminated line after them, and where to read on.
type logStream struct {
	name       string
	transcript bool // lines are agent JSONL events, rendered by engine.TranscriptLines
	lines      []string
	partial    string
	bytes      int
	dropped    int // lines dropped from the front since the last reset
	missing    bool
	cur        engine.LogCursor
}

// apply adds one read to the stream and returns how many lines it dropped
// from the front (a reset drops them all).
func (s *logStream) apply(ch engine.LogChunk) int {
	before := len(s.lines)
	s.missing, s.cur = ch.Missing, ch.Next
	if ch.Reset {
		s.lines, s.partial, s.bytes, s.dropped = nil, "", 0, 0
	}
	drop := s.dropped
	if len(ch.Head) > 0 {
		s.ingest(ch.Head)
	}
	if ch.Skipped > 0 {
		s.flush()
		s.push("… " + human(ch.Skipped) + " not shown …")
	}
	s.ingest(ch.Data)
	if ch.Reset {
		return before
	}
	return s.dropped - drop
}

// ingest splits data into lines; the last one stays partial until its
// newline arrives.
func (s *logStream) ingest(data []byte) {
	text := s.partial + string(data)
	s.partial = ""
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		s.complete(text[:i])
		text = text[i+1:]
	}
	s.partial = cut(text)
}

// flush ends the partial line (before a gap marker).
func (s *logStream) flush() {
	if s.partial != "" {
		s.complete(s.partial)
		s.partial = ""
	}
}

func (s *logStream) complete(line string) {
	line = strings.TrimSuffix(line, "\r")
	if !s.transcript {
		s.push(line)
		return
	}
	for _, l := range engine.TranscriptLines(line) {
		s.push(l)
	}
}

func (s *logStream) push(line string) {
	line = sanitize(cut(line))
	s.lines = append(s.lines, line)
	s.bytes += len(line)
	n := 0
	for len(s.lines)-n > maxLogLines || (s.bytes > maxLogBytes && len(s.lines)-n > 1) {
		s.bytes -= len(s.lines[n])
		n++
	}
	if n > 0 {
		s.lines = append([]string(nil), s.lines[n:]...)
		s.dropped += n
	}
}

// sanitize drops terminal escapes and control characters (engine.IsControl:
// C0, DEL, C1), which must not reach the operator's terminal, and expands
// tabs. Unlike engine.Printable it drops them: a log's colours and
// progress-bar returns are noise, not content.
func sanitize(line string) string {
	line = ansi.Strip(strings.ReplaceAll(line, "\t", "    "))
	return strings.Map(func(r rune) rune {
		if engine.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(line, "\uFFFD"))
}

// cut bounds one line, on a rune boundary.
func cut(line string) string {
	if len(line) <= maxLogLineBytes {
		return line
	}
	i := maxLogLineBytes
	for i > 0 && line[i]&0xC0 == 0x80 {
		i--
	}
	return line[:i] + "…"
}

// count is the number of lines shown: the complete ones and the partial.
func (s *logStream) count() int {
	if s.shownPartial() {
		return len(s.lines) + 1
	}
	return len(s.lines)
}

// shownPartial says whether the partial line is shown: always in plain
// text, never while a JSONL event is still arriving.
func (s *logStream) shownPartial() bool {
	return s.partial != "" && !(s.transcript && strings.HasPrefix(strings.TrimSpace(s.partial), "{"))
}

func (s *logStream) line(i int) string {
	if i < len(s.lines) {
		return s.lines[i]
	}
	return s.partial
}
