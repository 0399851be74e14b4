package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// paneRows are the lines of scr between the title line holding title and
// the next line holding next (the panes stacked below it).
func paneRows(scr, title, next string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(scr, "\n") {
		switch {
		case strings.Contains(l, title):
			in = true
		case in && strings.Contains(l, next):
			return out
		case in:
			out = append(out, l)
		}
	}
	return out
}

// selected is the selected row (marked ›) among rows, or "".
func selected(rows []string) string {
	for _, l := range rows {
		if strings.HasPrefix(strings.TrimSpace(l), "›") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// activityRows are the lines of the Activity pane (the right column of the
// last row of panes).
func activityRows(scr string) []string {
	var out []string
	for _, l := range paneRows(scr, "Activity (", "\x00") {
		if i := strings.LastIndex(l, "│"); i >= 0 {
			out = append(out, l[i+len("│"):])
		}
	}
	return out
}

// labRun queues an experiment of the study in dir through the lab
// protocol and returns its id.
func labRun(t *testing.T, dir string, req map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(req)
	r := sj(t, string(b), "lab", "run", "--campaign", dir)
	var out struct {
		OK     bool `json:"ok"`
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || !out.OK {
		t.Fatalf("lab run: %v: %s", err, r)
	}
	return out.Result.ID
}

// labNote records a note in the study in dir.
func labNote(t *testing.T, dir, text string) {
	t.Helper()
	if r := sj(t, fmt.Sprintf(`{"statement":%q}`, text), "lab", "note", "--campaign", dir); r.code != 0 {
		t.Fatalf("lab note: %s", r)
	}
}

// TestTUIProcessMonitorGroupsByExperiment: with two experiments running in
// Bubblewrap, the process monitor shows each as its program, named by the
// experiment, with the Bubblewrap launchers folded into it (no bwrap row of
// its own, and named once although it runs as two processes); enter on the second one's row selects that experiment in the
// Experiments pane. Before any review, Reviews shows its empty state
// without a selection marker.
func TestTUIProcessMonitorGroupsByExperiment(t *testing.T) {
	t.Parallel()
	c, _ := busyStudy(t)
	second := labRun(t, c.dir, map[string]any{"source": "sleep.sh", "args": []string{c.marker}, "outputs": []string{"out.txt"},
		"timeout": 600, "key": "second", "purpose": "the second sleeper"})
	waitFor(t, 20*time.Second, "two running experiments", func() bool {
		snap, err := tryStatus(t, c.dir)
		return err == nil && len(snap.withStatus("running")) == 2
	})
	short := second[:12]
	s := tuiScreenSized(t, 160, 40, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "RUNNING", "2 running")
	s.keys("Tab", "Tab") // Claims → Experiments → Processes
	scr := s.waitFor(10*time.Second, "both experiments' programs in the process monitor", func(scr string) bool {
		n := 0
		for _, l := range paneRows(scr, "Processes (", "Reviews") {
			if strings.Contains(l, "exp_") && strings.Contains(l, ": sh /work/sleep.sh") && strings.Contains(l, "bwrap⟩") {
				n++
			}
		}
		return strings.Contains(scr, "▶ Processes") && n == 2
	})
	t.Logf("the process monitor:\n%s", strings.Join(paneRows(scr, "Processes (", "Reviews"), "\n"))
	for _, l := range paneRows(scr, "Processes (", "Reviews") {
		if f := strings.Fields(strings.TrimLeft(l, " ›")); len(f) > 1 && strings.Contains(f[1], "bwrap") {
			t.Errorf("a Bubblewrap launcher has a row of its own: %q", l)
		}
		if strings.Contains(l, "bwrap › bwrap") {
			t.Errorf("Bubblewrap's two processes are named twice: %q", l)
		}
	}
	procSel := func(scr string) string { return selected(paneRows(scr, "Processes (", "Reviews")) }
	for i := 0; !strings.Contains(procSel(s.capture()), short+":"); i++ {
		if i == 12 {
			t.Fatalf("no process row of %s to select:\n%s", short, s.capture())
		}
		prev := procSel(s.capture())
		s.keys("j")
		s.waitFor(5*time.Second, "the selection to move", func(scr string) bool { return procSel(scr) != prev })
	}
	s.keys("Enter")
	s.waitFor(5*time.Second, "enter to select "+short+" in Experiments", func(scr string) bool {
		sel := selected(paneRows(scr, "Experiments (", "Processes"))
		return strings.Contains(scr, "▶ Experiments") && strings.HasPrefix(sel, "› "+short)
	})
	s.keys("Tab", "Tab") // Experiments → Processes → Reviews
	scr = s.waitText(5*time.Second, "▶ Reviews", "no reviews yet")
	if strings.Contains(scr, "› no reviews yet") {
		t.Errorf("the selection marker sits on the empty-state text:\n%s", scr)
	}
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUIActivityKeepsItsSelection: Activity follows new events while its
// selection is at the top; moved down, its selected row stays on its event
// as new events arrive above it; back at the top it follows again.
func TestTUIActivityKeepsItsSelection(t *testing.T) {
	t.Parallel()
	c, _ := busyStudy(t)
	s := tuiScreenSized(t, 120, 36, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "RUNNING")
	s.keys("Tab", "Tab", "Tab", "Tab") // Claims → … → Activity
	s.waitText(5*time.Second, "▶ Activity")
	selectedOn := func(what, text string) string {
		return s.waitFor(10*time.Second, what, func(scr string) bool {
			return strings.Contains(selected(activityRows(scr)), text)
		})
	}
	labNote(t, c.dir, "anchor one")
	selectedOn("the selection to follow the new note", "note: anchor one")
	s.keys("j", "j")
	scr := s.waitFor(5*time.Second, "the selection two rows down", func(scr string) bool {
		rows := activityRows(scr)
		return len(rows) > 2 && strings.HasPrefix(strings.TrimSpace(rows[2]), "›")
	})
	held := selected(activityRows(scr))
	labNote(t, c.dir, "anchor two")
	scr = s.waitText(10*time.Second, "note: anchor two")
	if got := selected(activityRows(scr)); got != held {
		t.Fatalf("a new event moved the selection from %q to %q:\n%s", held, got, scr)
	}
	if rows := activityRows(scr); !strings.HasPrefix(strings.TrimSpace(rows[3]), "›") {
		t.Errorf("the selected event should be one row lower, under the new one:\n%s", strings.Join(rows, "\n"))
	}
	s.keys("k", "k", "k", "k", "k")
	s.waitFor(5*time.Second, "the selection back at the top", func(scr string) bool {
		rows := activityRows(scr)
		return len(rows) > 0 && strings.HasPrefix(strings.TrimSpace(rows[0]), "›")
	})
	labNote(t, c.dir, "anchor three")
	selectedOn("the selection to follow new events again", "note: anchor three")
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUIResumeRefusalReadsWholeAt80Columns: `r` on a paused study whose
// lock another process holds says why it could not resume, wrapped above
// the status bar at 80 columns rather than cut.
func TestTUIResumeRefusalReadsWholeAt80Columns(t *testing.T) {
	t.Parallel()
	c, sup := busyStudy(t)
	if r := sj(t, "", "pause", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("pause: %s", r)
	}
	sup.wait(t, 10*time.Second)
	// A POSIX record lock conflicts with the supervisor's open-file lock.
	holder := exec.Command("python3", "-c", "import fcntl,sys; f=open(sys.argv[1],'r+'); "+
		"fcntl.lockf(f, fcntl.LOCK_EX|fcntl.LOCK_NB); print('locked', flush=True); sys.stdin.read()", c.dir+"/.simjecture.lock")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatalf("python3 to hold the lock: %v", err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = holder.Wait() })
	if b := make([]byte, 6); func() bool { n, _ := out.Read(b); return string(b[:n]) != "locked" }() {
		t.Fatal("the lock holder did not take the lock")
	}
	s := tuiScreenSized(t, 80, 24, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "PAUSED", "r resume")
	s.keys("r")
	scr := s.waitFlat(10*time.Second, "could not resume: "+c.dir+": another supervisor owns this study")
	t.Logf("the refusal at 80 columns:\n%s", scr)
	s.keys("q")
	s.waitExit(5 * time.Second)
}

// TestTUIRunningExperimentDetailCountsItsWallTime: the detail of an
// experiment opened while it waits in the queue follows it when it starts:
// status running and its wall time so far, counting up like the list's,
// never `unknown`.
func TestTUIRunningExperimentDetailCountsItsWallTime(t *testing.T) {
	t.Parallel()
	c, _ := busyStudy(t)
	first, err := tryStatus(t, c.dir)
	if err != nil || len(first.withStatus("running")) != 1 {
		t.Fatalf("want one running experiment: %v", err)
	}
	// Two cpus on a host of two, with one taken: it waits for the first.
	waiting := labRun(t, c.dir, map[string]any{"source": "sleep.sh", "args": []string{c.marker}, "outputs": []string{"out.txt"},
		"timeout": 600, "key": "waiting", "purpose": "waits for the cores", "resources": map[string]any{"cpus": 2}})
	s := tuiScreenSized(t, 120, 36, tuiEnv(), bin, "tui", "--campaign", c.dir)
	s.waitText(10*time.Second, "RUNNING", "1 running", "1 queued")
	s.keys("Tab", "j", "Enter") // Experiments: running first, then the queued one
	s.waitText(5*time.Second, "Experiment "+waiting, "queued")
	if r := sj(t, fmt.Sprintf(`{"experiment":%q,"reason":"make room"}`, first.withStatus("running")[0].ID),
		"lab", "cancel", "--campaign", c.dir); r.code != 0 {
		t.Fatalf("lab cancel: %s", r)
	}
	wall := regexp.MustCompile(`wall time\s+(\d+)s so far \(running\)`)
	scr := s.waitFor(20*time.Second, "the detail to show it running with its wall time", func(scr string) bool {
		return wall.MatchString(scr)
	})
	if strings.Contains(scr, "wall time unknown") {
		t.Fatalf("a running experiment's detail says its wall time is unknown:\n%s", scr)
	}
	before := wall.FindStringSubmatch(scr)[1]
	s.waitFor(10*time.Second, "the detail's wall time to count up", func(scr string) bool {
		m := wall.FindStringSubmatch(scr)
		return m != nil && m[1] != before
	})
	s.keys("Escape") // alone: ESC and q in one read would be alt+q
	s.waitGone(5*time.Second, "so far (running)")
	s.keys("q")
	s.waitExit(5 * time.Second)
}
