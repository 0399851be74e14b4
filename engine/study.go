package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// PolicyRepair is the default completion policy, and the only one of the
// scientific modes (contract section 12).
const PolicyRepair = "repair"

// Modes and completion policies.
var (
	Modes    = []string{"minimal", "structured", "frontier"}
	Policies = []string{PolicyRepair, "answer"}
)

// Request is what the operator asks for when starting a study; fields left
// empty on resume are taken from the frozen contract.
type Request struct {
	HypothesisFile   string
	InstructionsFile string
	Mode             string
	AgentBackend     string
	Model            string
	JudgeModel       string
	Executable       string
	ProviderConfig   string
	ExecutionBackend string
	Capabilities     string
	CompletionPolicy string
	WallSeconds      int64
	TurnSeconds      int64
	ContinueFrom     string   // a new study continuing the study in this folder (contract section 14)
	InheritFiles     []string // with ContinueFrom: files relative to the parent's research/
	Workers          []string // the machines experiments may run on (default: local only)
}

// Prober resolves an execution backend request ("auto" included).
type Prober func(ctx context.Context, b sandbox.Backend) sandbox.Report

type operatorFile struct {
	text []byte
	sha  string
}

func readOperatorFile(what string, f Field, path string) (operatorFile, error) {
	if path == "" {
		return operatorFile{}, missingField(f)
	}
	b, err := readBounded(path, operatorFileLimit(f))
	if err != nil {
		return operatorFile{}, fmt.Errorf("%s file %s: %v: %w", what, path, unwrapPath(err), ErrInvalid)
	}
	if err := CheckOperatorText(f, path, b); err != nil {
		return operatorFile{}, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return operatorFile{}, fmt.Errorf("%s file %s is empty: %w", what, path, ErrInvalid)
	}
	sum := sha256.Sum256(b)
	return operatorFile{text: b, sha: hex.EncodeToString(sum[:])}, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func checkChoice(f Field, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return badField(f, "%q: choose one of %s", v, strings.Join(allowed, ", "))
	}
	return nil
}

// checkNames refuses a value that names nothing in its table (a mode, a
// completion policy, an agent or an execution backend), and a completion
// policy its mode does not take, before anything reads or probes the host:
// an unknown name is reported before whatever the host lacks.
func checkNames(r Request) error {
	for _, c := range []struct {
		f       Field
		v       string
		allowed []string
	}{
		{FieldMode, r.Mode, Modes},
		{FieldCompletionPolicy, r.CompletionPolicy, Policies},
		{FieldAgentBackend, r.AgentBackend, AgentBackendNames()},
	} {
		if err := checkChoice(c.f, c.v, c.allowed); err != nil {
			return err
		}
	}
	if _, err := sandbox.ParseBackend(r.ExecutionBackend); err != nil {
		return badField(FieldExecutionBackend, "%w", err)
	}
	if slices.Contains(ScientificModes, r.Mode) && r.CompletionPolicy != PolicyRepair {
		return &FieldError{Field: FieldCompletionPolicy, Problem: Invalid, With: FieldMode,
			Err: fmt.Errorf("%q: a %s study always completes by %s", r.CompletionPolicy, r.Mode, PolicyRepair)}
	}
	return nil
}

func validateRequest(r *Request) error {
	if err := checkNames(*r); err != nil {
		return err
	}
	if r.WallSeconds <= 0 {
		return badField(FieldWallSeconds, "%d: must be more than 0", r.WallSeconds)
	}
	if r.TurnSeconds <= 0 || r.TurnSeconds > r.WallSeconds {
		return badField(FieldTurnSeconds, "%d: must be more than 0 and at most the wall seconds (%d)", r.TurnSeconds, r.WallSeconds)
	}
	if err := checkAgent(r); err != nil {
		return err
	}
	if r.JudgeModel == "" {
		r.JudgeModel = r.Model
	}
	return nil
}

