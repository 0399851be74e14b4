package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/engine/benchtask"
	"github.com/simjecture/simjecture/engine/jsonerr"
	"github.com/simjecture/simjecture/sandbox"
)

// benchSubcommands are the subcommands of bench (contract section 15).
var benchSubcommands = []struct {
	name, summary string
	run           func(ctx context.Context, args []string, io stdio) int
}{
	{"list", "the tasks of the bundled pack", benchList},
	{"prepare", "write a task into a new folder (TASK --output DIR)", benchPrepare},
	{"grade", "grade a submission by re-running its reduce.py in the sandbox", benchGrade},
	{"leaderboard", "aggregate grade reports per model and agent", benchLeaderboard},
	{"run", "run trials of a task with an agent backend, graded after every turn", benchRun},
}

// cmdBench runs a benchmark-task subcommand.
func cmdBench(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprintln(io.err, "Usage: simjecture bench SUBCOMMAND [flags] (each has --help)")
		for _, s := range benchSubcommands {
			fmt.Fprintf(io.err, "  %-12s %s\n", s.name, s.summary)
		}
		if len(args) == 0 {
			return exitInvalid
		}
		return exitOK
	}
	for _, s := range benchSubcommands {
		if s.name == args[0] {
			return s.run(ctx, args[1:], io)
		}
	}
	return fail(io, fmt.Errorf("unknown bench subcommand %q (list, prepare, grade, leaderboard, run): %w", args[0], errUsage))
}

// benchFail prints a benchmark error; setup errors exit 2.
func benchFail(io stdio, err error) int {
	if errors.Is(err, benchtask.ErrSetup) {
		msg := strings.TrimSuffix(err.Error(), ": "+benchtask.ErrSetup.Error())
		return fail(io, fmt.Errorf("%s: %w", msg, errUsage))
	}
	return fail(io, err)
}

func benchList(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("bench list", io)
	asJSON := fs.Bool("json", false, "print JSON")
	if code, done := parse(fs, args, 0, io); done {
		return code
	}
	type task struct {
		ID               string `json:"id"`
		Title            string `json:"title"`
		SuggestedSeconds int    `json:"suggested_seconds"`
	}
	var tasks []task
	for _, t := range benchtask.Tasks() {
		tasks = append(tasks, task{t.ID, t.Title, t.SuggestedSeconds})
	}
	if *asJSON {
		return printJSON(io.out, map[string]any{"pack": benchtask.PackName, "version": benchtask.PackVersion, "tasks": tasks})
	}
	fmt.Fprintf(io.out, "%s %s\n", benchtask.PackName, benchtask.PackVersion)
	for _, t := range tasks {
		fmt.Fprintf(io.out, "  %-16s %5d s  %s\n", t.ID, t.SuggestedSeconds, t.Title)
	}
	return exitOK
}

// taskArg is the one positional TASK argument.
func taskArg(fs *pflag.FlagSet) (string, error) {
	if fs.NArg() != 1 {
		return "", fmt.Errorf("name one task (%s): %w", strings.Join(benchtask.TaskIDs(), ", "), errUsage)
	}
	return fs.Arg(0), nil
}

func benchPrepare(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("bench prepare TASK", io)
	out := fs.String("output", "", "the new task folder; must not exist (required)")
	if code, done := parse(fs, args, 1, io); done {
		return code
	}
	id, err := taskArg(fs)
	if err == nil && *out == "" {
		err = fmt.Errorf("--output DIR is required: %w", errUsage)
	}
	if err != nil {
		return fail(io, err)
	}
	b, err := benchtask.Prepare(id, *out)
	if err != nil {
		return benchFail(io, err)
	}
	fmt.Fprintf(io.out, "prepared %s in %s (trial %s): read %s, deliver reduce.py, result.json and FINDINGS.md\n",
		b.Task, *out, b.TrialID, filepath.Join(*out, benchtask.TaskFile))
	return exitOK
}

