package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/simjecture/simjecture/engine"
)

// rowCount is how many selectable rows pane p holds.
func (m dashModel) rowCount(p pane) int {
	s := m.state.Snapshot
	switch p {
	case paneClaims:
		return len(s.Claims)
	case paneExperiments:
		return len(s.Experiments)
	case paneProcesses:
		return len(m.procs)
	case paneReviews:
		return len(s.Reviews)
	case paneEvents:
		return len(m.events)
	}
	return len(m.studyLines(max(20, m.width/2)))
}

// experimentTotal is the number of experiments of the whole study (the
// snapshot holds only the newest engine.ViewExperiments).
func (m dashModel) experimentTotal() int {
	n := 0
	for _, c := range m.state.Snapshot.ExperimentCounts {
		n += c
	}
	return n
}

// studyLines is the Study pane: hypothesis, activity, deadline, provider.
func (m dashModel) studyLines(w int) []string {
	s := m.state.Snapshot
	var out []string
	add := func(label, v string) { out = append(out, label+v) }
	hyp := wrap("Hypothesis: "+m.hypothesis(), w)
	if len(hyp) > 3 {
		hyp = append(hyp[:2], hyp[2]+" …")
	}
	out = append(out, hyp...)
	if r := m.roleText(); r != "" {
		add("Mode: ", r)
	}
	add("Activity: ", s.Activity)
	if d := m.deadlineText(); d != "" {
		add("Deadline: ", d)
	}
	add("Provider: ", m.providerLine())
	agent := s.AgentBackend
	if s.Model != "" {
		agent += "/" + s.Model
	}
	add("Agent: ", fmt.Sprintf("%s · policy %s · turn %d", agent, s.CompletionPolicy, s.Turn))
	if m.state.RunErr != "" {
		add("Supervisor error: ", m.state.RunErr)
	}
	return out
}

func (m dashModel) hypothesis() string {
	for _, c := range m.state.Snapshot.Claims {
		if c.ID == engine.RootClaim {
			return c.Statement
		}
	}
	return ""
}

// providerLine is the provider state, in the headless line's words.
func (m dashModel) providerLine() string {
	p := m.state.Snapshot.Provider
	switch {
	case p.Attention != nil:
		return "needs attention: " + *p.Attention
	case p.NextRetryAt != nil:
		return fmt.Sprintf("Reconnecting provider (attempt %d, %ds to retry)", p.ConsecutiveFailures,
			max(0, int(p.NextRetryAt.Sub(m.now).Seconds()+0.5)))
	case p.RetryCount > 0 && m.state.Snapshot.Status != engine.StatusRunning:
		return fmt.Sprintf("%s · %d retries, %.0f s waited", m.state.Snapshot.Status, p.RetryCount, p.WaitSeconds)
	case p.RetryCount > 0:
		return fmt.Sprintf("ok (%d retries, %.0fs waited)", p.RetryCount, p.WaitSeconds)
	}
	return "ok"
}

// deadlineText is the absolute deadline, with the time left while the
// study can still run ("" when the study has none).
func (m dashModel) deadlineText() string {
	s := m.state.Snapshot
	if s.Deadline.IsZero() {
		return ""
	}
	at := s.Deadline.UTC().Format("15:04:05") + " UTC"
	if engine.Terminal(s.Status) {
		return at + " · study " + string(s.Status)
	}
	return at + " · " + dur(max(0, s.Deadline.Sub(m.now))) + " left"
}

// expStatus is the experiment's status as the operator should read it: a
// running receipt in an interrupted study (no live supervisor owns it) is
// interrupted, as the engine will record when the study resumes.
func (m dashModel) expStatus(e engine.Receipt) engine.ExpStatus {
	if e.Status == engine.ExpRunning && m.interrupted() {
		return engine.ExpInterrupted
	}
	return e.Status
}

// liveWall is the wall time of a running experiment so far.
func (m dashModel) liveWall(e engine.Receipt) (time.Duration, bool) {
	if m.expStatus(e) != engine.ExpRunning || e.StartedAt == nil || m.now.IsZero() {
		return 0, false
	}
	return max(0, m.now.Sub(*e.StartedAt)), true
}

// wallDetail is the wall time line of the experiment detail.
func (m dashModel) wallDetail(e engine.Receipt) string {
	if d, ok := m.liveWall(e); ok {
		return dur(d) + " so far (running)"
	}
	if e.WallSeconds == nil && m.expStatus(e) == engine.ExpInterrupted {
		return "unknown: the supervisor stopped while it ran"
	}
	return optFloat(e.WallSeconds, "%.2f s")
}

