package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/sandbox"
)

// studyFlags are the flags of study (contract section 2).
type studyFlags struct {
	campaign string
	req      engine.Request
	batch    bool
	jsonl    bool
	fs       *pflag.FlagSet
}

// newStudyFlags defines the flags of study; defaults may come from the
// environment (envDefaults).
func newStudyFlags(io stdio) *studyFlags {
	f := &studyFlags{fs: newFlagSet("study", io)}
	fs, r := f.fs, &f.req
	fs.StringVar(&f.campaign, "campaign", "", "campaign folder (required)")
	fs.StringVar(&r.HypothesisFile, "hypothesis-file", "", "the hypothesis (new study)")
	fs.StringVar(&r.InstructionsFile, "instructions-file", "", "the operator's instructions (new study)")
	fs.StringVar(&r.Mode, "mode", "minimal", "minimal, structured or frontier")
	fs.StringVar(&r.AgentBackend, "backend", envDefault("backend", "codex"), backendHelp())
	fs.StringVar(&r.Model, "model", envDefault("model", ""), "model (backend default)")
	fs.StringVar(&r.JudgeModel, "judge-model", "", "reviewer model (default: --model)")
	fs.StringVar(&r.Executable, "executable", "", "agent program (command backend)")
	fs.StringVar(&r.ProviderConfig, "provider-config", "", "api backend: connection file (base_url, api_key; mode 0600); claude backend: a Claude Code settings file (optional)")
	fs.StringVar(&r.ExecutionBackend, "execution-backend", envDefault("execution-backend", string(sandbox.Bubblewrap)),
		executionBackendHelp())
	fs.StringVar(&r.Capabilities, "capabilities", envDefault("capabilities", ""), "capability manifests folder")
	fs.StringVar(&r.CompletionPolicy, "completion-policy", "repair", "repair or answer")
	fs.Int64Var(&r.WallSeconds, "wall-seconds", 3600, "absolute study budget in seconds")
	fs.Int64Var(&r.TurnSeconds, "turn-seconds", 600, "allowance of one agent turn")
	fs.StringVar(&r.ContinueFrom, "continue-from", "", "a new study continuing the study in this folder (read-only)")
	fs.StringArrayVar(&r.InheritFiles, "inherit-file", nil, "with --continue-from: a file of the parent's research/ to inherit (repeatable)")
	fs.StringArrayVar(&r.Workers, "worker", nil, "a machine experiments may run on: local or a worker id (repeatable; default local)")
	fs.BoolVar(&f.batch, "batch", false, "run headless")
	fs.BoolVar(&f.jsonl, "jsonl", false, "with --batch: one JSON event per line on stdout")
	return f
}

// cmdStudy starts a new study in --campaign, or resumes the one there after
// checking the given flags against its frozen contract, and supervises it.
func cmdStudy(ctx context.Context, args []string, io stdio) int {
	f := newStudyFlags(io)
	if code, done := parse(f.fs, args, 0, io); done {
		return code
	}
	if err := checkEnvDefaults(f.fs); err != nil {
		return fail(io, err)
	}
	c, err := engine.NewCampaign(f.campaign)
	if err != nil {
		return fail(io, err)
	}
	if c.Exists() {
		// A store without its study is an interrupted creation: create it.
		err := checkResumeFlags(ctx, c, f)
		if !errors.Is(err, engine.ErrCreationInterrupted) {
			if err != nil {
				return fail(io, ownedOr(c, err))
			}
			return supervise(ctx, c, f.batch, f.jsonl, io)
		}
	}
	_, lock, err := engine.CreateStudyLocked(ctx, c, f.req, sandbox.Select)
	if err != nil {
		return fail(io, err)
	}
	return superviseLocked(ctx, c, lock, f.batch, f.jsonl, io)
}

