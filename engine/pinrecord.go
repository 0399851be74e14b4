package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The study's programs and settings are pinned by each supervisor at its
// first launch (programs.go, settings.go), which alone would let a worker
// plant a program earlier on PATH (a python3 in ~/.local/bin) or a setting
// that was missing (~/.codex/AGENTS.md) during the last turn before its
// supervisor stops, for the next supervisor to pin as it finds it. So the
// first supervisor of a study records where each program resolved and each
// setting led in DIR/supervisor/pins.json (read-only to enclosed agents),
// and every later supervisor compares with that record before its first
// launch: a program that resolves elsewhere, or a setting that appeared,
// disappeared or leads elsewhere, stops the study for the operator, who
// checks it and removes the file to accept what is there now. Contents are
// compared within one supervisor only (an upgrade of the system's python3
// between two supervisors is no finding); an enclosed agent cannot change
// a pinned file's content in any case.

// pinRecordName is the record's file in the supervisor folder.
const pinRecordName = "pins.json"

// pinRecord is pins.json: each program, as the study names it, and the
// file it resolved to; each setting path and where it led ("" missing).
type pinRecord struct {
	Programs map[string]string `json:"programs"`
	Settings map[string]string `json:"settings"`
}

// currentPins is where the study's programs and (enclosed) settings resolve now.
func (sv *Supervisor) currentPins() pinRecord {
	rec := pinRecord{Programs: map[string]string{}, Settings: map[string]string{}}
	for _, n := range sv.progs.names {
		rec.Programs[n] = resolveProgram(n)
	}
	if sv.enclosed {
		sv.settings.pin()
		for _, p := range sv.settings.pins {
			if p.glob == "" {
				rec.Settings[p.path] = p.real
			} else {
				rec.Settings[filepath.Join(p.path, p.glob)] = strings.Join(p.names, ", ")
			}
		}
	}
	return rec
}

// checkPinRecord compares the pins now with the study's record, once per
// supervisor, writing the record when the study has none.
func (sv *Supervisor) checkPinRecord() error {
	sv.pinRecordOnce.Do(func() {
		path := filepath.Join(sv.c.Supervisor(), pinRecordName)
		now := sv.currentPins()
		body, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			sv.pinRecordErr = writePinRecord(path, now)
			return
		}
		var was pinRecord
		if err == nil {
			err = json.Unmarshal(body, &was)
		}
		if err != nil {
			sv.pinRecordErr = fmt.Errorf("the study's record of its programs and settings, %s, cannot be read (%w): check it, remove it, then resume", path, err)
			return
		}
		if sv.pinRecordErr = comparePins(was, now, path); sv.pinRecordErr == nil && len(was.Settings) == 0 && len(now.Settings) > 0 {
			// The first supervisor did not enclose its agents (no settings
			// were pinned): this one's are the study's from now on.
			was.Settings = now.Settings
			sv.pinRecordErr = writePinRecord(path, was)
		}
	})
	return sv.pinRecordErr
}

// comparePins names the first program or setting of was that is not as it
// was; one only now has (a setting of a pool grown since) is no finding.
func comparePins(was, now pinRecord, path string) error {
	accept := fmt.Sprintf("an agent may have planted it, so nothing is launched: check it, then remove %s to accept what is there now, and resume", path)
	for _, kind := range []struct {
		what     string
		was, now map[string]string
	}{{"program", was.Programs, now.Programs}, {"setting", was.Settings, now.Settings}} {
		names := make([]string, 0, len(kind.was))
		for n := range kind.was {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			cur, ok := kind.now[n]
			if !ok || cur == kind.was[n] {
				continue
			}
			return fmt.Errorf("%s %s: %s when the study's first supervisor launched an agent, %s now; %s",
				kind.what, n, where(kind.was[n]), where(cur), accept)
		}
	}
	return nil
}

// where says where a pin led.
func where(real string) string {
	if real == "" {
		return "missing"
	}
	return real
}

// writePinRecord writes rec to path atomically.
func writePinRecord(path string, rec pinRecord) error {
	body, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("record the study's programs: %w", err)
	}
	f, err := createAtomic(path)
	if err != nil {
		return fmt.Errorf("record the study's programs: %w", err)
	}
	if _, err := f.w.Write(append(body, '\n')); err != nil {
		f.abort()
		return fmt.Errorf("record the study's programs: %w", err)
	}
	return f.commit()
}
