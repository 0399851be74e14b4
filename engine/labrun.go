package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// Default resources of an experiment (contract section 5).
const (
	DefaultTimeout   = 600
	DefaultMemoryMB  = 4096
	DefaultMaxFileMB = 1024
	MaxTimeout       = 86400
)

// RunArgs are the arguments of lab run.
type RunArgs struct {
	Source     string     `json:"source"`
	Capability string     `json:"capability"`
	Args       []string   `json:"args"`
	Inputs     []string   `json:"inputs"`
	Outputs    []string   `json:"outputs"`
	Timeout    *float64   `json:"timeout"`
	Key        string     `json:"key"`
	Stage      string     `json:"stage"`
	Purpose    string     `json:"purpose"`
	Commitment string     `json:"commitment"`
	Claim      string     `json:"claim"`
	Resources  *Resources `json:"resources"`
}

// Run queues an experiment and returns its receipt; the same request returns
// the same receipt.
func (l *Lab) Run(ctx context.Context, a RunArgs) (Receipt, error) {
	k, err := l.loadContract(ctx)
	if err != nil {
		return Receipt{}, err
	}
	if err := checkRunMode(k.Mode, a); err != nil {
		return Receipt{}, err
	}
	r, err := l.prepareRun(a)
	if err != nil {
		return Receipt{}, err
	}
	err = l.write(ctx, func(tx *store.Tx) error {
		if existing, err := getReceipt(tx, r.ID); err == nil {
			r = existing
			return nil
		}
		if r.Commitment != "" {
			if _, err := getClaim(tx, r.Commitment); err != nil {
				return err
			}
		}
		if slices.Contains(ScientificModes, k.Mode) {
			if r.OpSeq, err = l.runGate(tx, r); err != nil {
				return err
			}
		}
		if r.Guidance, err = tx.SteeringIDs(); err != nil {
			return err
		}
		if _, err := putReceipt(tx, r); err != nil {
			return err
		}
		return appendEvent(tx, ExperimentQueuedPayload{Experiment: r.ID, Source: r.Source, Args: r.Args})
	})
	if err != nil {
		return Receipt{}, err
	}
	return l.C.Place(r), nil
}

func (l *Lab) prepareRun(a RunArgs) (Receipt, error) {
	capSHA, err := l.checkCapability(a)
	if err != nil {
		return Receipt{}, err
	}
	outputs, err := checkOutputs(a.Outputs)
	if err != nil {
		return Receipt{}, err
	}
	res, timeout, err := l.checkLimits(a)
	if err != nil {
		return Receipt{}, err
	}
	stage := a.Stage
	if stage == "" {
		stage = "evidence"
	}
	for i, arg := range a.Args {
		if strings.ContainsRune(arg, 0) {
			return Receipt{}, fmt.Errorf("argument %d contains a NUL byte: %w", i, ErrLab)
		}
	}
	inputs, err := l.sealAll(a.Source, a.Inputs, outputs)
	if err != nil {
		return Receipt{}, err
	}
	r, err := l.newReceipt(a, stage, outputs, inputs, res, timeout, capSHA)
	return r, err
}

// checkCapability checks that a run names either a source or one of the
// study's capabilities, and returns the capability's frozen hash.
func (l *Lab) checkCapability(a RunArgs) (string, error) {
	switch {
	case a.Capability == "" && a.Source == "":
		return "", fmt.Errorf("run needs source (a program under research/) or capability: %w", ErrLab)
	case a.Capability == "":
		return "", nil
	case a.Source != "":
		return "", fmt.Errorf("run takes source or capability, not both: %w", ErrLab)
	}
	k, err := l.loadContract(context.Background())
	if err != nil {
		return "", err
	}
	sum, ok := k.CapabilityHashes[a.Capability]
	if !ok {
		return "", fmt.Errorf("capability %q is not one of this study's (%v): %w", a.Capability, sortedKeys(k.CapabilityHashes), ErrLab)
	}
	return sum, nil
}

