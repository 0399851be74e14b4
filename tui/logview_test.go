package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

const runningExp = "exp_7414d181768254f796d579ab"

func (f *fakeEngine) Logs(_ context.Context, t engine.LogTarget, curs []engine.LogCursor) (engine.LogRead, error) {
	f.calls.Add(1)
	if f.logs == nil {
		return engine.LogRead{}, nil
	}
	return f.logs(t, curs), nil
}

// memLogs is an in-memory study folder for the viewer: the content of
// each stream, read from the cursor like engine.ReadLogs reads a file.
type memLogs struct {
	dir     string
	live    bool
	streams map[string]*strings.Builder
}

func newMemLogs(live bool, content map[string]string) *memLogs {
	m := &memLogs{dir: "/work/studies/kepler/supervisor/run/" + runningExp, live: live, streams: map[string]*strings.Builder{}}
	for k, v := range content {
		m.streams[k] = &strings.Builder{}
		m.streams[k].WriteString(v)
	}
	return m
}

func (l *memLogs) appendTo(stream, text string) {
	if l.streams[stream] == nil {
		l.streams[stream] = &strings.Builder{}
	}
	l.streams[stream].WriteString(text)
}

func (l *memLogs) read(t engine.LogTarget, curs []engine.LogCursor) engine.LogRead {
	dir := l.dir
	if t.Experiment == "" {
		dir = fmt.Sprintf("/work/studies/kepler/supervisor/turn-%05d", t.Turn)
	}
	r := engine.LogRead{Place: engine.LogPlace{Dir: dir, Live: l.live}}
	for i, s := range t.Streams() {
		var cur engine.LogCursor
		if i < len(curs) {
			cur = curs[i]
		}
		path := dir + "/" + s
		b, ok := l.streams[s]
		if !ok {
			r.Chunks = append(r.Chunks, engine.LogChunk{Stream: s, Missing: true, Reset: cur.Path != path, Next: engine.LogCursor{Path: path}})
			continue
		}
		text := b.String()
		off := cur.Offset
		if cur.Path != path {
			off = 0
		}
		r.Chunks = append(r.Chunks, engine.LogChunk{Stream: s, Reset: cur.Path != path, Data: []byte(text[off:]),
			Size: int64(len(text)), Next: engine.LogCursor{Path: path, Offset: int64(len(text))}})
	}
	return r
}

func ticks(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "tick %d\n", i)
	}
	return b.String()
}

// openLogOn opens the dashboard at w×h, focuses pane p (with tab), moves
// the selection down `down` rows and presses enter.
func openLogOn(t *testing.T, f *fakeEngine, p pane, down, w, h int) Model {
	t.Helper()
	m := openDash(t, f, false, w, h)
	for m.dash.focus != p {
		m, _ = step(t, m, keyMsg("tab"))
	}
	for range down {
		m, _ = step(t, m, keyMsg("j"))
	}
	m, cmd := step(t, m, keyMsg("enter"))
	if !m.dash.log.open {
		t.Fatalf("enter on %s row %d did not open the log viewer:\n%s", paneNames[p], down, m.View())
	}
	return feed(t, m, cmd)
}

// poll sends the viewer's tick and feeds the read it asks for.
func poll(t *testing.T, m Model) Model {
	t.Helper()
	m, cmd := step(t, m, logTickMsg{gen: m.dash.gen, seq: m.dash.log.seq})
	if cmd == nil {
		t.Fatal("an open viewer's tick asked for no read")
	}
	return feed(t, m, cmd)
}

func lastBodyLine(t *testing.T, view string) string {
	t.Helper()
	lines := strings.Split(view, "\n")
	for i := len(lines) - 2; i >= 2; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}