// ownedOr is err, unless another supervisor owns the study in c: its
// record may then be one that process is still writing, and that it owns
// the study is what this one must be told.
func ownedOr(c engine.Campaign, err error) error {
	if engine.Owned(c) {
		return fmt.Errorf("%s: %w", c.Dir, engine.ErrLocked)
	}
	return err
}

// envDefaults are the study flags whose default a SIMJECTURE_DEFAULT_*
// variable sets (contract section 2), in the order their values are
// checked; check (nil: none) refuses a value, naming what it must be.
var envDefaults = []struct {
	flag, env string
	check     func(string) error
}{
	{"execution-backend", "SIMJECTURE_DEFAULT_EXECUTION_BACKEND", oneOf(executionBackendNames)},
	{"backend", "SIMJECTURE_DEFAULT_BACKEND", oneOf(engine.AgentBackendNames)},
	{"capabilities", "SIMJECTURE_DEFAULT_CAPABILITIES", isFolder},
	{"model", "SIMJECTURE_DEFAULT_MODEL", nil},
}

// envDefault is the default of a study flag: its variable's value if set,
// else def.
func envDefault(flag, def string) string {
	for _, d := range envDefaults {
		if d.flag == flag {
			return envOr(d.env, def)
		}
	}
	return def
}

// fromEnv reports whether a study flag's value came from its variable.
func fromEnv(fs *pflag.FlagSet, flag string) bool {
	for _, d := range envDefaults {
		if d.flag == flag {
			return !fs.Changed(flag) && os.Getenv(d.env) != ""
		}
	}
	return false
}

// checkEnvDefaults validates the values taken from SIMJECTURE_DEFAULT_*
// variables before use, naming the variable (an explicit flag wins).
func checkEnvDefaults(fs *pflag.FlagSet) error {
	for _, d := range envDefaults {
		if d.check == nil || !fromEnv(fs, d.flag) {
			continue
		}
		v := os.Getenv(d.env)
		if err := d.check(v); err != nil {
			return fmt.Errorf("%s=%q: %w: %w", d.env, v, err, engine.ErrInvalid)
		}
	}
	return nil
}

// oneOf refuses a value that is not one of names().
func oneOf(names func() []string) func(string) error {
	return func(v string) error {
		if slices.Contains(names(), v) {
			return nil
		}
		return fmt.Errorf("choose one of %s", strings.Join(names(), ", "))
	}
}

// isFolder refuses a path that is not a folder.
func isFolder(p string) error {
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		return errors.New("not a folder")
	}
	return nil
}

// checkResumeFlags refuses any given flag (on the command line or through
// its variable) that differs from the frozen contract, naming the field.
func checkResumeFlags(ctx context.Context, c engine.Campaign, f *studyFlags) error {
	s, err := c.Open(ctx)
	if err != nil {
		return err
	}
	if f.fs.Changed("continue-from") || f.fs.Changed("inherit-file") {
		_ = s.Close()
		return fmt.Errorf("--continue-from starts a new study, and %s already holds one; choose a new folder: %w", c.Dir, engine.ErrInvalid)
	}
	k, err := engine.LoadContract(ctx, s)
	_ = s.Close()
	if err != nil {
		return err
	}
	if err := engine.CheckFrozen(k, givenRequest(f)); err != nil {
		return err
	}
	if err := engine.CheckFrozenWorkers(k, f.req.Workers); err != nil {
		return err
	}
	if err := engine.CheckFrozenFile("hypothesis", f.req.HypothesisFile, k.HypothesisSHA256); err != nil {
		return err
	}
	return engine.CheckFrozenFile("instructions", f.req.InstructionsFile, k.InstructionsSHA256)
}

// givenRequest is the part of the request the operator chose: every other
// field is zero, which CheckFrozen does not compare.
func givenRequest(f *studyFlags) engine.Request {
	given, r := engine.Request{}, f.req
	set := func(name string, dst *string, v string) {
		if f.fs.Changed(name) || fromEnv(f.fs, name) {
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
	return given
}
