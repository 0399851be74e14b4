package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"
	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/tui"
)

// studyFlags are the flags of study (contract section 2).
type studyFlags struct {
	campaign string
	req      engine.Request
	batch    bool
	jsonl    bool
	fs       *pflag.FlagSet
}

func newFlagSet(name string, io stdio) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = func() {
		fmt.Fprintf(io.err, "Usage of simjecture %s:\n%s", name, fs.FlagUsages())
	}
	return fs
}

func parseStudyFlags(args []string, io stdio) (*studyFlags, error) {
	f := &studyFlags{fs: newFlagSet("study", io)}
	fs, r := f.fs, &f.req
	fs.StringVar(&f.campaign, "campaign", "", "campaign folder (required)")
	fs.StringVar(&r.HypothesisFile, "hypothesis-file", "", "the hypothesis (new study)")
	fs.StringVar(&r.InstructionsFile, "instructions-file", "", "the operator's instructions (new study)")
	fs.StringVar(&r.Mode, "mode", "minimal", "minimal, structured or frontier")
	fs.StringVar(&r.AgentBackend, "backend", envOr("SIMJECTURE_DEFAULT_BACKEND", "codex"), backendHelp())
	fs.StringVar(&r.Model, "model", os.Getenv("SIMJECTURE_DEFAULT_MODEL"), "model (backend default)")
	fs.StringVar(&r.JudgeModel, "judge-model", "", "reviewer model (default: --model)")
	fs.StringVar(&r.Executable, "executable", "", "agent program (command backend)")
	fs.StringVar(&r.ProviderConfig, "provider-config", "", "api backend connection file (base_url, api_key; mode 0600)")
	fs.StringVar(&r.ExecutionBackend, "execution-backend", envOr("SIMJECTURE_DEFAULT_EXECUTION_BACKEND", string(sandbox.Bubblewrap)),
		executionBackendHelp())
	fs.StringVar(&r.Capabilities, "capabilities", os.Getenv("SIMJECTURE_DEFAULT_CAPABILITIES"), "capability manifests folder")
	fs.StringVar(&r.CompletionPolicy, "completion-policy", "repair", "repair or answer")
	fs.Int64Var(&r.WallSeconds, "wall-seconds", 3600, "absolute study budget in seconds")
	fs.Int64Var(&r.TurnSeconds, "turn-seconds", 600, "allowance of one agent turn")
	fs.BoolVar(&f.batch, "batch", false, "run headless")
	fs.BoolVar(&f.jsonl, "jsonl", false, "with --batch: one JSON event per line on stdout")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("%w: %w", err, errUsage)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: %w", fs.Arg(0), errUsage)
	}
	return f, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func cmdStudy(ctx context.Context, args []string, io stdio) int {
	f, err := parseStudyFlags(args, io)
	if errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return fail(io, err)
	}
	if err := checkEnvDefaults(f.fs); err != nil {
		return fail(io, err)
	}
	c, err := engine.NewCampaign(f.campaign)
	if err != nil {
		return fail(io, err)
	}
	if c.Exists() {
		if err := checkResumeFlags(ctx, c, f); err != nil {
			return fail(io, err)
		}
	} else if _, err := engine.CreateStudy(ctx, c, f.req, sandbox.Select); err != nil {
		return fail(io, err)
	}
	return supervise(ctx, c, f.batch, f.jsonl, io)
}

// checkEnvDefaults validates the values taken from SIMJECTURE_DEFAULT_*
// variables before use, naming the variable (an explicit flag wins).
func checkEnvDefaults(fs *pflag.FlagSet) error {
	checks := []struct {
		flag, env string
		allowed   []string
	}{
		{"execution-backend", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND", executionBackendNames()},
		{"backend", "SIMJECTURE_DEFAULT_BACKEND", engine.AgentBackendNames()},
	}
	for _, c := range checks {
		v := os.Getenv(c.env)
		if v == "" || fs.Changed(c.flag) {
			continue
		}
		ok := false
		for _, a := range c.allowed {
			ok = ok || a == v
		}
		if !ok {
			return fmt.Errorf("%s=%q: choose one of %s: %w", c.env, v, strings.Join(c.allowed, ", "), engine.ErrInvalid)
		}
	}
	if d := os.Getenv("SIMJECTURE_DEFAULT_CAPABILITIES"); d != "" && !fs.Changed("capabilities") {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("SIMJECTURE_DEFAULT_CAPABILITIES=%q is not a folder: %w", d, engine.ErrInvalid)
		}
	}
	return nil
}

