package engine

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// resolveCodex checks a codex study's request: the executable (default
// "codex" on PATH) must exist; the model may be left to Codex's own default.
func resolveCodex(r *Request) error {
	exe := r.Executable
	if exe == "" {
		exe = "codex"
	}
	path, err := exec.LookPath(exe)
	if err != nil {
		return fmt.Errorf("--backend codex: %s not found (install @openai/codex or pass --executable): %w", exe, ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("--executable: %w", err)
	}
	r.Executable = abs
	return nil
}

// resolveAPI checks an api study's request. The connection file itself is
// checked by the api backend when the study starts; here only its presence.
func resolveAPI(r *Request) error {
	if r.ProviderConfig == "" {
		return fmt.Errorf("--backend api needs --provider-config FILE (base_url, api_key; mode 0600): %w", ErrInvalid)
	}
	if r.Model == "" {
		return fmt.Errorf("--backend api needs --model: %w", ErrInvalid)
	}
	abs, err := filepath.Abs(r.ProviderConfig)
	if err != nil {
		return fmt.Errorf("--provider-config: %w", err)
	}
	r.ProviderConfig = abs
	if r.Executable != "" {
		return fmt.Errorf("--backend api takes no --executable: %w", ErrInvalid)
	}
	return nil
}