func benchGrade(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("bench grade TASK", io)
	submission := fs.String("submission", "", "the submission folder (required)")
	output := fs.String("output", "", "write the grade report (JSON) to this file (required)")
	backend := fs.String("execution-backend", string(sandbox.Bubblewrap), "where reduce.py runs: "+executionBackendHelp())
	model := fs.String("model", "", "the model that produced the submission (recorded in the report)")
	agent := fs.String("agent", "", "the agent that produced the submission (recorded in the report)")
	metadata := fs.String("metadata", "", "a JSON file of trial figures: model, agent, wall_seconds, first_pass_seconds, cost_usd")
	timeout := fs.Float64("timeout", benchtask.DefaultTimeout.Seconds(), "seconds reduce.py may take over all cases")
	if code, done := parse(fs, args, 1, io); done {
		return code
	}
	req, err := gradeRequest(fs.Changed, *submission, *output, *backend, *metadata, *timeout)
	if err == nil {
		req.Task, err = taskArg(fs)
	}
	if err != nil {
		return benchFail(io, err)
	}
	if fs.Changed("model") {
		req.Trial.Model = *model
	}
	if fs.Changed("agent") {
		req.Trial.Agent = *agent
	}
	defer sandbox.CloseRunners()
	rep, err := benchtask.Grade(ctx, req)
	if err != nil {
		return benchFail(io, err)
	}
	if err := benchtask.WriteJSON(*output, rep); err != nil {
		return fail(io, err)
	}
	printJSON(io.out, rep)
	if !rep.Passed {
		return exitAttention
	}
	return exitOK
}

// gradeRequest checks grade's flags before anything runs.
func gradeRequest(changed func(string) bool, submission, output, backend, metadata string, timeout float64) (benchtask.GradeRequest, error) {
	switch {
	case submission == "":
		return benchtask.GradeRequest{}, fmt.Errorf("--submission DIR is required: %w", errUsage)
	case output == "":
		return benchtask.GradeRequest{}, fmt.Errorf("--output FILE is required: %w", errUsage)
	}
	if err := checkOutputFile(output); err != nil {
		return benchtask.GradeRequest{}, err
	}
	req, err := gradeSettings(backend, timeout)
	req.Submission = submission
	if err != nil || !changed("metadata") {
		return req, err
	}
	data, err := os.ReadFile(metadata)
	if err != nil {
		return req, fmt.Errorf("--metadata: %v: %w", err, errUsage)
	}
	if err := json.Unmarshal(data, &req.Trial); err != nil {
		return req, fmt.Errorf("--metadata %s: not a trial's JSON object: %s: %w", metadata, jsonerr.Problem(data, err), errUsage)
	}
	req.Trial.TrialID = ""
	return req, nil
}

// gradeSettings checks --execution-backend and --timeout, shared by grade
// and run, and names this binary for the sandbox's helper.
func gradeSettings(backend string, timeout float64) (benchtask.GradeRequest, error) {
	if !(timeout > 0 && timeout <= 86400) {
		return benchtask.GradeRequest{}, fmt.Errorf("--timeout must be between 0 and 86400 seconds, got %v: %w", timeout, errUsage)
	}
	b, err := sandbox.ParseBackend(backend)
	if err != nil {
		return benchtask.GradeRequest{}, fmt.Errorf("--execution-backend: %v: %w", err, errUsage)
	}
	self, err := os.Executable()
	if err != nil {
		return benchtask.GradeRequest{}, fmt.Errorf("this binary's path: %w", err)
	}
	return benchtask.GradeRequest{Backend: b, SelfExe: self, Timeout: time.Duration(timeout * float64(time.Second))}, nil
}

func benchLeaderboard(_ context.Context, args []string, io stdio) int {
	fs := newFlagSet("bench leaderboard", io)
	reports := fs.StringArray("reports", nil, "grade report files or folders (repeatable; further paths may follow)")
	output := fs.String("output", "", "also write the leaderboard (JSON) to this file")
	minimum := fs.Int("minimum-trials", benchtask.DefaultMinimumTrials, "rows with fewer trials are provisional")
	if code, done := parse(fs, args, 1<<20, io); done {
		return code
	}
	paths := append(*reports, fs.Args()...)
	if !fs.Changed("reports") {
		return fail(io, fmt.Errorf("--reports F… is required: %w", errUsage))
	}
	if *output != "" {
		if err := checkOutputFile(*output); err != nil {
			return fail(io, err)
		}
	}
	sources, err := benchtask.LoadReports(paths)
	if err != nil {
		return benchFail(io, err)
	}
	board, err := benchtask.Leaderboard(sources, *minimum)
	if err != nil {
		return benchFail(io, err)
	}
	if *output != "" {
		if err := benchtask.WriteJSON(*output, board); err != nil {
			return fail(io, err)
		}
	}
	return printJSON(io.out, board)
}