// CreateStudy validates the request, probes the execution backend, and only
// then writes the new study: nothing is written for invalid input. It
// holds the campaign lock while it writes (CreateStudyLocked).
func CreateStudy(ctx context.Context, c Campaign, r Request, probe Prober) (Contract, error) {
	k, lock, err := CreateStudyLocked(ctx, c, r, probe)
	if err != nil {
		return k, err
	}
	return k, lock.Release()
}

// CreateStudyLocked is CreateStudy that keeps the campaign lock it took
// before writing anything, for the caller to hand to the study's
// supervisor (OpenStudyLocked): no other process can take the new study
// over between its creation and its supervision.
func CreateStudyLocked(ctx context.Context, c Campaign, r Request, probe Prober) (Contract, *Lock, error) {
	ns, err := newContract(ctx, c, r, probe)
	if err != nil {
		return Contract{}, nil, err
	}
	lock, err := createLocked(ctx, c, ns)
	if err != nil {
		return Contract{}, nil, err
	}
	return ns.k, lock, nil
}

// newStudy is what creating a study writes: the contract, the operator's
// two files and, for a continuation, the parent's snapshot.
type newStudy struct {
	k        Contract
	hyp, ins operatorFile
	cont     *contSnapshot
}

// newContract validates the request and probes its backend, writing
// nothing; a continuation reads its parent (never writing it).
func newContract(ctx context.Context, c Campaign, r Request, probe Prober) (newStudy, error) {
	var ns newStudy
	if err := checkNames(r); err != nil {
		return ns, err
	}
	if err := checkNewCampaign(ctx, c); err != nil {
		return ns, err
	}
	parent, err := loadParent(ctx, c, r)
	if err != nil {
		return ns, err
	}
	if ns.hyp, err = readHypothesis(r, parent); err != nil {
		return ns, err
	}
	if ns.ins, err = readOperatorFile("instructions", FieldInstructionsFile, r.InstructionsFile); err != nil {
		return ns, err
	}
	if parent != nil && r.Capabilities == "" {
		r.Capabilities = parent.k.Capabilities
	}
	if err := validateRequest(&r); err != nil {
		return ns, err
	}
	if ns.k, err = contractFor(ctx, c, r, ns.hyp, ns.ins, probe); err != nil {
		return ns, err
	}
	if parent != nil {
		cs, err := buildSnapshot(parent, r.InheritFiles)
		if err != nil {
			return ns, err
		}
		ns.cont, ns.k.Continuation = &cs, &cs.desc
	}
	return ns, nil
}

// readHypothesis is the operator's hypothesis file, or a continuation's
// parent's hypothesis when none is given.
func readHypothesis(r Request, parent *parentStudy) (operatorFile, error) {
	if parent != nil && r.HypothesisFile == "" {
		return parent.hyp, nil
	}
	return readOperatorFile("hypothesis", FieldHypothesisFile, r.HypothesisFile)
}

// contractFor resolves the capabilities and the execution backend of a
// valid request and returns its contract.
func contractFor(ctx context.Context, c Campaign, r Request, hyp, ins operatorFile, probe Prober) (Contract, error) {
	var err error
	capHashes := map[string]string{}
	if r.Capabilities != "" {
		if r.Capabilities, err = filepath.Abs(r.Capabilities); err != nil {
			return Contract{}, badField(FieldCapabilities, "%w", err)
		}
		if _, capHashes, err = LoadCapabilities(r.Capabilities); err != nil {
			return Contract{}, err
		}
	}
	report, err := resolveBackend(ctx, r.ExecutionBackend, probe)
	if err != nil {
		return Contract{}, err
	}
	now := time.Now().UTC()
	k := Contract{
		Mode: r.Mode, AgentBackend: r.AgentBackend, Model: r.Model, JudgeModel: r.JudgeModel,
		Executable: r.Executable, ProviderConfig: r.ProviderConfig, ExecutionBackend: report.Selected, ExecutionProbe: report,
		Capabilities: r.Capabilities, CapabilityHashes: capHashes, HypothesisSHA256: hyp.sha, InstructionsSHA256: ins.sha,
		CompletionPolicy: r.CompletionPolicy, WallSeconds: r.WallSeconds, TurnSeconds: r.TurnSeconds,
		CreatedAt: now, Deadline: now.Add(time.Duration(r.WallSeconds) * time.Second),
	}
	if k.Workers, err = freezePool(r.Workers); err != nil {
		return Contract{}, err
	}
	k.StudyID = shortHash("study_", map[string]any{"dir": c.Dir, "created": now, "hyp": hyp.sha, "pid": os.Getpid()})
	return k, nil
}

