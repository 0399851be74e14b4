package engine

import (
	"fmt"
)

// CheckFrozen compares the fields the operator gave on resume with the
// frozen contract and names the first that differs. Empty fields were not given.
func CheckFrozen(k Contract, r Request) error {
	type field struct{ name, recorded, requested string }
	fields := []field{
		{"mode", k.Mode, r.Mode},
		{"agent backend", k.AgentBackend, r.AgentBackend},
		{"model", k.Model, r.Model},
		{"judge model", k.JudgeModel, r.JudgeModel},
		{"executable", k.Executable, r.Executable},
		{"provider config", k.ProviderConfig, r.ProviderConfig},
		{"execution backend", string(k.ExecutionBackend), r.ExecutionBackend},
		{"capabilities", k.Capabilities, r.Capabilities},
		{"completion policy", k.CompletionPolicy, r.CompletionPolicy},
	}
	if r.WallSeconds != 0 {
		fields = append(fields, field{"wall seconds", fmt.Sprint(k.WallSeconds), fmt.Sprint(r.WallSeconds)})
	}
	if r.TurnSeconds != 0 {
		fields = append(fields, field{"turn seconds", fmt.Sprint(k.TurnSeconds), fmt.Sprint(r.TurnSeconds)})
	}
	for _, f := range fields {
		if f.requested == "" || f.requested == f.recorded {
			continue
		}
		if f.name == "execution backend" && f.requested == "auto" {
			continue // auto resolved to the recorded backend when the study was created
		}
		return fmt.Errorf("%s is immutable within a study: recorded %s, requested %s: %w", f.name, orNone(f.recorded), f.requested, ErrInvalid)
	}
	return nil
}

// CheckFrozenFile compares an operator file given on resume with its frozen hash.
func CheckFrozenFile(what, path, recorded string) error {
	if path == "" {
		return nil
	}
	f, err := readOperatorFile(what, Field(what+" file"), path)
	if err != nil {
		return err
	}
	if f.sha != recorded {
		return fmt.Errorf("%s is immutable within a study: %s differs from the recorded one: %w", what, path, ErrInvalid)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// CheckFrozenWorkers compares the workers given on resume with the frozen
// pool, and each frozen worker's identity with its profile now.
func CheckFrozenWorkers(k Contract, requested []string) error {
	if err := checkPoolRequest(k, requested); err != nil {
		return err
	}
	_, err := loadPool(k)
	return err
}
