package engine

import (
	"context"
	"encoding/json"

	"github.com/simjecture/simjecture/provider"
	"github.com/simjecture/simjecture/store"
)

// LabTools renders the lab calls of a role as agent tools, from the one
// lab schema.
func LabTools(role Role) []provider.Tool {
	calls := CallsFor(role)
	tools := make([]provider.Tool, 0, len(calls))
	for _, c := range calls {
		tools = append(tools, provider.Tool{Name: c.Name, Description: c.Description, Parameters: c.JSONSchema()})
	}
	return tools
}

// labCaller runs lab calls in process for agents that call tools directly;
// errors come back as the same {"ok":false,"error":…} object the CLI prints.
func labCaller(lab *Lab) func(context.Context, string, []byte) (string, error) {
	return func(ctx context.Context, name string, args []byte) (string, error) {
		result, err := lab.Call(ctx, name, args)
		var body []byte
		if err != nil {
			body, _ = json.Marshal(map[string]any{"ok": false, "error": err.Error()})
		} else {
			body, _ = json.Marshal(map[string]any{"ok": true, "result": result})
		}
		return string(body), nil
	}
}

// recordUsage keeps a turn's token totals per thread: a resumed thread
// reports running totals, so they replace the thread's earlier figures.
func (sv *Supervisor) recordUsage(ctx context.Context, out provider.Outcome, fallback string) {
	if out.InputTokens == nil && out.OutputTokens == nil {
		return
	}
	thread := out.Thread
	if thread == "" {
		thread = fallback
	}
	err := sv.s.Tx(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if err := tx.PutUsage(thread, out.InputTokens, out.OutputTokens); err != nil {
			return err
		}
		return appendEvent(tx, UsagePayload{Thread: thread, InputTokens: out.InputTokens, OutputTokens: out.OutputTokens})
	})
	if err != nil {
		sv.storeFailed("record the token usage", err)
	}
}