func benchRun(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("bench run TASK", io)
	var r engine.Request
	output := fs.String("output", "", "a new folder for the trials, their logs and grades (required)")
	trials := fs.Int("trials", 1, "how many trials, one after another")
	fs.StringVar(&r.AgentBackend, "backend", envOr("SIMJECTURE_DEFAULT_BACKEND", "codex"), backendHelp())
	fs.StringVar(&r.Model, "model", envOr("SIMJECTURE_DEFAULT_MODEL", ""), "model (backend default)")
	fs.StringVar(&r.Executable, "executable", "", "agent program (command backend)")
	fs.StringVar(&r.ProviderConfig, "provider-config", "", "api backend connection file (base_url, api_key; mode 0600)")
	backend := fs.String("execution-backend", string(sandbox.Bubblewrap), "where grading runs reduce.py: "+executionBackendHelp())
	wall := fs.Int64("wall-seconds", 0, "budget of each trial (default: the task's suggested seconds)")
	turn := fs.Int64("turn-seconds", 300, "allowance of one agent turn (at most the wall seconds)")
	timeout := fs.Float64("timeout", benchtask.DefaultTimeout.Seconds(), "seconds reduce.py may take over all cases of one grading")
	if code, done := parse(fs, args, 1, io); done {
		return code
	}
	req, err := runRequest(fs, *output, *backend, *wall, *turn, *timeout)
	if err == nil {
		err = engine.CheckAgentRequest(&r)
	}
	if err == nil {
		req.Agent, err = engine.NewAgent(engine.Contract{AgentBackend: r.AgentBackend, Model: r.Model,
			Executable: r.Executable, ProviderConfig: r.ProviderConfig}, req.Grade.SelfExe)
	}
	if err != nil {
		return benchFail(io, err)
	}
	req.Trials, req.Model = *trials, r.Model
	req.Progress = func(line string) { fmt.Fprintln(io.err, line) }
	defer sandbox.CloseRunners()
	reports, err := benchtask.RunTrials(ctx, req)
	if err != nil {
		return benchFail(io, err)
	}
	var sources []benchtask.Source
	for i, rep := range reports {
		sources = append(sources, benchtask.Source{From: fmt.Sprintf("trial-%d", i+1), Report: rep})
	}
	board, err := benchtask.Leaderboard(sources, benchtask.DefaultMinimumTrials)
	if err != nil {
		return benchFail(io, err)
	}
	return printJSON(io.out, board)
}

// runRequest checks run's own flags before anything is written; an
// unchanged --turn-seconds is cut to the wall seconds.
func runRequest(fs *pflag.FlagSet, output, backend string, wall, turn int64, timeout float64) (benchtask.RunRequest, error) {
	id, err := taskArg(fs)
	if err != nil {
		return benchtask.RunRequest{}, err
	}
	t, err := benchtask.Find(id)
	if err != nil {
		return benchtask.RunRequest{}, err
	}
	if output == "" {
		return benchtask.RunRequest{}, fmt.Errorf("--output DIR is required: %w", errUsage)
	}
	if wall == 0 {
		wall = int64(t.SuggestedSeconds)
	}
	if !fs.Changed("turn-seconds") {
		turn = min(turn, wall)
	}
	grade, err := gradeSettings(backend, timeout)
	return benchtask.RunRequest{Task: t.ID, Output: output, Grade: grade,
		Wall: time.Duration(wall) * time.Second, Turn: time.Duration(turn) * time.Second}, err
}

// checkOutputFile refuses, before any work, an --output that cannot take
// the JSON file: a folder, something other than a regular file, or a path
// whose folder is missing or not writable (the file is written under a
// temporary name beside it and renamed into place).
func checkOutputFile(output string) error {
	if info, err := os.Stat(output); err == nil && info.IsDir() {
		return fmt.Errorf("--output %s: is a folder; name the file to write: %w", output, errUsage)
	} else if err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("--output %s: is not a regular file: %w", output, errUsage)
	}
	dir := filepath.Dir(output)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("--output %s: its folder does not exist: %w", output, errUsage)
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("--output %s: cannot write in its folder: %v: %w", output, err, errUsage)
	}
	return nil
}