func TestLogViewerFollowsNewLinesAndFStopsIt(t *testing.T) {
	t.Parallel()
	f := fixture()
	logs := newMemLogs(true, map[string]string{"stdout": ticks(1, 3)})
	f.logs = logs.read
	m := openLogOn(t, f, paneExperiments, 0, 80, 24)
	if got := lastBodyLine(t, m.View()); got != "tick 3" {
		t.Fatalf("the newest line = %q, want tick 3:\n%s", got, m.View())
	}
	logs.appendTo("stdout", ticks(4, 4))
	m = poll(t, m)
	if got := lastBodyLine(t, m.View()); got != "tick 4" {
		t.Fatalf("after a poll the newest line = %q, want tick 4", got)
	}
	m, _ = step(t, m, keyMsg("f"))
	logs.appendTo("stdout", ticks(5, 50))
	m = poll(t, m)
	v := m.View()
	if strings.Contains(v, "tick 50") || !strings.Contains(v, "[paused]") || !strings.Contains(v, "of 50") {
		t.Fatalf("with following stopped the view must stay put and count the new lines:\n%s", v)
	}
	m, _ = step(t, m, keyMsg("f"))
	if got := lastBodyLine(t, m.View()); got != "tick 50" || !strings.Contains(m.View(), "[following]") {
		t.Fatalf("f again must follow to the newest line, got %q:\n%s", got, m.View())
	}
}

func TestLogViewerScrolling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys []string
		want string // the position indicator
	}{
		{"opens at the end", nil, "lines 80–100 of 100"},
		{"g goes to the top", []string{"g"}, "lines 1–21 of 100"},
		{"j scrolls one line", []string{"g", "j"}, "lines 2–22 of 100"},
		{"k at the top stays", []string{"g", "k", "k"}, "lines 1–21 of 100"},
		{"page down", []string{"g", " "}, "lines 21–41 of 100"},
		{"page up from the end", []string{"pgup"}, "lines 60–80 of 100"},
		{"j past the end stops at the end", []string{"k", "j", "j", "j", "j"}, "lines 80–100 of 100"},
		{"G resumes following", []string{"g", "G"}, "[following] lines 80–100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.logs = newMemLogs(false, map[string]string{"stdout": ticks(1, 100), "stderr": ""}).read
			m := openLogOn(t, f, paneExperiments, 0, 80, 24)
			for _, k := range tt.keys {
				msg := keyMsg(k)
				if k == "pgup" {
					msg = tea.KeyMsg{Type: tea.KeyPgUp}
				}
				m, _ = step(t, m, msg)
			}
			if v := m.View(); !strings.Contains(v, tt.want) {
				t.Fatalf("after %v the view lacks %q:\n%s", tt.keys, tt.want, v)
			}
		})
	}
}

// TestLogViewerDropsStaleMessages: reads and ticks of a viewer that was
// closed, or replaced by another, change nothing and schedule nothing.
func TestLogViewerDropsStaleMessages(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.logs = newMemLogs(true, map[string]string{"stdout": ticks(1, 3)}).read
	m := openLogOn(t, f, paneExperiments, 0, 80, 24)
	first := m.dash.log.seq
	m, _ = step(t, m, keyMsg("esc"))
	if m.dash.log.open {
		t.Fatal("esc did not close the viewer")
	}
	if _, cmd := step(t, m, logTickMsg{gen: m.dash.gen, seq: first}); cmd != nil {
		t.Fatal("a closed viewer's tick asked for a read")
	}
	m, cmd := step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	stale := logReadMsg{gen: m.dash.gen, seq: first, read: engine.LogRead{Chunks: []engine.LogChunk{{Reset: true, Data: []byte("stale\n")}}}}
	m, cmd = step(t, m, stale)
	if cmd != nil || strings.Contains(m.View(), "stale") || !strings.Contains(m.View(), "tick 3") {
		t.Fatalf("the first viewer's read reached the second:\n%s", m.View())
	}
	other := logReadMsg{gen: m.dash.gen + 1, seq: m.dash.log.seq, read: stale.read}
	if m, _ = step(t, m, other); strings.Contains(m.View(), "stale") {
		t.Fatal("another dashboard's read reached the viewer")
	}
}

