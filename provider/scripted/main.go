package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Environment variables the supervisor sets for a `command` agent.
const (
	envRole  = "SIMJECTURE_ROLE"
	envBin   = "SIMJECTURE_BIN"
	envStudy = "SIMJECTURE_STUDY"
	envTurn  = "SIMJECTURE_TURN"
	envClaim = "SIMJECTURE_CLAIM"
)

// maxPacketBytes bounds the review packet read from stdin.
const maxPacketBytes = 64 << 20

// Main runs one turn of the scripted agent, as `simjecture __scripted-agent`.
// SIMJECTURE_ROLE selects the worker or the reviewer. It returns the exit
// code: 0 on success, 1 on a failed turn, 2 on invalid usage.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Getenv, args, stdin, stdout, stderr)
}

// run is Main with its environment injected.
func run(ctx context.Context, getenv func(string) string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintf(stdout, "usage: simjecture %s (started by the supervisor with %s=worker|reviewer)\n", Command, envRole)
			return 0
		}
		fmt.Fprintf(stderr, "scripted-agent: unexpected argument %q\n", args[0])
		return 2
	}
	switch role := getenv(envRole); role {
	case "worker":
		return runWorker(ctx, getenv, stderr)
	case "reviewer", "judge":
		return runReviewer(stdin, stdout, stderr)
	case roleFalsifier, roleRepair, roleResearcher:
		return runScience(ctx, getenv, stderr)
	default:
		fmt.Fprintf(stderr, "scripted-agent: %s must be worker, reviewer, judge, falsifier, repair_scientist or researcher, got %q\n", envRole, role)
		return 2
	}
}

// runScience runs one worker turn of the scientific modes.
func runScience(ctx context.Context, getenv func(string) string, stderr io.Writer) int {
	return runTurn(getenv, stderr, func(bin, dir string) error {
		w := &ScienceWorker{Lab: ExecLab{Bin: bin}, Dir: dir, Study: getenv(envStudy), Role: getenv(envRole), Claim: getenv(envClaim), Log: stderr}
		return w.Run(ctx)
	})
}

// runWorker runs one worker turn in the current directory.
func runWorker(ctx context.Context, getenv func(string) string, stderr io.Writer) int {
	return runTurn(getenv, stderr, func(bin, dir string) error {
		w := &Worker{Lab: ExecLab{Bin: bin}, Dir: dir, Study: getenv(envStudy), Turn: getenv(envTurn), Log: stderr}
		return w.Run(ctx)
	})
}

// runTurn runs one worker turn in the current directory with the lab at
// $SIMJECTURE_BIN, and maps its outcome to an exit code.
func runTurn(getenv func(string) string, stderr io.Writer, turn func(bin, dir string) error) int {
	bin := getenv(envBin)
	if bin == "" {
		fmt.Fprintf(stderr, "scripted-agent: %v: %s is not set\n", ErrEnv, envBin)
		return 2
	}
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "scripted-agent: working directory: %v\n", err)
		return 1
	}
	if err := turn(bin, dir); err != nil {
		fmt.Fprintf(stderr, "scripted-agent: error: %v\n", err)
		return 1
	}
	return 0
}

// runReviewer reads the packet, judges it and prints the verdict last.
func runReviewer(stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(stdin, maxPacketBytes))
	if err != nil {
		fmt.Fprintf(stderr, "scripted-agent: read review packet: %v\n", err)
		return 1
	}
	var stage struct {
		Stage string `json:"stage"`
	}
	if json.Unmarshal(data, &stage) == nil && stage.Stage != "" {
		return printScience(data, stdout, stderr)
	}
	p, err := readPacket(bytes.NewReader(data))
	if err != nil {
		fmt.Fprintf(stderr, "scripted-agent: %v\n", err)
		return 1
	}
	v := Review(p)
	line, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(stderr, "scripted-agent: encode verdict: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "scripted-agent: review of %s: %s %s\n", p.ClaimID, v.Decision, v.Disposition)
	fmt.Fprintf(stdout, "%s\n%s\n", v.Rationale, line)
	return 0
}

// printScience judges a scientific packet and prints the verdict last.
func printScience(data []byte, stdout, stderr io.Writer) int {
	var p SciencePacket
	if err := json.Unmarshal(data, &p); err != nil {
		fmt.Fprintf(stderr, "scripted-agent: decode review packet: %v\n", err)
		return 1
	}
	v := ReviewScience(p)
	line, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintf(stderr, "scripted-agent: encode verdict: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "scripted-agent: %s review of %s v%d: %s\n", p.Stage, v.ClaimID, v.ContractVersion, v.Decision)
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}

// readPacket decodes the review packet from stdin.
func readPacket(r io.Reader) (Packet, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPacketBytes))
	if err != nil {
		return Packet{}, fmt.Errorf("read review packet: %w", err)
	}
	var p Packet
	if err := json.Unmarshal(data, &p); err != nil {
		return Packet{}, fmt.Errorf("decode review packet: %w", err)
	}
	return p, nil
}
