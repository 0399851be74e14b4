package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Lab is the agent's side of the `lab` protocol (contract section 5): one
// call with one JSON request and one JSON result.
type Lab interface {
	// Call sends req as the JSON argument of call and decodes the result into out.
	Call(ctx context.Context, call string, req, out any) error
}

// labCallTimeout bounds one `lab` subprocess.
const labCallTimeout = 2 * time.Minute

// ExecLab runs `BIN lab CALL` as a subprocess, exactly as any external agent
// does. The study is taken from SIMJECTURE_STUDY in the inherited environment.
type ExecLab struct {
	// Bin is the path of the simjecture binary ($SIMJECTURE_BIN).
	Bin string
}

// envelope is the JSON object `simjecture lab` prints.
type envelope struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// Call implements [Lab].
func (l ExecLab) Call(ctx context.Context, call string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("lab %s: encode request: %w", call, err)
	}
	ctx, cancel := context.WithTimeout(ctx, labCallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Bin, "lab", call)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	env, perr := parseEnvelope(stdout.Bytes())
	if perr != nil {
		if runErr != nil {
			return fmt.Errorf("lab %s: %w (stderr: %s)", call, runErr, tail(stderr.String(), 300))
		}
		return fmt.Errorf("lab %s: %w", call, perr)
	}
	return decodeEnvelope(call, env, out)
}

// parseEnvelope reads the last JSON line of the lab output.
func parseEnvelope(stdout []byte) (envelope, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	var env envelope
	if last == "" {
		return env, fmt.Errorf("%w: empty output", ErrProtocol)
	}
	if err := json.Unmarshal([]byte(last), &env); err != nil {
		return env, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return env, nil
}

// decodeEnvelope turns an envelope into the caller's result or an error.
func decodeEnvelope(call string, env envelope, out any) error {
	if !env.OK {
		return fmt.Errorf("lab %s: %w: %s", call, ErrLab, env.Error)
	}
	if out == nil || len(env.Result) == 0 {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("lab %s: decode result: %w", call, err)
	}
	return nil
}

// tail returns at most n trailing bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