// statusStyle colours a status word (its text stays: NO_COLOR loses nothing).
func (m dashModel) statusStyle(status string) lipgloss.Style { return statusStyle(m.c.Styles, status) }

func statusStyle(st Styles, status string) lipgloss.Style {
	switch status {
	case "failed", "timed_out", "falsified", "paused_external_error", "unreadable":
		return st.Bad
	case "succeeded", "supported", "completed":
		return st.Good
	case "running", "running ●", "retrying":
		return st.Warn
	}
	return lipgloss.NewStyle()
}

// padStyled pads s to w cells, then styles it, so columns line up.
func padStyled(st lipgloss.Style, s string, w int) string {
	return st.Render(s + strings.Repeat(" ", max(0, w-ansi.StringWidth(s))))
}

// claimNode is a claim with its depth in the tree.
type claimNode struct {
	claim engine.Claim
	depth int
}

// orderedClaims is the claim tree, depth first from root, children by age.
func (m dashModel) orderedClaims() []claimNode {
	byParent := map[string][]engine.Claim{}
	for _, c := range m.state.Snapshot.Claims {
		parent := ""
		if c.Parent != nil {
			parent = *c.Parent
		}
		byParent[parent] = append(byParent[parent], c)
	}
	for _, k := range byParent {
		sort.SliceStable(k, func(i, j int) bool { return k[i].CreatedAt.Before(k[j].CreatedAt) })
	}
	var out []claimNode
	seen := map[string]bool{}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, c := range byParent[parent] {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			out = append(out, claimNode{claim: c, depth: depth})
			walk(c.ID, depth+1)
		}
	}
	walk("", 0)
	return out
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func oneLine(s string) string { return engine.Printable(strings.Join(strings.Fields(s), " ")) }

// experimentHeader and experimentList are the experiments table.
func (m dashModel) experimentHeader(narrow bool) string {
	return m.experimentCols("ID", "STATUS", "BACKEND", "WALL", "PEAK MEM", narrow) + " CLAIM        PURPOSE"
}

func (m dashModel) experimentCols(id, status, backend, wall, peak string, narrow bool) string {
	bw := 19
	if narrow {
		bw = 12
	}
	sw := max(len("STATUS"), m.exps.statusWidth)
	return fmt.Sprintf("%-12s %s %-*s %7s %8s", id, padStyled(m.statusStyle(status), status, sw), bw, backend, wall, peak)
}

// experimentList is the experiments table's rows, each rendered when shown.
func (m dashModel) experimentList(narrow bool) rowList {
	l := rowList{n: len(m.exps.order), row: func(i int) string { return m.experimentRow(m.exps.order[i], narrow) }}
	if m.exps.gen != 0 {
		l.data, l.live = m.exps.gen, m.exps.live
		if narrow {
			l.shape = 1
		}
	}
	return l
}

func (m dashModel) experimentRow(e engine.Receipt, narrow bool) string {
	wall, peak := "—", "—"
	if e.WallSeconds != nil {
		wall = seconds(*e.WallSeconds)
	} else if d, ok := m.liveWall(e); ok {
		wall = dur(d)
	}
	if e.PeakRSSBytes != nil {
		peak = human(*e.PeakRSSBytes)
	}
	b := string(e.IsolationBackend)
	if narrow {
		b = shortBackend(b)
	}
	if b == "" {
		b = "—"
	}
	if e.Machine != "" && e.Machine != "local" {
		b += "@" + e.Machine // a worker's run: the machine beside its backend
	}
	status := string(m.expStatus(e))
	if status == string(engine.ExpRunning) && e.Remote != nil && e.Remote.State == "queued" {
		status = "queued" // a scheduler's job still waiting on its machine
	}
	return m.experimentCols(shortID(e.ID), status, b, wall, peak, narrow) + " " + storyCols(e)
}

func shortBackend(b string) string {
	if d, ok := engine.DescribeBackend(b); ok {
		return d.Column
	}
	return b
}

// eventList is the event log, newest first, each line rendered when shown.
func (m dashModel) eventList() rowList {
	evs := m.events
	return rowList{n: len(evs), row: func(i int) string { return eventLine(evs[len(evs)-1-i]) }, data: eventsOf(evs)}
}

// seconds formats a wall time: 0.06s, 12.3s, 4m05s.
func seconds(f float64) string {
	switch {
	case f < 10:
		return fmt.Sprintf("%.2fs", f)
	case f < 60:
		return fmt.Sprintf("%.1fs", f)
	}
	return dur(time.Duration(f * float64(time.Second)))
}
