package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
)

// envTestHelper selects a test-only mode of the test binary: "run" reads a
// Spec as JSON on stdin and prints the Result, "probe" and "select" print
// the Report for the backend named in os.Args[1].
const envTestHelper = "SIMJECTURE_SANDBOX_TEST_HELPER"

// envNoGate=1 sets forceNoGate in a test helper mode's process.
const envNoGate = "SIMJECTURE_SANDBOX_TEST_NOGATE"

// raceNoExitSleep turns off the race runtime's one-second sleep at exit in
// the test binaries this one starts (hosts as nobody, runners); other
// builds ignore it.
const raceNoExitSleep = "GORACE=atexit_sleep_ms=0"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		runnerBallast = touched(48 << 20)
		os.Exit(HelperMain(os.Args[2:]))
	}
	switch firstArg(os.Args[1:]) {
	case GuardArg:
		os.Exit(GuardMain(os.Args[2:]))
	case EnclosedArg:
		os.Exit(EnclosedMain(os.Args[2:]))
	}
	if mode := os.Getenv(envTestHelper); mode != "" {
		os.Exit(testHelperMode(mode))
	}
	if _, ok := os.LookupEnv("GORACE"); !ok {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0") // for the runners it starts
	}
	// Like a supervisor, cap this test process's tree (fork-bomb tests), where writable.
	_ = LimitProcesses(MaxProcesses)
	code := m.Run()
	CloseRunners()
	cleanupShared()
	os.Exit(code)
}

// runAtOnce runs specs at the same time and returns their results in the
// same order.
func runAtOnce(specs []Spec) []runOutput {
	outs := make([]runOutput, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() {
			res, err := Run(signalContext(), spec)
			outs[i] = runOutput{Result: res, Err: errString(err)}
		})
	}
	wg.Wait()
	return outs
}

func testHelperMode(mode string) int {
	forceNoGate = os.Getenv(envNoGate) == "1"
	var out any
	switch mode {
	case "runmany": // a JSON array of steps, each an array of Specs run at once; one step after the other, on one runner
		var steps [][]Spec
		if err := json.NewDecoder(os.Stdin).Decode(&steps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		var outs []runOutput
		for _, step := range steps {
			outs = append(outs, runAtOnce(step)...)
		}
		CloseRunners()
		Settle()
		out = outs
	case "run":
		var spec Spec
		if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		res, err := Run(signalContext(), spec)
		CloseRunners()
		Settle()
		out = runOutput{Result: res, Err: errString(err)}
	case "usage":
		out = runWithUsage()
	case "probe":
		out = Probe(signalContext(), Backend(os.Args[1]))
	case guardParentMode:
		return guardParent(os.Args[1:])
	case "select":
		out = Select(signalContext(), Backend(os.Args[1]))
	default:
		fmt.Fprintln(os.Stderr, "unknown test helper mode", mode)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

type runOutput struct {
	Result Result
	Err    string
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runnerBallast makes this binary's runners as large as a production one
// and more (the simjecture binary's is 15–25 MiB resident): an experiment
// forked from a runner starts with the runner's resident set counted, which
// TestPeakRSSIsTheExperiments must not see in a trivial run's peak.
var runnerBallast []byte

// touched is n bytes, each page written (resident).
func touched(n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		b[i] = 1
	}
	return b
}
