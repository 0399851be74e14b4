package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"

	"github.com/simjecture/simjecture/store"
)

// Reports written in an older format (another rendering of the same
// record: an earlier simjecture wrote them) cannot be compared byte for
// byte. report.json is compared by what it says instead: every value it
// holds must be the one this binary renders at the same place (a key the
// newer rendering added is not asked of it), and what carries the record's
// meaning must be there and the same — the study's status, the audit, each
// claim's and review's status and text, each receipt's status, program,
// inputs, artifacts and logs (meaningfulPaths) — so
// a claim, verdict, receipt or hash changed or removed in it is still
// named. A key given twice is a finding (readers differ on which counts).
// LEDGER.md, the human-readable rendering of the same record, is not
// compared then; verify says so (docs/campaign.md).

// checkOlderReport compares report (of an older format) with a fresh
// rendering of the record by value.
func checkOlderReport(tx *store.Tx, c Campaign, fix func(*Snapshot), report []byte) ([]string, error) {
	var fresh bytes.Buffer
	w := bufio.NewWriter(&fresh)
	if err := renderReports(tx, c, fix, w, bufio.NewWriter(io.Discard)); err != nil {
		return nil, fmt.Errorf("render the reports: %w", err)
	}
	_ = w.Flush()
	if at, dup := duplicateKey(report); dup {
		return []string{"report.json: the key " + at + " is given twice"}, nil
	}
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
	for _, path := range meaningfulPaths {
		if at, ok := sameAt(path, "", was, now); !ok {
			return []string{"report.json differs from the record (written in an older report format): " + at}, nil
		}
	}
	return nil, nil
}

// meaningfulPaths are what an older report.json must say as the record
// does, present or absent alike: a path of keys, "[]" for every element
// of a list (matched by position, the lists being the same length).
var meaningfulPaths = [][]string{
	{"status"}, {"audit", "scientific_status"}, {"audit", "completed"}, {"audit", "accepted"},
	{"claims", "[]", "id"}, {"claims", "[]", "status"}, {"claims", "[]", "statement"}, {"claims", "[]", "parent"},
	{"experiments", "[]", "id"}, {"experiments", "[]", "status"}, {"experiments", "[]", "artifacts"},
	{"experiments", "[]", "source"}, {"experiments", "[]", "args"}, {"experiments", "[]", "inputs"},
	{"experiments", "[]", "returncode"}, {"experiments", "[]", "isolation_backend"}, {"experiments", "[]", "logs"},
	{"reviews", "[]", "id"}, {"reviews", "[]", "claim"}, {"reviews", "[]", "status"}, {"reviews", "[]", "verdict"},
	{"reviews", "[]", "conclusion"}, {"reviews", "[]", "disposition"}, {"reviews", "[]", "packet_sha256"},
	{"event_head"}, {"study_id"}, {"mode"}, {"execution_backend"},
}

// sameAt reports whether was and now hold the same value at path, both
// missing (or null, or empty) counting as the same; at names where not.
func sameAt(path []string, at string, was, now any) (string, bool) {
	if len(path) == 0 {
		if isEmpty(was) && isEmpty(now) {
			return "", true
		}
		if reflect.DeepEqual(was, now) {
			return "", true
		}
		return describe(at, was, now), false
	}
	if path[0] == "[]" {
		w, _ := was.([]any)
		n, _ := now.([]any)
		if len(w) != len(n) {
			return describe(at, was, now), false
		}
		for i := range w {
			if where, ok := sameAt(path[1:], at+"["+strconv.Itoa(i)+"]", w[i], n[i]); !ok {
				return where, false
			}
		}
		return "", true
	}
	w, _ := was.(map[string]any)
	n, _ := now.(map[string]any)
	next := path[0]
	if at != "" {
		next = at + "." + path[0]
	}
	return sameAt(path[1:], next, w[path[0]], n[path[0]])
}

// isEmpty reports whether v is missing, null, or an empty list or object.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// duplicateKey finds an object key given twice in the JSON document body,
// and its place.
func duplicateKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	at, dup := walkDuplicates(dec, "")
	return at, dup
}

// walkDuplicates reads one value from dec, reporting a repeated key.
func walkDuplicates(dec *json.Decoder, at string) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false // unreadable: the decode that follows says so
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", false
			}
			k, _ := kt.(string)
			path := k
			if at != "" {
				path = at + "." + k
			}
			if seen[k] {
				return path, true
			}
			seen[k] = true
			if where, dup := walkDuplicates(dec, path); dup {
				return where, true
			}
		}
		_, _ = dec.Token() // '}'
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if where, dup := walkDuplicates(dec, at+"["+strconv.Itoa(i)+"]"); dup {
				return where, true
			}
		}
		_, _ = dec.Token() // ']'
	}
	return "", false
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
		if v == nil {
			return "nothing"
		}
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
