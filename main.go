// Command simjecture is a terminal-first research workspace for
// computational science: an AI agent plans numerical experiments, the host
// runs each in an isolation backend and records a hash-checked receipt, and
// only an independent reviewer can accept a claim.
//
// main parses the command line, wires the packages together and maps
// outcomes to exit codes; the work is done in engine, sandbox, provider,
// store and tui.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/simjecture/simjecture/engine"
	"github.com/simjecture/simjecture/installer"
	"github.com/simjecture/simjecture/provider/scripted"
	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/sandbox/machine"
	"github.com/simjecture/simjecture/sandbox/slurm"
)

// Exit codes of study, resume and demo (contract section 2).
const (
	exitOK        = 0
	exitAttention = 1
	exitInvalid   = 2
	exitBudget    = 124
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case sandbox.HelperArg:
			os.Exit(sandbox.HelperMain(os.Args[2:]))
		case sandbox.EnclosedArg:
			os.Exit(sandbox.EnclosedMain(os.Args[2:]))
		case sandbox.GuardArg:
			os.Exit(sandbox.GuardMain(os.Args[2:]))
		case slurm.JobArg:
			os.Exit(slurm.JobMain(os.Args[2:]))
		case scripted.Command:
			os.Exit(scripted.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
	}
	// A hang-up (the terminal or the SSH session gone) pauses a study, with
	// every receipt settled, rather than killing it (signalContext). A
	// closed stdout (`study --batch --jsonl | head`) must not kill a study
	// either: SIGPIPE is caught, so a write there fails with EPIPE and the
	// output is dropped while the study goes on. Caught, not ignored: an
	// ignored signal would stay ignored in every process started from here.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// signalContext is ended by the first SIGINT, SIGTERM or SIGHUP; a hang-up
// is its cause (engine.ErrHangUp), so a study pauses then instead of being
// cancelled. Later signals are caught too, as signal.NotifyContext does.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if !signal.Ignored(syscall.SIGHUP) { // under nohup a hang-up stays ignored
		signal.Notify(sigs, syscall.SIGHUP)
	}
	go func() {
		select {
		case s := <-sigs:
			if s == syscall.SIGHUP {
				cancel(engine.ErrHangUp)
			}
			cancel(context.Canceled)
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel(context.Canceled)
	}
}

// stdio carries the standard streams to each command.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io stdio) int
}

func commands() []command {
	return []command{
		{"study", "start or resume a study in a campaign folder", cmdStudy},
		{"resume", "resume a study with its frozen contract", cmdResume},
		{"pause", "ask the supervisor of a study to pause", cmdControl("pause")},
		{"cancel", "ask the supervisor of a study to cancel", cmdControl("cancel")},
		{"steer", "queue advisory guidance for a study's next worker turn", cmdSteer},
		{"status", "print one snapshot of a study", cmdStatus},
		{"watch", "follow a study's events until it stops", cmdWatch},
		{"verify", "re-hash every input and artifact and check the event chain", cmdVerify},
		{"doctor", "probe the execution backends", cmdDoctor},
		{"lab", "the agent's interface to the harness (JSON on stdin)", cmdLab},
		{"demo", "create and run the bundled demo study (no API key, no network)", cmdDemo},
		{"tui", "the terminal UI (home screen, or --campaign DIR)", cmdTUI},
		{"mcp", "serve the lab calls of a study as an MCP server on stdio", cmdMCP},
		{"install", "install for a dedicated non-root account (run as root)", cmdInstall},
		{"bench", "benchmark tasks: list, prepare, grade, leaderboard", cmdBench},
		{"worker", "execution workers: add, prepare, check, list, remove", cmdWorker},
	}
}

func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		return cmdTUI(ctx, args, io)
	}
	if args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		usage(io.out)
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], io)
		}
	}
	return fail(io, fmt.Errorf("unknown command %q (see simjecture --help): %w", args[0], engine.ErrInvalid))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "simjecture — a research workspace for computational science\n\nUsage: simjecture COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nEvery command has --help. Exit codes: 0 done, 1 needs attention or failed, 2 invalid input, 124 deadline passed.")
}

// fail prints a one-line error and returns its exit code.
func fail(io stdio, err error) int {
	fmt.Fprintf(io.err, "simjecture: %s\n", oneLine(inFlags(err)))
	switch {
	case errors.Is(err, engine.ErrInvalid), errors.Is(err, engine.ErrLocked), errors.Is(err, errUsage):
		return exitInvalid
	}
	return exitAttention
}

var errUsage = errors.New("usage")

// sentinels are the errors whose words only say the exit code: a message
// ending in them ends before them.
var sentinels = []error{engine.ErrInvalid, errUsage, engine.ErrLab, machine.ErrInvalid, installer.ErrInvalid}

// oneLine is the message of err on one line, without the sentinel suffixes
// its exit code already says.
func oneLine(err error) string {
	msg := err.Error()
	for stripped := true; stripped; {
		stripped = false
		for _, s := range sentinels {
			if suffix := ": " + s.Error(); len(msg) > len(suffix) && strings.HasSuffix(msg, suffix) {
				msg, stripped = strings.TrimSuffix(msg, suffix), true
			}
		}
	}
	return engine.PrintableLine(msg)
}
