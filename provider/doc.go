// Package provider adapts AI agents to simjecture's turn protocol and
// classifies their failures.
//
// An [Agent] runs one turn — a worker turn in the study's research folder, or
// a reviewer turn in a fresh folder with the review packet on stdin — and
// reports an [Outcome]. [Classify] decides from the stderr tail and protocol
// error events only (never the agent's own prose) whether a failed turn is
// transient (retried with backoff) or needs the operator (authentication,
// quota, permission).
//
// Backends: `command` (any executable speaking the lab protocol),
// `scripted` (the built-in demo agent: this binary in its hidden agent mode,
// run through the very same command path), `codex` (package codex: the Codex
// CLI, threads resumed, lab tools through our MCP server), `claude` (package
// claude: Claude Code in print mode, sessions resumed, lab tools through our
// MCP server) and `api` (package api: an OpenAI-compatible chat-completions
// endpoint with function tools, its worker conversation kept across turns).
package provider
