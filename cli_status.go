package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/simjecture/simjecture/engine"
)

// cmdStatus prints one snapshot of a study, as text or (--json) contract
// section 6's JSON.
func cmdStatus(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("status", io)
	campaign := campaignFlag(fs)
	asJSON := fs.Bool("json", false, "print the snapshot as JSON")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	v, err := engine.OpenView(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer v.Close()
	if *asJSON { // streamed: memory does not grow with the study
		if err := v.WriteSnapshotJSON(ctx, engine.TerminalSafeJSON(io.out)); err != nil {
			return fail(io, err)
		}
		return exitOK
	}
	snap, err := v.RecentSnapshot(ctx, statusTextExperiments)
	if err != nil {
		return fail(io, err)
	}
	fmt.Fprintln(io.out, statusText(snap))
	return exitOK
}

// statusTextExperiments is how many of the newest experiments text status
// lists; the counts cover all, and status --json lists every one.
const statusTextExperiments = 20

// statusText renders s, whose Experiments are the newest of the study and
// ExperimentCounts all of them.
func statusText(s engine.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  (%s)\n", s.Campaign, s.Status, s.Activity)
	agent := s.AgentBackend
	if s.Model != "" {
		agent += "/" + s.Model
	}
	left := fmt.Sprintf("%ds left", s.RemainingSeconds)
	if engine.Terminal(s.Status) {
		left = "ended (" + string(s.Status) + ")"
	}
	fmt.Fprintf(&b, "agent %s · execution %s · %s\n", agent, s.ExecutionBackend, left)
	for _, c := range s.Claims {
		fmt.Fprintf(&b, "claim %-16s %-10s %s\n", c.ID, c.Status, truncate(c.Statement, 70))
	}
	total := 0
	for _, n := range s.ExperimentCounts {
		total += n
	}
	if total > len(s.Experiments) {
		fmt.Fprintf(&b, "experiments %d (%s); the newest %d (status --json lists every one):\n", total, countsText(s.ExperimentCounts), len(s.Experiments))
	}
	for _, e := range s.Experiments {
		fmt.Fprintf(&b, "exp   %s %-11s %s %s\n", e.ID, e.Status, e.Source, strings.Join(e.Args, " "))
	}
	return engine.PrintableText(strings.TrimRight(b.String(), "\n")) // statements come from agents
}

// countsText is "N status, …" in the order an experiment goes through
// its statuses, statuses with none left out.
func countsText(counts map[engine.ExpStatus]int) string {
	var parts []string
	for _, st := range engine.ExpStatuses() {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return strings.Join(parts, ", ")
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}
