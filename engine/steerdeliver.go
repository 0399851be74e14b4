package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/simjecture/simjecture/store"
)

// PromptSteering is one message of guidance as a worker prompt carries it;
// New marks the first prompt to carry it.
type PromptSteering struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	New       bool   `json:"new"`
	Text      string `json:"text"`
}

// deliverSteering picks the guidance of a worker turn's prompt, in the
// transaction that starts the turn: the latest delivered messages (so a
// restarted session hears them again) and the oldest undelivered ones,
// which it stamps delivered.
func deliverSteering(tx *store.Tx, turn int, now time.Time) ([]PromptSteering, error) {
	seen, err := tx.LatestDeliveredSteering(promptSeenSteering)
	if err != nil {
		return nil, err
	}
	fresh, err := tx.UndeliveredSteering(promptNewSteering)
	if err != nil {
		return nil, err
	}
	out := make([]PromptSteering, 0, len(seen)+len(fresh))
	for _, r := range seen {
		out = append(out, PromptSteering{ID: r.ID, CreatedAt: r.CreatedAt, Text: r.Text})
	}
	if len(fresh) == 0 {
		return out, nil
	}
	ids := make([]string, 0, len(fresh))
	at := now.UTC().Format(time.RFC3339Nano)
	for _, r := range fresh {
		if err := tx.MarkSteeringDelivered(r.Seq, at); err != nil {
			return nil, err
		}
		ids = append(ids, r.ID)
		out = append(out, PromptSteering{ID: r.ID, CreatedAt: r.CreatedAt, New: true, Text: r.Text})
	}
	return out, appendEvent(tx, SteeringDeliveredPayload{IDs: ids, Turn: turn})
}

// steeringText is the prompt's section of guidance, "" without any.
func steeringText(msgs []PromptSteering) (string, error) {
	if len(msgs) == 0 {
		return "", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n# Operator guidance (%s; weigh it, and record what you decide)\n", SteeringAuthority)
	for _, m := range msgs {
		line, err := json.Marshal(m)
		if err != nil {
			return "", fmt.Errorf("encode guidance %s: %w", m.ID, err)
		}
		b.WriteString("- ")
		b.Write(line)
		b.WriteString("\n")
	}
	return b.String(), nil
}