func (l *Lab) newReceipt(a RunArgs, stage string, outputs []string, inputs map[string]string, res Resources, timeout float64, capSHA string) (Receipt, error) {
	src := ""
	if a.Source != "" {
		src, _ = cleanRel("source", a.Source)
		src = filepath.ToSlash(src)
	}
	args := a.Args
	if args == nil {
		args = []string{}
	}
	identity := map[string]any{
		"source": src, "source_sha256": inputs[src], "args": args, "inputs": inputs,
		"outputs": outputs, "capability": a.Capability, "capability_sha256": capSHA, "commitment": a.Commitment,
		"key": a.Key, "stage": stage,
	}
	if a.Claim != "" { // only in the scientific modes; minimal identities stay as they were
		identity["claim"] = a.Claim
	}
	id := shortHash("exp_", identity)
	return Receipt{
		ID: id, Status: ExpQueued, Machine: "local", Source: src, Args: args, Stage: stage,
		Capability: a.Capability, CapabilitySHA256: capSHA, Purpose: a.Purpose, Commitment: a.Commitment, Claim: a.Claim, Key: a.Key, Timeout: timeout, Resources: res,
		Inputs: inputs, Outputs: outputs, Artifacts: map[string]sandbox.Artifact{},
		MissingOutputs: []string{}, RejectedOutputs: []sandbox.Rejected{}, InputMutations: []string{},
		ArtifactDir: l.C.ArtifactDir(id), CreatedAt: time.Now().UTC(),
	}, nil
}

func checkOutputs(outs []string) ([]string, error) {
	if len(outs) == 0 {
		return nil, fmt.Errorf("run needs at least one declared output: %w", ErrLab)
	}
	seen := map[string]bool{}
	clean := make([]string, 0, len(outs))
	for _, o := range outs {
		c, err := cleanRel("output", o)
		if err != nil {
			return nil, err
		}
		if c == "stdout.log" || c == "stderr.log" {
			return nil, fmt.Errorf("output %s is reserved for the console log: %w", c, ErrLab)
		}
		if seen[c] {
			return nil, fmt.Errorf("output %s is declared twice: %w", c, ErrLab)
		}
		seen[c] = true
		clean = append(clean, filepath.ToSlash(c))
	}
	return clean, nil
}

func (l *Lab) checkLimits(a RunArgs) (Resources, float64, error) {
	res := Resources{CPUs: 1, MemoryMB: DefaultMemoryMB, MaxFileMB: DefaultMaxFileMB}
	if a.Resources != nil {
		if a.Resources.CPUs != 0 {
			res.CPUs = a.Resources.CPUs
		}
		if a.Resources.MemoryMB != 0 {
			res.MemoryMB = a.Resources.MemoryMB
		}
		if a.Resources.MaxFileMB != 0 {
			res.MaxFileMB = a.Resources.MaxFileMB
		}
	}
	if a.Resources == nil || a.Resources.MemoryMB == 0 {
		res.MemoryMB = l.defaultMemory(res.CPUs)
	}
	timeout := float64(DefaultTimeout)
	if a.Timeout != nil {
		timeout = *a.Timeout
	}
	switch {
	case timeout <= 0 || timeout > MaxTimeout:
		return res, 0, fmt.Errorf("timeout must be in (0, %d] seconds: %w", MaxTimeout, ErrLab)
	case res.CPUs < 1 || (l.Cores > 0 && res.CPUs > l.Cores):
		return res, 0, fmt.Errorf("resources.cpus must be 1 to %d (the most cores one machine of the study's pool has): %w", l.Cores, ErrLab)
	case res.MemoryMB < 16 || (l.MemMB > 0 && res.MemoryMB > l.MemMB):
		return res, 0, fmt.Errorf("resources.memory_mb must be 16 to %d (the most memory one machine of the study's pool has): %w", l.MemMB, ErrLab)
	case res.MaxFileMB < 1 || res.MaxFileMB > 4096:
		return res, 0, fmt.Errorf("resources.max_file_mb must be 1 to 4096: %w", ErrLab)
	case !fitsOne(l.sizes, res):
		return res, 0, fmt.Errorf("resources.cpus %d with resources.memory_mb %d fit no one machine of the study's pool (%s): %w",
			res.CPUs, res.MemoryMB, describeSizes(l.sizes), ErrLab)
	}
	return res, timeout, nil
}

