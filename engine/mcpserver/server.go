// Package mcpserver serves the lab calls of one study as a Model Context
// Protocol server (`simjecture mcp --campaign DIR`).
//
// Every lab call the study's current role may make ([engine.CallsFor]) is one MCP tool. Its input schema is the
// call's [engine.CallSpec.JSONSchema] — the one schema the command line and
// the api backend use too — and its result is the very JSON object
// `simjecture lab CALL` prints: {"ok":true,"result":…}, or
// {"ok":false,"error":"…"} with isError set. After a successful call that
// hands the executor work ([engine.CallSpec.Wakes]: run, cancel) the server
// wakes the study's supervisor, as the command line does.
package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/simjecture/simjecture/engine"
)

// Name is the server's implementation name, and the name agents are told to
// register it under.
const Name = "simjecture"

// New builds the MCP server of one study's lab.
func New(lab *engine.Lab, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "simjecture lab", Version: version}, &mcp.ServerOptions{
		Instructions: "The lab calls of one simjecture study. Experiments run only through the run tool; " +
			"only the independent reviewer, asked with the review tool, can accept a claim.",
	})
	for _, spec := range engine.CallsFor(studyRole(lab)) {
		s.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: spec.JSONSchema()},
			handler(lab, spec))
	}
	return s
}

// studyRole is the role of the lab's study now (its mode's, or its active
// assignment's), read through the lab itself (over the supervisor's socket
// when one answers, as an enclosed agent's server must); minimal's worker
// when it cannot be read.
func studyRole(lab *engine.Lab) engine.Role {
	res, err := lab.Call(context.Background(), "status", []byte(`{"limit":1}`))
	if err != nil {
		return engine.RoleWorker
	}
	b, err := json.Marshal(res)
	if err != nil {
		return engine.RoleWorker
	}
	var head struct {
		Mode string      `json:"mode"`
		Role engine.Role `json:"role"`
	}
	if json.Unmarshal(b, &head) != nil {
		return engine.RoleWorker
	}
	if head.Role != "" {
		return head.Role
	}
	return engine.ModeRole(head.Mode)
}

// Serve runs the server on t until the client goes away or ctx ends.
func Serve(ctx context.Context, lab *engine.Lab, version string, t mcp.Transport) error {
	if err := New(lab, version).Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

// handler runs one lab call. A refused call is a tool result with isError
// set, never a protocol error, so the agent reads why and can correct itself.
func handler(lab *engine.Lab, spec engine.CallSpec) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw []byte
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		result, err := lab.Call(ctx, spec.Name, raw)
		if err != nil {
			return reply(map[string]any{"ok": false, "error": err.Error()}, true), nil
		}
		if spec.Wakes {
			engine.Wake(lab.C)
		}
		return reply(map[string]any{"ok": true, "result": result}, false), nil
	}
}

func reply(body map[string]any, isError bool) *mcp.CallToolResult {
	text, err := json.Marshal(body)
	if err != nil {
		text, _ = json.Marshal(map[string]any{"ok": false, "error": "encode result: " + err.Error()})
		isError = true
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, IsError: isError}
}
