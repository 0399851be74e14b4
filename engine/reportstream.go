package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// Writing report.json and LEDGER.md of a study of any size: the snapshot
// without its receipts is read once, and the receipts are streamed from
// the store one at a time into both files, in the same read transaction,
// so memory does not grow with the number of experiments. The files are
// the same bytes WriteReports' whole-snapshot rendering (reportFiles)
// gives.

// experimentsKey is how the report's receipts begin in its indented JSON:
// a top-level key, which no string inside the report can contain (its
// newlines are escaped).
const experimentsKey = "\n  \"experiments\": ["

// streamReports writes c's reports from tx into the files report and
// ledger, as reportFiles renders them.
func streamReports(tx *store.Tx, c Campaign, report, ledger *bufio.Writer) error {
	return renderReports(tx, c, nil, report, ledger)
}

// renderReports is streamReports with the snapshot adjusted by fix (when
// not nil) before anything is written: verify renders the reports with
// what the record cannot give (the folder they were written in, the
// clock). The receipts are placed in the snapshot's campaign folder.
func renderReports(tx *store.Tx, c Campaign, fix func(*Snapshot), report, ledger *bufio.Writer) error {
	snap, err := snapshotIn(tx, c, 0, true)
	if err != nil {
		return err
	}
	if fix != nil {
		fix(&snap)
	}
	head, err := tx.Head()
	if err != nil {
		return err
	}
	rep := Report{Snapshot: snap, EventHead: EventHead{Seq: head.Seq, Hash: head.Hash}, Format: ReportFormat}
	rep.Audit = audit(rep.Snapshot) // its claims part, for the ledger's head; its backends come with the receipts
	rep.Experiments = []Receipt{}
	before, _, err := splitJSON(rep)
	if err != nil {
		return err
	}
	report.Write(before)
	ledger.WriteString(ledgerHead(rep))
	backends := map[string]bool{}
	n, err := streamReceipts(tx, Campaign{Dir: snap.Campaign}, report, func(r Receipt) {
		if b := string(r.IsolationBackend); b != "" && !backends[b] {
			backends[b] = true
			rep.Experiments = append(rep.Experiments, Receipt{IsolationBackend: r.IsolationBackend}) // for the audit's order
		}
		ledger.WriteString(experimentRow(r))
	})
	if err != nil {
		return err
	}
	rep.Audit = audit(rep.Snapshot)
	rep.Experiments = []Receipt{}
	_, after, err := splitJSON(rep)
	if err != nil {
		return err
	}
	endReceipts(report, n, after)
	ledger.WriteString(ledgerTail)
	return nil
}

// streamReceipts writes every receipt of c's study, read from tx one at a
// time, as the elements of the report's (or snapshot's) indented
// "experiments" list, passing each to seen too; it returns their number.
func streamReceipts(tx *store.Tx, c Campaign, w *bufio.Writer, seen func(Receipt)) (int, error) {
	n := 0
	err := tx.EachDoc(store.Experiments, func(d store.Doc) error {
		var r Receipt
		if err := json.Unmarshal(d.JSON, &r); err != nil {
			return fmt.Errorf("decode %s %s: %w", store.Experiments, d.ID, err)
		}
		r = c.Place(r)
		body, err := json.MarshalIndent(r, "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode report: %w", err)
		}
		if n > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n    ")
		w.Write(body)
		seen(r)
		n++
		return nil
	})
	return n, err
}

// endReceipts closes a list of n streamed receipts and writes the rest of
// the document, after, with the final newline.
func endReceipts(w *bufio.Writer, n int, after []byte) {
	if n > 0 {
		w.WriteString("\n  ")
	}
	w.Write(after)
	w.WriteByte('\n')
}

// WriteSnapshotJSON writes the study's snapshot as `status --json` prints
// it (indented, every receipt), streaming the receipts from one read of
// the store so that memory does not grow with their number. It renders
// into an unlinked temporary file first, so that a reader of out that
// takes its time (a pipe nobody drains) does not hold the read open (and
// the WAL growing); without one it streams to out directly.
func (v *View) WriteSnapshotJSON(ctx context.Context, out io.Writer) error {
	tmp, err := os.CreateTemp("", "simjecture-status-*.json")
	if err != nil {
		return v.streamSnapshotJSON(ctx, out)
	}
	_ = os.Remove(tmp.Name())
	defer tmp.Close()
	if err := v.streamSnapshotJSON(ctx, tmp); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	_, err = io.Copy(out, tmp)
	return err
}

// streamSnapshotJSON is WriteSnapshotJSON's rendering, into out.
func (v *View) streamSnapshotJSON(ctx context.Context, out io.Writer) error {
	w := bufio.NewWriterSize(out, 64<<10)
	err := v.s.Read(ctx, func(tx *store.Tx) error {
		snap, err := snapshotIn(tx, v.c, 0, true)
		if err != nil {
			return err
		}
		snap.Experiments = []Receipt{}
		before, after, err := splitJSON(snap)
		if err != nil {
			return err
		}
		w.Write(before)
		n, err := streamReceipts(tx, v.c, w, func(Receipt) {})
		if err != nil {
			return err
		}
		endReceipts(w, n, after)
		return nil
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

// splitJSON renders v (a report or snapshot with no receipts) and splits
// it around its empty receipt list: before ends with the list's "[",
// after begins with its "]".
func splitJSON(v any) (before, after []byte, err error) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("encode report: %w", err)
	}
	i := bytes.Index(body, []byte(experimentsKey+"]"))
	if i < 0 {
		return nil, nil, errors.New("encode report: no experiments key")
	}
	cut := i + len(experimentsKey)
	return body[:cut], body[cut:], nil
}

// atomicFile is a file written under a temporary name in its folder and
// renamed into place by commit.
type atomicFile struct {
	path string
	tmp  *os.File
	w    *bufio.Writer
}

func createAtomic(path string) (*atomicFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &atomicFile{path: path, tmp: tmp, w: bufio.NewWriterSize(tmp, 64<<10)}, nil
}

// commit flushes and closes the file and renames it into place. No fsync:
// the rename is atomic against a crash of the process, which is what the
// reports must survive; the store holds the durable truth, and the reports
// are rewritten from it at every state change and exit.
func (f *atomicFile) commit() error {
	err := f.w.Flush()
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(f.tmp.Name(), 0o644)
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// abort discards the file.
func (f *atomicFile) abort() {
	_ = f.tmp.Close()
	_ = os.Remove(f.tmp.Name())
}

// ledgerTail ends LEDGER.md.
const ledgerTail = "\nIncomplete is not a scientific result: only claims accepted by the independent reviewer count.\n"

// ledgerHead is LEDGER.md up to its experiment rows.
func ledgerHead(r Report) string {
	var b strings.Builder
	ledgerSummary(&b, r)
	writeScience(&b, r.Snapshot)
	b.WriteString(experimentsHeader)
	return b.String()
}