// TestLogViewerUpdateDoesNoIO drives every viewer message and key through
// Update against the counting fake: only the Cmds read.
func TestLogViewerUpdateDoesNoIO(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.logs = newMemLogs(true, map[string]string{"stdout": ticks(1, 40), "stderr": "warn\n"}).read
	m := openLogOn(t, f, paneExperiments, 0, 80, 24)
	gen, seq := m.dash.gen, m.dash.log.seq
	read := f.logs(engine.LogTarget{Experiment: runningExp}, nil)
	msgs := []tea.Msg{logTickMsg{gen: gen, seq: seq}, logReadMsg{gen: gen, seq: seq, read: read}, tea.WindowSizeMsg{Width: 120, Height: 36},
		keyMsg("j"), keyMsg("k"), keyMsg("g"), keyMsg("G"), keyMsg("f"), keyMsg("f"), keyMsg("tab"), keyMsg("tab"), keyMsg("tab"),
		tea.KeyMsg{Type: tea.KeyPgUp}, tea.KeyMsg{Type: tea.KeyPgDown}, tea.KeyMsg{Type: tea.KeyHome}, tea.KeyMsg{Type: tea.KeyEnd},
		logTickMsg{gen: gen, seq: seq + 9}, keyMsg("esc"), logTickMsg{gen: gen, seq: seq}, keyMsg("l"), tea.WindowSizeMsg{Width: 80, Height: 24}}
	before := f.calls.Load()
	for i, msg := range msgs {
		m, _ = step(t, m, msg)
		_ = m.View()
		if got := f.calls.Load(); got != before {
			t.Fatalf("message %d (%T) made %d engine call(s) inside Update", i, msg, got-before)
		}
	}
	if !m.dash.log.open {
		t.Fatal("l on the Experiments pane did not reopen the viewer")
	}
	run(m.dash.log.readCmd())
	if f.calls.Load() != before+1 {
		t.Fatal("the read Cmd made no engine call; the counter is broken")
	}
}

// TestLogViewerShowsATurnTranscript opens a turn from its turn_started
// row in Activity: Codex JSONL renders as readable lines.
func TestLogViewerShowsATurnTranscript(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.logs = newMemLogs(true, turnLogs).read
	m := openDash(t, f, false, 80, 24)
	m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{event(42, engine.EvTurnStarted, engine.TurnStartedPayload{Role: "worker", Turn: 3})}})
	for m.dash.focus != paneEvents {
		m, _ = step(t, m, keyMsg("tab"))
	}
	m, cmd := step(t, m, keyMsg("enter"))
	m = feed(t, m, cmd)
	if m.dash.log.target != (engine.LogTarget{Turn: 3}) {
		t.Fatalf("enter on turn_started opened %+v", m.dash.log.target)
	}
	v := m.View()
	for _, want := range []string{"Turn 3 · transcript", "── prompt ──", "You are the worker.", "agent: I will queue the", "$ python3 kepler.py  (exit 0)", "tool: lab.run"} {
		if !strings.Contains(v, want) {
			t.Fatalf("the transcript lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, `"type"`) {
		t.Fatalf("raw JSONL reached the transcript:\n%s", v)
	}
}

var turnLogs = map[string]string{
	"prompt": "You are the worker.\nTest the hypothesis.\n",
	"stdout": `{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"type":"agent_message","text":"I will queue the leapfrog run."}}
{"type":"item.completed","item":{"type":"command_execution","command":"python3 kepler.py","aggregated_output":"dE = 1e-5\n","exit_code":0}}
{"type":"item.completed","item":{"type":"mcp_tool_call","server":"lab","tool":"run","arguments":{"source":"kepler.py"}}}
{"type":"turn.completed","usage":{"input_tokens":1200,"output_tokens":80}}
`,
	"stderr": "",
}

func TestLogViewerGolden(t *testing.T) {
	t.Parallel()
	sizes := [][2]int{{80, 24}, {120, 36}}
	for _, sz := range sizes {
		for _, c := range []struct {
			name string
			logs map[string]string
			p    pane
			down int
		}{
			{"Experiment", map[string]string{"stdout": ticks(1, 60), "stderr": "warning: step size large\n"}, paneExperiments, 0},
			{"Turn", turnLogs, paneEvents, 0},
		} {
			t.Run(fmt.Sprintf("%s%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				f := fixture()
				f.logs = newMemLogs(true, c.logs).read
				m := openDash(t, f, false, sz[0], sz[1])
				m, _ = step(t, m, eventsMsg{gen: m.dash.gen, events: []engine.Event{event(42, engine.EvTurnStarted, engine.TurnStartedPayload{Turn: 3})}})
				for m.dash.focus != c.p {
					m, _ = step(t, m, keyMsg("tab"))
				}
				for range c.down {
					m, _ = step(t, m, keyMsg("j"))
				}
				m, cmd := step(t, m, keyMsg("enter"))
				m = feed(t, m, cmd)
				v := m.View()
				checkFrame(t, v, sz[0], sz[1])
				golden(t, "logview_"+strings.ToLower(c.name)+fmt.Sprintf("_%dx%d", sz[0], sz[1]), v)
			})
		}
	}
}

// checkFrame asserts the view is exactly h lines of at most w cells.
func checkFrame(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("the view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Fatalf("line %d is %d cells wide, over %d: %q", i, ansi.StringWidth(l), w, l)
		}
	}
}

