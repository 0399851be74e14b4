package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

	"github.com/simjecture/simjecture/sandbox"
	"github.com/simjecture/simjecture/store"
)

// CheckConsistency checks that the record means what its history says:
// every claim's status is the disposition of the last verdict that accepted
// it (open while none has), and the frozen contract is the one the
// study_created event recorded. Hashes alone miss a row rewritten together
// with a forged record event; this does not. One finding per problem.
func CheckConsistency(ctx context.Context, s *store.Store) ([]string, error) {
	var findings []string
	err := s.Read(ctx, func(tx *store.Tx) error {
		claims, err := listDocs[Claim](tx, store.Claims)
		if err != nil {
			return err
		}
		h, err := readHistory(tx)
		if err != nil {
			return err
		}
		row, err := tx.GetStudy()
		if err != nil {
			return err
		}
		findings = append(checkClaims(claims, h.accepted), checkContract(row.ContractJSON, h.contract)...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("consistency: %w", err)
	}
	return findings, nil
}

// history is what the event log says about claims and the contract.
type history struct {
	accepted map[string]string // claim → disposition of its last approved verdict
	contract json.RawMessage   // the study_created payload; nil when absent
}

func readHistory(tx *store.Tx) (history, error) {
	h := history{accepted: map[string]string{}}
	err := eachEvent(tx, func(ev store.Event) {
		switch ev.Type {
		case "study_created":
			if h.contract == nil {
				h.contract = ev.Payload
			}
		case "claim_closed": // the ledger of the scientific modes: closed through its gate
			var v struct{ Claim, Status string }
			if json.Unmarshal(ev.Payload, &v) == nil {
				h.accepted[v.Claim] = v.Status
			}
		case "review_resolved":
			var v struct{ Claim, Decision, Disposition string }
			if json.Unmarshal(ev.Payload, &v) == nil && v.Decision == "approved" {
				h.accepted[v.Claim] = v.Disposition
			}
		}
	})
	return h, err
}

// eachEvent calls fn with every event, oldest first.
func eachEvent(tx *store.Tx, fn func(store.Event)) error {
	for after := int64(0); ; {
		evs, err := tx.EventsAfter(after, 1000)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			after = ev.Seq
			fn(ev)
		}
		if len(evs) < 1000 {
			return nil
		}
	}
}

func checkClaims(claims []Claim, accepted map[string]string) []string {
	var f []string
	known := map[string]bool{}
	for _, c := range claims {
		known[c.ID] = true
		want, ok := accepted[c.ID]
		switch {
		case !ok && c.Status != ClaimOpen:
			f = append(f, fmt.Sprintf("claim %s is %s, but no verdict accepted it (it should be open)", c.ID, c.Status))
		case ok && c.Status != want:
			f = append(f, fmt.Sprintf("claim %s is %s, but the last accepted verdict says %s", c.ID, c.Status, want))
		}
	}
	for _, id := range sortedKeys(accepted) {
		if !known[id] {
			f = append(f, fmt.Sprintf("claim %s, accepted by a verdict, is missing from the record", id))
		}
	}
	return f
}

// checkContract compares the frozen contract with the study_created event,
// as JSON values: a field changed, added or dropped is a finding.
func checkContract(row, created json.RawMessage) []string {
	if created == nil {
		return []string{"frozen contract: the event log has no study_created event"}
	}
	var a, b any
	if err := json.Unmarshal(row, &a); err != nil {
		return []string{fmt.Sprintf("frozen contract: the stored contract is not JSON (%v)", err)}
	}
	if json.Unmarshal(created, &b) != nil || !reflect.DeepEqual(a, b) {
		return []string{"frozen contract: the stored contract differs from the one the study_created event recorded" + fieldsDiffer(a, b)}
	}
	return nil
}

// fieldsDiffer names the top-level fields in which two contracts differ.
func fieldsDiffer(a, b any) string {
	ma, _ := a.(map[string]any)
	mb, _ := b.(map[string]any)
	names := map[string]bool{}
	for _, m := range []map[string]any{ma, mb} {
		for k := range m {
			if !reflect.DeepEqual(ma[k], mb[k]) {
				names[k] = true
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf(" (fields %v)", sortedKeys(names))
}

// PacketFile is the review packet as the supervisor kept it, in the folder
// of the review attempt (supervisor/review-ID-N/).
const PacketFile = "packet.json"

// verifyPackets re-hashes the packet each resolved review was judged from.
// Reviews recorded before packets were hashed carry no hash and are
// skipped; for those before the supervisor kept packet.json, the packet is
// the agent's prompt.txt.
func verifyPackets(c Campaign, reviews []Review) []string {
	var f []string
	for _, r := range reviews {
		if r.Status != "resolved" || r.PacketSHA256 == "" {
			continue
		}
		dir := filepath.Join(c.Supervisor(), reviewDirName(r, r.Attempts))
		path := filepath.Join(dir, PacketFile)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			path = filepath.Join(dir, "prompt.txt")
		}
		got, _, err := hashFile(path)
		switch {
		case err != nil:
			f = append(f, fmt.Sprintf("review %s: the packet it was judged from is missing (%v)", r.ID, err))
		case got != r.PacketSHA256:
			f = append(f, fmt.Sprintf("review %s: the packet it was judged from changed (%s)", r.ID, path))
		}
	}
	return f
}

// verifyLogs re-hashes an experiment's console logs; receipts recorded
// before the logs were hashed carry none.
func verifyLogs(r Receipt) []string {
	var f []string
	for _, name := range sortedKeys(r.Logs) {
		path := filepath.Join(r.ArtifactDir, name)
		got, size, err := hashFile(path)
		switch {
		case err != nil:
			f = append(f, fmt.Sprintf("%s: log %s is missing (%v)", r.ID, path, err))
		case got != r.Logs[name].SHA256 || size != r.Logs[name].Bytes:
			f = append(f, fmt.Sprintf("%s: log %s changed", r.ID, path))
		}
	}
	return f
}

// logHashes hashes the console logs kept in dir, for the receipt.
func logHashes(dir string) map[string]sandbox.Artifact {
	out := map[string]sandbox.Artifact{}
	for _, name := range []string{sandbox.StdoutLog, sandbox.StderrLog} {
		if sum, size, err := hashFile(filepath.Join(dir, name)); err == nil {
			out[name] = sandbox.Artifact{SHA256: sum, Bytes: size}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