// checkResumeFlags refuses any explicitly given flag that differs from the
// frozen contract, naming the field.
func checkResumeFlags(ctx context.Context, c engine.Campaign, f *studyFlags) error {
	s, err := c.Open(ctx)
	if err != nil {
		return err
	}
	k, err := engine.LoadContract(ctx, s)
	_ = s.Close()
	if err != nil {
		return err
	}
	given := engine.Request{}
	r := f.req
	set := func(name string, dst *string, v string) {
		if f.fs.Changed(name) || (os.Getenv(envFor(name)) != "" && v != "") {
			*dst = v
		}
	}
	set("mode", &given.Mode, r.Mode)
	set("backend", &given.AgentBackend, r.AgentBackend)
	set("model", &given.Model, r.Model)
	set("judge-model", &given.JudgeModel, r.JudgeModel)
	set("execution-backend", &given.ExecutionBackend, r.ExecutionBackend)
	set("capabilities", &given.Capabilities, r.Capabilities)
	if given.Capabilities != "" {
		given.Capabilities, _ = filepath.Abs(given.Capabilities)
	}
	set("completion-policy", &given.CompletionPolicy, r.CompletionPolicy)
	if f.fs.Changed("provider-config") {
		given.ProviderConfig, _ = filepath.Abs(r.ProviderConfig)
	}
	if f.fs.Changed("executable") {
		given.Executable, _ = filepath.Abs(r.Executable)
	}
	if f.fs.Changed("wall-seconds") {
		given.WallSeconds = r.WallSeconds
	}
	if f.fs.Changed("turn-seconds") {
		given.TurnSeconds = r.TurnSeconds
	}
	if err := engine.CheckFrozen(k, given); err != nil {
		return err
	}
	if err := engine.CheckFrozenFile("hypothesis", r.HypothesisFile, k.HypothesisSHA256); err != nil {
		return err
	}
	return engine.CheckFrozenFile("instructions", r.InstructionsFile, k.InstructionsSHA256)
}

func envFor(flag string) string {
	switch flag {
	case "backend":
		return "SIMJECTURE_DEFAULT_BACKEND"
	case "model":
		return "SIMJECTURE_DEFAULT_MODEL"
	case "execution-backend":
		return "SIMJECTURE_DEFAULT_EXECUTION_BACKEND"
	case "capabilities":
		return "SIMJECTURE_DEFAULT_CAPABILITIES"
	}
	return "SIMJECTURE_UNSET_" + flag
}

func cmdResume(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("resume", io)
	campaign := fs.String("campaign", "", "campaign folder (required)")
	batch := fs.Bool("batch", false, "run headless")
	jsonl := fs.Bool("jsonl", false, "with --batch: one JSON event per line on stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return fail(io, fmt.Errorf("%v: %w", err, errUsage))
	}
	c, err := engine.NewCampaign(*campaign)
	if err != nil {
		return fail(io, err)
	}
	if !c.Exists() {
		return fail(io, fmt.Errorf("%s holds no simjecture study: %w", c.Dir, engine.ErrInvalid))
	}
	return supervise(ctx, c, *batch, *jsonl, io)
}

// supervise runs the study until it stops — headless with batch (or without
// a terminal), else in the dashboard — and maps its final status to the exit code.
func supervise(ctx context.Context, c engine.Campaign, batch, jsonl bool, io stdio) int {
	sup, err := openStudy(ctx, c)
	if err != nil {
		return fail(io, err)
	}
	defer sup.Close()
	var final engine.Status
	if batch || jsonl || !isTerminal(io.out) || !isTerminalReader(io.in) {
		announceBackend(io, sup.Contract())
		final, err = runHeadless(ctx, sup, jsonl, io)
	} else {
		final, err = runDashboard(ctx, sup, io)
	}
	if err != nil {
		return fail(io, err)
	}
	return exitFor(final)
}

func runHeadless(ctx context.Context, sup *engine.Supervisor, jsonl bool, io stdio) (engine.Status, error) {
	view := sup.View()
	from, _ := view.LastSeq(ctx)
	h := &tui.Headless{View: view, Stdout: io.out, Stderr: io.err, JSONL: jsonl, From: from, TTY: isTerminal(io.err)}
	viewCtx, stopView := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { _ = h.Run(viewCtx) })
	final, err := sup.Run(ctx)
	stopView()
	wg.Wait()
	_ = h.Drain(context.WithoutCancel(ctx))
	h.Finish(context.WithoutCancel(ctx), final)
	return final, err
}

func exitFor(final engine.Status) int {
	switch final {
	case engine.StatusBudgetExhausted:
		return exitBudget
	case engine.StatusPausedExternalError:
		return exitAttention
	}
	return exitOK
}

// openStudy opens a supervisor for the study in c (engine.OpenStudy) with
// this binary and this machine's cores and memory.
func openStudy(ctx context.Context, c engine.Campaign) (*engine.Supervisor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary: %w", err)
	}
	return engine.OpenStudy(ctx, c, engine.Options{SelfExe: self, Cores: runtime.NumCPU(), MemMB: memoryMB()})
}

func announceBackend(io stdio, k engine.Contract) {
	fmt.Fprintf(io.err, "Execution backend: %s", k.ExecutionBackend)
	if sandbox.IsCooperative(k.ExecutionBackend) {
		fmt.Fprintf(io.err, " — WARNING: %s", sandbox.CooperativeClause)
	}
	fmt.Fprintln(io.err)
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func memoryMB() int64 {
	var si syscallSysinfo
	if err := sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit) >> 20
}