// defaultMemory is the memory of a request that names none: the default,
// cut to the most a machine of the pool with cpus cores has.
func (l *Lab) defaultMemory(cpus int) int64 {
	mem := int64(DefaultMemoryMB)
	most := l.MemMB
	if len(l.sizes) > 0 {
		most = mostMemoryWith(l.sizes, cpus)
	}
	if most > 0 {
		mem = min(mem, most)
	}
	return mem
}

// describeSizes names each machine's cores and memory.
func describeSizes(sizes []machineSize) string {
	parts := make([]string, len(sizes))
	for i, m := range sizes {
		parts[i] = fmt.Sprintf("%s: %d cpus, %d MB", m.id, m.cpus, m.memMB)
	}
	return strings.Join(parts, "; ")
}

// sealAll resolves the source and inputs under research/, refusing paths
// outside it, and copies them into the sealed store. All are opened and
// measured first (checkInputSizes): nothing is copied for a run refused.
func (l *Lab) sealAll(source string, inputs, outputs []string) (map[string]string, error) {
	all := inputs
	if source != "" {
		all = append([]string{source}, inputs...)
	}
	open := make([]openInput, 0, len(all))
	defer func() {
		for _, o := range open {
			_ = o.f.Close()
		}
	}()
	for i, p := range all {
		what := "input"
		if i == 0 && source != "" {
			what = "source"
		}
		o, err := l.openInput(what, p, outputs)
		if err != nil {
			return nil, err
		}
		open = append(open, o)
		if what == "source" && !o.exec && !strings.HasSuffix(o.rel, ".py") && !strings.HasSuffix(o.rel, ".sh") {
			return nil, fmt.Errorf("source %s is neither .py, .sh nor executable: %w", o.rel, ErrLab)
		}
	}
	if err := checkInputSizes(open, ExperimentWorkspaceBytes); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range open {
		sum, err := sealFile(l.C.Sealed(), o.f)
		if err != nil {
			return nil, err
		}
		out[o.rel] = sum
	}
	return out, nil
}

// openInput is a source or input opened under research/ and checked, not
// yet sealed.
type openInput struct {
	what, rel string
	f         *os.File
	size      int64
	exec      bool
}

// openInput opens p under research/ without following symlinks; it is
// sealed from that handle.
func (l *Lab) openInput(what, p string, outputs []string) (openInput, error) {
	f, rel, err := openUnder(l.C.Research(), what, p)
	if err != nil {
		return openInput{}, err
	}
	rel = filepath.ToSlash(rel)
	st, err := f.Stat()
	if err == nil && slices.Contains(outputs, rel) {
		err = fmt.Errorf("output %s is also a sealed %s: %w", rel, what, ErrLab)
	}
	if err != nil {
		_ = f.Close()
		return openInput{}, err
	}
	return openInput{what: what, rel: rel, f: f, size: st.Size(), exec: st.Mode()&0o111 != 0}, nil
}

// requireOpenStudy refuses, with an [endedStudyError], work on a study
// that has ended.
func requireOpenStudy(tx *store.Tx) error {
	st, err := getState(tx)
	if err != nil {
		return err
	}
	if terminal(st.Status) {
		return endedStudyError{fmt.Errorf("study is %s; it takes no new work: %w", st.Status, ErrLab)}
	}
	return nil
}

// endedStudyError is a lab call refused because its study has ended, an
// [ErrLab]; Lab.Call gives it the same words wherever it was found.
type endedStudyError struct{ error }

func (e endedStudyError) Unwrap() error { return e.error }

func getState(tx *store.Tx) (SupervisorState, error) {
	var st SupervisorState
	b, err := tx.GetSupervisor()
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

func putState(tx *store.Tx, st SupervisorState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode supervisor state: %w", err)
	}
	return tx.PutSupervisor(b, time.Now().UTC().Format(time.RFC3339Nano))
}
