package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/simjecture/simjecture/store"
)

// reportFormatCheck reads the report format report.json names (raw: the
// value of its report_format key, nil when it has none) against the one
// the record gives: the newest study_state event names the format of the
// binary that wrote the reports after it (none before session 10). A
// report of this binary's format is compared byte for byte; one that names
// none, where the record does not say this binary's format wrote it, is an
// earlier release's, compared by what it says (older). Anything else is a
// finding: a format that is not a whole number, one no release writes, one
// newer than this binary renders, or no format where the record says this
// one wrote them (a report passed off as an earlier release's, so as not to
// be compared byte for byte).
func reportFormatCheck(tx *store.Tx, raw json.RawMessage) (older bool, finding string, err error) {
	head, err := tx.Head()
	if err != nil {
		return false, "", err
	}
	recorded, err := recordedReportFormat(tx, head.Seq)
	if err != nil {
		return false, "", err
	}
	if raw == nil {
		if recorded == ReportFormat {
			return false, fmt.Sprintf("report.json names no report format, but the record says its reports were written in format %d, this release's", recorded), nil
		}
		return true, "", nil
	}
	f, perr := strconv.Atoi(string(raw))
	switch {
	case perr != nil:
		return false, fmt.Sprintf("report.json: report_format %s is not a whole number", shownLine(raw)), nil
	case f > ReportFormat:
		return false, fmt.Sprintf("report.json: written in report format %d by a newer simjecture; this one renders format %d and cannot check it (verify with that release)", f, ReportFormat), nil
	case f != ReportFormat:
		return false, fmt.Sprintf("report.json: report_format %d is not one any simjecture writes (this one writes %d; earlier releases wrote none)", f, ReportFormat), nil
	}
	return false, "", nil
}

// recordedReportFormat is the report format the newest event at or before
// seq that is followed by a rewrite of the reports names (a study_state
// event, or a steering_queued one: steer rewrites them when no supervisor
// runs); 0 when it names none.
func recordedReportFormat(tx *store.Tx, seq int64) (int, error) {
	ev, ok, err := tx.NewestOfTypes(string(EvStudyState), string(EvSteeringQueued), seq)
	if err != nil || !ok {
		return 0, err
	}
	var p struct {
		ReportFormat int `json:"report_format"`
	}
	if err := json.Unmarshal(ev.Payload, &p); err != nil {
		return 0, fmt.Errorf("decode event %d: %w", ev.Seq, err)
	}
	return p.ReportFormat, nil
}

// ReportFormatOf is the report format c's report.json names: 0 when it
// names none (an earlier release wrote it) or cannot be read.
func ReportFormatOf(c Campaign) int {
	var file struct {
		Format int `json:"report_format"`
	}
	body, err := os.ReadFile(filepath.Join(c.Dir, "report.json"))
	if err == nil {
		_ = json.Unmarshal(body, &file)
	}
	return file.Format
}
