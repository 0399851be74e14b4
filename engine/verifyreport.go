package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/store"
)

// checkReports renders report.json and LEDGER.md from tx as the supervisor
// writes them (renderReports) and compares them with the files, byte for
// byte; report is report.json's content. It runs only when no supervisor
// runs the study and report.json's event head is the log's: then nothing
// is due to rewrite them, and they must say what the store says. The
// rendering takes from report.json what the record cannot give: the
// folder it was written in (a campaign may be moved, docs/campaign.md),
// the remaining seconds (they move with the clock), and "running" for a study whose supervisor was killed after
// it wrote them (readers now say "interrupted").
func checkReports(tx *store.Tx, c Campaign, report []byte) ([]string, error) {
	ledger, err := os.ReadFile(filepath.Join(c.Dir, "LEDGER.md"))
	if err != nil {
		return []string{fmt.Sprintf("LEDGER.md: missing (%v); it is written with report.json", err)}, nil
	}
	var file struct {
		Campaign         string          `json:"campaign"`
		Status           Status          `json:"status"`
		RemainingSeconds *int64          `json:"remaining_seconds"`
		Format           json.RawMessage `json:"report_format"`
	}
	_ = json.Unmarshal(report, &file) // checkHead read its event head from it
	asWritten := func(s *Snapshot) {
		if filepath.IsAbs(file.Campaign) {
			s.Campaign = file.Campaign
		}
		if s.Status == StatusInterrupted && file.Status == StatusRunning {
			s.Status = StatusRunning
		}
		if file.RemainingSeconds != nil { // also once ended: older reports kept the last figure
			s.RemainingSeconds = *file.RemainingSeconds
		}
	}
	older, finding, err := reportFormatCheck(tx, file.Format)
	switch {
	case err != nil:
		return nil, err
	case finding != "":
		return []string{finding}, nil
	case older:
		return checkOlderReport(tx, c, asWritten, report)
	}
	rd, ld := newDiffWriter(report), newDiffWriter(ledger)
	rw, lw := bufio.NewWriterSize(rd, 64<<10), bufio.NewWriterSize(ld, 64<<10)
	if err := renderReports(tx, c, asWritten, rw, lw); err != nil {
		return nil, fmt.Errorf("render the reports: %w", err)
	}
	_, _ = rw.Flush(), lw.Flush() // a diffWriter never fails
	var f []string
	for _, d := range []struct {
		name string
		w    *diffWriter
	}{{"report.json", rd}, {"LEDGER.md", ld}} {
		if msg := d.w.finding(); msg != "" {
			f = append(f, d.name+" differs from the record: "+msg)
		}
	}
	return f, nil
}

// maxShown bounds a line quoted in a finding.
const maxShown = 100

// diffWriter compares the bytes written to it with want and keeps where
// they first differ, with the written line from its start there.
type diffWriter struct {
	want []byte
	off  int    // bytes written and equal to want so far
	at   int    // offset in want of the first difference; -1 while none
	got  []byte // after a difference: the written line it falls in (bounded)
}

func newDiffWriter(want []byte) *diffWriter { return &diffWriter{want: want, at: -1} }

func (d *diffWriter) Write(p []byte) (int, error) {
	if d.at >= 0 {
		d.keep(p)
		return len(p), nil
	}
	rest := d.want[d.off:]
	if bytes.HasPrefix(rest, p) {
		d.off += len(p)
		return len(p), nil
	}
	n := 0
	for n < len(p) && n < len(rest) && p[n] == rest[n] {
		n++
	}
	d.at = d.off + n
	start := bytes.LastIndexByte(d.want[:d.at], '\n') + 1
	d.got = append([]byte(nil), d.want[start:d.at]...)
	d.keep(p[n:])
	return len(p), nil
}

// keep adds p to the written line until its end or maxShown bytes.
func (d *diffWriter) keep(p []byte) {
	if bytes.IndexByte(d.got, '\n') < 0 && len(d.got) <= maxShown {
		d.got = append(d.got, p[:min(len(p), maxShown+1)]...)
	}
}

// finding says where the written bytes, all written, first differ from
// want: "" when they are the same.
func (d *diffWriter) finding() string {
	at := d.at
	if at < 0 {
		if d.off == len(d.want) {
			return ""
		}
		at = d.off // want goes on after the last byte written
	}
	line := 1 + bytes.Count(d.want[:at], []byte{'\n'})
	start := bytes.LastIndexByte(d.want[:at], '\n') + 1
	return fmt.Sprintf("line %d reads %s, the record gives %s", line, shownLine(d.want[start:]), shownLine(d.got))
}

// shownLine quotes the first line of b, trimmed and bounded.
func shownLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "nothing (the end of the file)"
	}
	if len(s) > maxShown {
		s = strings.ToValidUTF8(s[:maxShown], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}
