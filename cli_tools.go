package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
)

// parseCampaignOnly parses commands whose only flags are --campaign and a few booleans.
func parseCampaignOnly(name string, args []string, io stdio, bools ...string) (engine.Campaign, map[string]bool, int, bool) {
	fs := newFlagSet(name, io)
	campaign := fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (required)")
	vals := map[string]*bool{}
	for _, b := range bools {
		vals[b] = fs.Bool(b, false, b)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return engine.Campaign{}, nil, exitOK, false
		}
		return engine.Campaign{}, nil, fail(io, fmt.Errorf("%v: %w", err, errUsage)), false
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return c, nil, fail(io, err), false
	}
	out := map[string]bool{}
	for k, v := range vals {
		out[k] = *v
	}
	return c, out, 0, true
}

func cmdControl(command string) func(context.Context, []string, stdio) int {
	return func(ctx context.Context, args []string, io stdio) int {
		c, _, code, ok := parseCampaignOnly(command, args, io)
		if !ok {
			return code
		}
		status, err := engine.Control(ctx, c, nil, engine.Command(command))
		if err != nil {
			return fail(io, err)
		}
		if status == "requested" {
			fmt.Fprintf(io.out, "%s requested; the supervisor acts within 1 s\n", command)
		} else {
			fmt.Fprintf(io.out, "no supervisor runs this study; it is now %s\n", status)
		}
		return exitOK
	}
}

func cmdStatus(ctx context.Context, args []string, io stdio) int {
	c, flags, code, ok := parseCampaignOnly("status", args, io, "json")
	if !ok {
		return code
	}
	v, err := engine.OpenView(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer v.Close()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return fail(io, err)
	}
	if flags["json"] {
		return printJSON(io.out, snap)
	}
	fmt.Fprintln(io.out, statusText(snap))
	return exitOK
}

func statusText(s engine.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  (%s)\n", s.Campaign, s.Status, s.Activity)
	agent := s.AgentBackend
	if s.Model != "" {
		agent += "/" + s.Model
	}
	fmt.Fprintf(&b, "agent %s · execution %s · %ds left\n", agent, s.ExecutionBackend, s.RemainingSeconds)
	for _, c := range s.Claims {
		fmt.Fprintf(&b, "claim %-16s %-10s %s\n", c.ID, c.Status, truncate(c.Statement, 70))
	}
	for _, e := range s.Experiments {
		fmt.Fprintf(&b, "exp   %s %-11s %s %s\n", e.ID, e.Status, e.Source, strings.Join(e.Args, " "))
	}
	return strings.TrimRight(b.String(), "\n")
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func printJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitAttention
	}
	return exitOK
}

func cmdWatch(ctx context.Context, args []string, io stdio) int {
	c, flags, code, ok := parseCampaignOnly("watch", args, io, "jsonl")
	if !ok {
		return code
	}
	v, err := engine.OpenView(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer v.Close()
	var printed atomic.Int64
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { stopWhenIdle(wctx, c, v, &printed, stop) })
	err = v.Follow(wctx, 0, func(ev engine.Event) error {
		if flags["jsonl"] {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(io.out, "%s\n", b)
		} else {
			fmt.Fprintf(io.out, "%s %-28s %s\n", ev.Time, ev.Type, ev.Payload)
		}
		printed.Store(ev.Seq)
		return nil
	})
	stop()
	wg.Wait()
	if err != nil {
		return fail(io, err)
	}
	return exitOK
}

// stopWhenIdle ends watch once every event is printed and no supervisor
// owns the study (it stopped, or it was never running).
func stopWhenIdle(ctx context.Context, c engine.Campaign, v *engine.View, printed *atomic.Int64, stop func()) {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		last, err := v.LastSeq(ctx)
		if err == nil && printed.Load() >= last && !engine.Owned(c) {
			stop()
			return
		}
	}
}

func cmdVerify(ctx context.Context, args []string, io stdio) int {
	c, _, code, ok := parseCampaignOnly("verify", args, io)
	if !ok {
		return code
	}
	s, err := c.Open(ctx)
	if err != nil && !errors.Is(err, engine.ErrInvalid) {
		// A store SQLite cannot open is a finding about the record.
		fmt.Fprintf(io.out, "store: the database cannot be opened (%s)\n", oneLine(err))
		return exitAttention
	}
	if err != nil {
		return fail(io, err)
	}
	defer s.Close()
	findings, err := engine.Verify(ctx, c, s)
	if err != nil {
		return fail(io, err)
	}
	if len(findings) == 0 {
		fmt.Fprintln(io.out, "intact: every sealed input and artifact matches its recorded hash; the event chain is unbroken")
		return exitOK
	}
	for _, f := range findings {
		fmt.Fprintln(io.out, f)
	}
	return exitAttention
}

func cmdLab(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("lab", io)
	campaign := fs.String("campaign", os.Getenv("SIMJECTURE_STUDY"), "campaign folder (default $SIMJECTURE_STUDY)")
	fs.SetInterspersed(true)
	fs.Usage = func() { labUsage(io) }
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil || fs.NArg() != 1 {
		return labFail(io, fmt.Errorf("usage: simjecture lab CALL (one of %s) with JSON on stdin", strings.Join(engine.CallNames(), ", ")))
	}
	call := fs.Arg(0)
	spec, ok := engine.FindCall(call)
	if !ok {
		return labFail(io, fmt.Errorf("unknown lab call %q (known: %s)", call, strings.Join(engine.CallNames(), ", ")))
	}
	raw, err := io2ReadAll(io.in, 4<<20)
	if err != nil {
		return labFail(io, err)
	}
	if *campaign == "" {
		return labFail(io, fmt.Errorf("no study: set SIMJECTURE_STUDY or --campaign"))
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return labFail(io, err)
	}
	lab, err := engine.OpenLab(ctx, c, runtime.NumCPU(), memoryMB())
	if err != nil {
		return labFail(io, err)
	}
	defer lab.Close()
	result, err := lab.Call(ctx, call, raw)
	if err != nil {
		return labFail(io, err)
	}
	if spec.Wakes {
		engine.Wake(c)
	}
	_ = json.NewEncoder(io.out).Encode(map[string]any{"ok": true, "result": result})
	return exitOK
}

func labUsage(io stdio) {
	fmt.Fprintln(io.err, "Usage: simjecture lab CALL [--campaign DIR] < args.json\n\nOne JSON object on stdin; one JSON object on stdout: {\"ok\":true,\"result\":…} or {\"ok\":false,\"error\":…} (exit 1).\nThe study is $SIMJECTURE_STUDY or --campaign.\n\nCalls:")
	for _, c := range engine.Calls() {
		fmt.Fprintf(io.err, "  %-14s %s\n", c.Name, c.Description)
	}
}

func labFail(io stdio, err error) int {
	_ = json.NewEncoder(io.out).Encode(map[string]any{"ok": false, "error": oneLine(err)})
	return exitAttention
}

func io2ReadAll(r io.Reader, limit int64) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("stdin is larger than %d bytes", limit)
	}
	return b, nil
}