// resolveBackend probes the requested execution backend; "auto" picks one.
// An explicit choice is never replaced.
func resolveBackend(ctx context.Context, requested string, probe Prober) (sandbox.Report, error) {
	b, err := sandbox.ParseBackend(requested)
	if err != nil {
		return sandbox.Report{}, badField(FieldExecutionBackend, "%w", err)
	}
	rep := probe(ctx, b)
	if b != sandbox.Auto {
		rep.Selected = b
	}
	if !rep.Available || rep.Selected == "" {
		msg := fmt.Sprintf("execution backend %s is not available: %s", rep.Backend, rep.Reason)
		if rep.Remedy != "" {
			msg += "; " + rep.Remedy
		}
		return rep, fmt.Errorf("%s: %w", msg, ErrInvalid)
	}
	return rep, nil
}

// writeNewStudy writes the folders and the operator's files, then the
// store (publishStore): the study exists only once its store, study row
// included, is renamed into place, so a kill at any point leaves either the
// study or only the leftovers an interrupted creation leaves.
func writeNewStudy(ctx context.Context, c Campaign, ns newStudy) error {
	k, hyp, ins := ns.k, ns.hyp.text, ns.ins.text
	planned := map[string][]byte{"operator/hypothesis.txt": hyp, "operator/instructions.txt": ins}
	if ns.cont != nil {
		maps.Copy(planned, ns.cont.planned())
	}
	if err := writeCreationMarker(c, planned); err != nil {
		return err
	}
	for _, d := range []string{c.Operator(), c.Research(), c.Experiments(), c.Supervisor()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	if err := writeCreating(filepath.Join(c.Operator(), "hypothesis.txt"), hyp, 0o644); err != nil {
		return fmt.Errorf("write hypothesis: %w", err)
	}
	if err := writeCreating(filepath.Join(c.Operator(), "instructions.txt"), ins, 0o644); err != nil {
		return fmt.Errorf("write instructions: %w", err)
	}
	if ns.cont != nil {
		if err := ns.cont.write(c); err != nil {
			return err
		}
	}
	record := func(tx *store.Tx) error { return recordNewStudy(tx, k, string(hyp)) }
	reports := func(s *store.Store) error { return writeFirstReports(ctx, c, s, planned) }
	if err := publishStore(ctx, c, record, reports); err != nil {
		return err
	}
	// The study exists; a marker a kill leaves here is ignored (and taken by no reader).
	_ = os.Remove(filepath.Join(c.Dir, creationMarker))
	return nil
}

func recordNewStudy(tx *store.Tx, k Contract, hypothesis string) error {
	body := canonicalJSON(k)
	if err := tx.PutStudy(store.StudyRow{StudyID: k.StudyID, ContractJSON: body,
		CreatedAt: k.CreatedAt.Format(time.RFC3339Nano), Deadline: k.Deadline.Format(time.RFC3339Nano)}); err != nil {
		return err
	}
	if err := putState(tx, SupervisorState{Status: StatusPaused, Activity: "created"}); err != nil {
		return err
	}
	root := Claim{ID: RootClaim, Statement: strings.TrimSpace(hypothesis), Status: ClaimOpen, CreatedAt: k.CreatedAt}
	if slices.Contains(ScientificModes, k.Mode) {
		root.Kind, root.Relation = KindScientific, RelRoot
	}
	if err := putClaim(tx, root); err != nil {
		return err
	}
	return appendEvent(tx, StudyCreatedPayload{k})
}
