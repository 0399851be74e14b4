package api

import (
	"path/filepath"
	"strings"

	"github.com/simjecture/simjecture/provider"
)

// lostNote opens the prompt of a worker whose stored conversation is gone.
const lostNote = "(The earlier conversation of this study could not be loaded; this is a new one. " +
	"Call the status tool for the study's state before anything else.)\n\n"

// memory is a worker turn's view of the stored conversation.
type memory struct {
	*conversation
	since int // the turn whose prompt the current exchange answers
}

// remember opens the worker's conversation (t.Cursor, in t.StateDir) and
// adds this turn's prompt, unless the turn resumes an exchange a provider
// failure cut short with the same prompt: then it goes on from the stored
// messages.
func (a *Agent) remember(t provider.Turn) (*memory, error) {
	dir := t.StateDir
	if dir == "" {
		dir = filepath.Join(t.LogDir, "conversation") // no state folder: this turn only
	}
	conv, lost, err := openConversation(dir, t.Cursor, a.cfg.APIKey)
	if err != nil {
		return nil, err
	}
	m := &memory{conversation: conv, since: t.Number}
	prompt := t.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = provider.ContinuePrompt
	}
	if lost {
		prompt = lostNote + prompt
	}
	if settled := settle(conv.msgs, t.Number); len(settled) != len(conv.msgs) {
		if err := conv.rewrite(settled); err != nil {
			conv.Close()
			return nil, err
		}
	}
	if len(conv.msgs) == 0 {
		if err := conv.add(msg{Role: "system", Content: workerSystem, Turn: t.Number}); err != nil {
			conv.Close()
			return nil, err
		}
	}
	if i := conv.unfinished(); i >= 0 && conv.msgs[i].Content == prompt {
		m.since = conv.msgs[i].Turn
		return m, nil
	}
	if err := conv.add(msg{Role: "user", Content: prompt, Turn: t.Number}); err != nil {
		conv.Close()
		return nil, err
	}
	return m, nil
}

// unfinished is the index of the prompt of an exchange that has no final
// answer yet, or -1.
func (c *conversation) unfinished() int {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		switch m := c.msgs[i]; {
		case m.Role == "assistant" && m.Done:
			return -1
		case m.Role == "user":
			return i
		}
	}
	return -1
}

// bound keeps the stored conversation within limit characters, rewriting
// it when older messages had to go.
func (m *memory) bound(limit int) error {
	b := bounded(m.msgs, limit, m.since)
	if len(b) == len(m.msgs) && total(b) == total(m.msgs) {
		return nil
	}
	return m.rewrite(b)
}
