package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/simjecture/simjecture/provider"
)

// maxToolResult bounds one tool result fed back to the model.
const maxToolResult = 64 << 10

// toolbox is the function tools of a worker turn: the lab calls, run in
// process by the harness, and the file tools.
type toolbox struct {
	defs  []openai.ChatCompletionToolUnionParam
	lab   map[string]bool
	call  func(ctx context.Context, name string, args []byte) (string, error)
	files *fileTools
}

func newToolbox(t provider.Turn) (*toolbox, error) {
	b := &toolbox{lab: map[string]bool{}, call: t.CallTool}
	for _, tool := range t.Tools {
		b.lab[tool.Name] = true
		b.defs = append(b.defs, functionTool(tool.Name, tool.Description, tool.Parameters))
	}
	if t.Dir == "" {
		return b, nil
	}
	files, err := openFileTools(t.Dir, t.Study)
	if err != nil {
		return nil, err
	}
	b.files = files
	for _, spec := range fileToolSpecs {
		b.defs = append(b.defs, functionTool(spec.name, spec.description, spec.params))
	}
	return b, nil
}

func functionTool(name, description string, params map[string]any) openai.ChatCompletionToolUnionParam {
	def := shared.FunctionDefinitionParam{Name: name, Parameters: shared.FunctionParameters(params)}
	if description != "" {
		def.Description = openai.String(description)
	}
	return openai.ChatCompletionFunctionTool(def)
}

// Close releases the file tools.
func (b *toolbox) Close() {
	if b.files != nil {
		b.files.Close()
	}
}

// run executes one tool call. A refused or unknown call is a result the
// model reads ({"ok":false,…}); the error return is for harness failures.
func (b *toolbox) run(ctx context.Context, c toolCall) (string, error) {
	args := []byte(c.args)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		return refusal(fmt.Sprintf("the arguments of %s are not valid JSON", c.name)), nil
	}
	switch {
	case b.lab[c.name] && b.call != nil:
		out, err := b.call(ctx, c.name, args)
		if err != nil {
			return "", fmt.Errorf("lab %s: %w", c.name, err)
		}
		return capResult(out), nil
	case b.files != nil && b.files.has(c.name):
		return capResult(b.files.run(c.name, args)), nil
	}
	return refusal(fmt.Sprintf("unknown tool %q", c.name)), nil
}

func refusal(msg string) string {
	b, _ := json.Marshal(map[string]any{"ok": false, "error": msg})
	return string(b)
}

func success(result any) string {
	b, err := json.Marshal(map[string]any{"ok": true, "result": result})
	if err != nil {
		return refusal(err.Error())
	}
	return string(b)
}

func capResult(s string) string {
	if len(s) <= maxToolResult {
		return s
	}
	return s[:maxToolResult] + "…[truncated]"
}