// TestLogViewerResizes keeps the frame exact at every size, tiny ones too.
func TestLogViewerResizes(t *testing.T) {
	t.Parallel()
	f := fixture()
	f.logs = newMemLogs(true, map[string]string{"stdout": strings.Repeat("a long line of output that wraps ", 20) + "\n" + ticks(1, 30)}).read
	m := openLogOn(t, f, paneExperiments, 0, 120, 36)
	for _, sz := range [][2]int{{80, 24}, {40, 10}, {200, 60}, {20, 6}} {
		m, _ = step(t, m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, m.View(), sz[0], sz[1])
		if got := lastBodyLine(t, m.View()); got != "tick 30" {
			t.Fatalf("at %v the newest line = %q", sz, got)
		}
	}
}

// TestLogStreamIsBounded feeds 4 MiB of lines: the stream keeps at most
// maxLogBytes, counts what it dropped, and a paused view keeps its line.
func TestLogStreamIsBounded(t *testing.T) {
	t.Parallel()
	var s logStream
	line := strings.Repeat("x", 95) + "\n" // 96 bytes
	total := 0
	for range 64 {
		dropped := s.apply(engine.LogChunk{Data: []byte(strings.Repeat(line, 682))}) // 64 KiB
		total += dropped
	}
	if s.bytes > maxLogBytes || len(s.lines) > maxLogLines {
		t.Fatalf("the stream holds %d bytes in %d lines, over the bounds", s.bytes, len(s.lines))
	}
	if total != s.dropped || total+len(s.lines) != 64*682 {
		t.Fatalf("dropped %d (counted %d) + kept %d != %d lines", total, s.dropped, len(s.lines), 64*682)
	}
	s.apply(engine.LogChunk{Data: []byte("\x1b[31mred\x1b[0m\tand\rbell\a\n")})
	if got := s.lines[len(s.lines)-1]; got != "red    andbell" {
		t.Fatalf("escapes reached the view: %q", got)
	}
}

// TestLogViewerSaysWhereTheLogsAre: running, finished and queued
// experiments each say what the viewer shows.
func TestLogViewerSaysWhereTheLogsAre(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		read  engine.LogRead
		wants []string
	}{
		{"running", engine.LogRead{Place: engine.LogPlace{Dir: "/work/studies/kepler/supervisor/run/" + runningExp, Live: true},
			Chunks: []engine.LogChunk{{Reset: true, Data: []byte("step 70 of 90\n")}, {Missing: true}}},
			[]string{"running · live", "supervisor/run/" + runningExp, "step 70 of 90"}},
		{"finished", engine.LogRead{Place: engine.LogPlace{Dir: "/work/studies/kepler/experiments/" + runningExp},
			Chunks: []engine.LogChunk{{Reset: true, Head: []byte("first\n"), Skipped: 3 << 20, Data: []byte("last\n")}, {}}},
			[]string{"finished · head and tail", "experiments/" + runningExp, "first", "… 3.0M not shown …", "last"}},
		{"queued", engine.LogRead{Chunks: []engine.LogChunk{{Missing: true}, {Missing: true}}},
			[]string{"not started", "(the experiment has not started yet)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fixture()
			f.logs = func(engine.LogTarget, []engine.LogCursor) engine.LogRead { return tt.read }
			m := openLogOn(t, f, paneExperiments, 0, 100, 30)
			v := m.View()
			for _, want := range tt.wants {
				if !strings.Contains(v, want) {
					t.Fatalf("the view lacks %q:\n%s", want, v)
				}
			}
		})
	}
}
