// Package api is the `api` agent backend: an agent over an OpenAI-compatible
// chat-completions endpoint, spoken through the official openai-go client
// with streaming and function tools.
//
// # Turns
//
// A worker turn is an agent loop: the system message and the turn's prompt,
// the lab calls of the turn (provider.Turn.Tools) plus three file tools
// confined to the research folder, each tool call run in process through
// provider.Turn.CallTool and fed back, until the model answers without a tool
// call, the turn allowance passes (a checkpoint, not a failure) or the step
// cap is reached. A reviewer turn is one fresh, tool-free request; the
// verdict is the answer's last line (a fenced or multi-line JSON object is
// compacted to one line).
//
// # Failures
//
// Failures are classified from the HTTP status first (401 authentication;
// 402 quota; 403 and 404 permission; 429 with insufficient_quota quota;
// 429, 408, 5xx, network errors and a stream that ends before [DONE]
// transient) and otherwise by provider.Classify on the error text, never on
// the model's own words. They are returned as Outcome.Failure.
//
// # Credentials
//
// The connection file (JSON base_url and api_key) must be mode 0600; the key
// is only ever sent in the Authorization header. It never enters argv, an
// environment, a prompt, a log or an error: errors that quote it show
// [redacted].
package api
