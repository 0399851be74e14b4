package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/simjecture/simjecture/store"
)

// Reports written in an older format (another rendering of the same
// record: an earlier simjecture wrote them) cannot be compared byte for
// byte. report.json is compared by what it says instead: every value it
// holds must be the one this binary renders at the same place (a key the
// newer rendering added is not asked of it), so a claim, verdict, receipt
// or hash changed in it is still named. LEDGER.md, the human-readable
// rendering of the same record, is not compared then (docs/campaign.md).

// checkOlderReport compares report (of an older format) with a fresh
// rendering of the record by value.
func checkOlderReport(tx *store.Tx, c Campaign, fix func(*Snapshot), report []byte) ([]string, error) {
	var fresh bytes.Buffer
	w := bufio.NewWriter(&fresh)
	if err := renderReports(tx, c, fix, w, bufio.NewWriter(io.Discard)); err != nil {
		return nil, fmt.Errorf("render the reports: %w", err)
	}
	_ = w.Flush()
	var was, now any
	if err := json.Unmarshal(report, &was); err != nil {
		return []string{"report.json: unreadable: " + err.Error()}, nil
	}
	if err := json.Unmarshal(fresh.Bytes(), &now); err != nil {
		return nil, fmt.Errorf("render the reports: %w", err)
	}
	if at, ok := firstDifference("", was, now); !ok {
		return []string{"report.json differs from the record (written in an older report format): " + at}, nil
	}
	return nil, nil
}

// firstDifference compares an older report's value was with the fresh
// rendering's now: objects by the keys was has, lists element by element.
// It reports false and where they first differ.
func firstDifference(at string, was, now any) (string, bool) {
	switch w := was.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return describe(at, was, now), false
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if k == "report_format" {
				continue
			}
			path := k
			if at != "" {
				path = at + "." + k
			}
			v, ok := n[k]
			if !ok {
				return path + " is not in the record", false
			}
			if where, same := firstDifference(path, w[k], v); !same {
				return where, false
			}
		}
		return "", true
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) != len(w) {
			return describe(at, was, now), false
		}
		for i := range w {
			if where, same := firstDifference(at+"["+strconv.Itoa(i)+"]", w[i], n[i]); !same {
				return where, false
			}
		}
		return "", true
	}
	if fmt.Sprint(was) != fmt.Sprint(now) || fmt.Sprintf("%T", was) != fmt.Sprintf("%T", now) {
		return describe(at, was, now), false
	}
	return "", true
}

// describe says what differs at a place: the file's value and the record's.
func describe(at string, was, now any) string {
	show := func(v any) string {
		b, _ := json.Marshal(v)
		if len(b) > maxShown {
			return string(bytes.ToValidUTF8(b[:maxShown], nil)) + "…"
		}
		return string(b)
	}
	if at == "" {
		at = "the document"
	}
	return fmt.Sprintf("%s reads %s, the record gives %s", at, show(was), show(now))
}
