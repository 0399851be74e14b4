package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/simjecture/simjecture/provider"
)

// LogWindow bounds one read of a log file: a viewer never holds more of a
// file than this from one read, however large the file is.
const LogWindow = 256 << 10

// experimentID is the shape of an experiment id (see docs/campaign.md);
// anything else could name a folder outside the campaign.
var experimentID = regexp.MustCompile(`^exp_[0-9a-f]{24}$`)

// LogTarget names whose logs to read: an experiment, or a worker turn
// when Experiment is empty.
type LogTarget struct {
	Experiment string
	Turn       int
}

// Streams are the names of the target's logs, in the order ReadLogs
// returns them: stdout and stderr, and for a turn its prompt first.
func (t LogTarget) Streams() []string {
	if t.Experiment != "" {
		return []string{"stdout", "stderr"}
	}
	return []string{"prompt", "stdout", "stderr"}
}

// LogPlace is where a target's logs are now.
type LogPlace struct {
	Dir string // the folder; "" while an experiment has neither a run folder nor artifacts
	// Live says the files may still grow: a running experiment's run
	// folder, or a turn folder (a turn's logs grow while it runs).
	Live bool
}

// LocateLogs finds the logs of t in the campaign dir: a running
// experiment's run folder (DIR/supervisor/run/ID), else its artifact
// folder (DIR/experiments/ID); a turn's DIR/supervisor/turn-NNNNN.
func LocateLogs(dir string, t LogTarget) (LogPlace, error) {
	c := Campaign{Dir: dir}
	if t.Experiment == "" {
		if t.Turn <= 0 {
			return LogPlace{}, fmt.Errorf("turn %d: turns are numbered from 1: %w", t.Turn, ErrInvalid)
		}
		return LogPlace{Dir: filepath.Join(c.Supervisor(), fmt.Sprintf("turn-%05d", t.Turn)), Live: true}, nil
	}
	if !experimentID.MatchString(t.Experiment) {
		return LogPlace{}, fmt.Errorf("%q is not an experiment id: %w", t.Experiment, ErrInvalid)
	}
	run := filepath.Join(c.Scratch(), t.Experiment)
	if isDir(run) {
		return LogPlace{Dir: run, Live: true}, nil
	}
	if art := c.ArtifactDir(t.Experiment); isDir(art) {
		return LogPlace{Dir: art}, nil
	}
	return LogPlace{}, nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// streamFile is the file name of a stream.
func streamFile(stream string) string {
	if stream == "prompt" {
		return "prompt.txt"
	}
	return stream + ".log"
}

// LogCursor is where a reader left off in one log file.
type LogCursor struct {
	Path   string // the file the offset is in; another path starts over
	Offset int64
}

// LogChunk is one bounded read of a log file.
type LogChunk struct {
	Stream string
	// Reset says the reader must drop what it holds: the file is another
	// one than the cursor's, or it shrank.
	Reset   bool
	Missing bool   // the file does not exist (yet)
	Head    []byte // on a reset of a file larger than the window: its first half window
	Skipped int64  // bytes between Head (or the cursor) and Data that were not read
	Data    []byte
	Size    int64 // the file's size when it was read
	Next    LogCursor
}

// ReadLog reads what path holds beyond cur, at most window bytes in all.
// A file the reader has not seen is read whole when it fits the window,
// else as its first and last half windows; appended bytes are read from
// the offset, and when more than a window was appended, its last window.
func ReadLog(path string, cur LogCursor, window int) (LogChunk, error) {
	window = max(window, 2)
	ch := LogChunk{Next: cur}
	f, err := provider.OpenNoFollow(path) // a turn's folder is the agent's: no symlink, no FIFO
	if errors.Is(err, fs.ErrNotExist) {
		ch.Missing, ch.Reset = true, cur.Path != path
		ch.Next = LogCursor{Path: path}
		return ch, nil
	}
	if err != nil {
		return ch, fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ch, fmt.Errorf("stat log: %w", err)
	}
	size := st.Size()
	ch.Size, ch.Reset = size, cur.Path != path || size < cur.Offset
	off := cur.Offset
	if ch.Reset {
		off = 0
		if size > int64(window) {
			if ch.Head, err = readAt(f, 0, int64(window/2)); err != nil {
				return ch, err
			}
			off = int64(window / 2)
			window -= window / 2
		}
	}
	if size-off > int64(window) {
		ch.Skipped = size - int64(window) - off
		off = size - int64(window)
	}
	if ch.Data, err = readAt(f, off, size-off); err != nil {
		return ch, err
	}
	ch.Next = LogCursor{Path: path, Offset: off + int64(len(ch.Data))}
	return ch, nil
}

// readAt reads n bytes at off; a file cut short meanwhile gives fewer.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read log %s: %w", f.Name(), err)
	}
	return buf[:got], nil
}

// LogRead is one poll of a target's logs.
type LogRead struct {
	Place  LogPlace
	Chunks []LogChunk // one per stream, in the order of LogTarget.Streams
}

// ReadLogs locates t's logs in the campaign dir and reads each stream
// beyond its cursor (curs is indexed like t.Streams; missing entries
// start at the beginning), each read bounded by window.
func ReadLogs(dir string, t LogTarget, curs []LogCursor, window int) (LogRead, error) {
	place, err := LocateLogs(dir, t)
	if err != nil {
		return LogRead{}, err
	}
	out := LogRead{Place: place}
	for i, s := range t.Streams() {
		var cur LogCursor
		if i < len(curs) {
			cur = curs[i]
		}
		if place.Dir == "" {
			out.Chunks = append(out.Chunks, LogChunk{Stream: s, Missing: true, Reset: cur.Path != ""})
			continue
		}
		ch, err := ReadLog(filepath.Join(place.Dir, streamFile(s)), cur, window)
		if err != nil {
			return out, fmt.Errorf("read the %s of %s: %w", s, place.Dir, err)
		}
		ch.Stream = s
		out.Chunks = append(out.Chunks, ch)
	}
	return out, nil
}
