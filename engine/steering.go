package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/simjecture/simjecture/store"
)

// Limits of operator guidance (contract section 14).
const (
	MaxSteeringChars    = 8000 // characters of one message, after trimming
	MaxSteeringMessages = 64   // messages per study
	MaxRequestKeyChars  = 120
	promptNewSteering   = 4 // undelivered messages one worker prompt carries
	promptSeenSteering  = 4 // latest delivered messages it repeats
)

// SteeringAuthority is how every carrier of guidance marks it.
const SteeringAuthority = "operator guidance, advisory: it changes no contract, verdict or deadline"

// Steering is one message of operator guidance as status, packets and
// prompts show it. RequestKey and DeliveredAt are null when absent.
type Steering struct {
	ID          string  `json:"id"`
	Text        string  `json:"text"`
	RequestKey  *string `json:"request_key"`
	CreatedAt   string  `json:"created_at"`
	DeliveredAt *string `json:"delivered_at"`
}

// SteerResult is what steer returns: the stored message and whether it was
// stored before under the same request key.
type SteerResult struct {
	Steering
	Existing bool `json:"existing"`
}

// Steer queues advisory guidance for the study's worker. It writes one
// transaction, with or without a live supervisor, which reads it at its
// next turn start.
func Steer(ctx context.Context, c Campaign, text, key string) (SteerResult, error) {
	text = strings.TrimSpace(text)
	if err := checkSteering(text, key); err != nil {
		return SteerResult{}, err
	}
	s, err := c.Open(ctx)
	if err != nil {
		return SteerResult{}, err
	}
	defer s.Close()
	var res SteerResult
	err = s.Tx(ctx, func(tx *store.Tx) error {
		res, err = queueSteering(tx, c, text, key, time.Now().UTC())
		return err
	})
	if err != nil || res.Existing || Owned(c) {
		return res, err
	}
	// With no supervisor to rewrite them, the reports anchor the new event
	// (verify compares the log's head with report.json's).
	return res, WriteReports(ctx, c, s)
}

func checkSteering(text, key string) error {
	switch {
	case text == "":
		return fmt.Errorf("--message is empty: %w", ErrInvalid)
	case utf8.RuneCountInString(text) > MaxSteeringChars:
		return fmt.Errorf("--message has %d characters; at most %d: %w", utf8.RuneCountInString(text), MaxSteeringChars, ErrInvalid)
	case utf8.RuneCountInString(key) > MaxRequestKeyChars:
		return fmt.Errorf("--request-key is longer than %d characters: %w", MaxRequestKeyChars, ErrInvalid)
	case strings.TrimSpace(key) != key || strings.ContainsFunc(key, IsControl):
		return fmt.Errorf("--request-key has surrounding spaces or control characters: %w", ErrInvalid)
	}
	return nil
}

func queueSteering(tx *store.Tx, c Campaign, text, key string, now time.Time) (SteerResult, error) {
	if err := checkNotEnded(tx, c, now); err != nil {
		return SteerResult{}, err
	}
	if key != "" {
		row, found, err := tx.SteeringByKey(key)
		switch {
		case err != nil:
			return SteerResult{}, err
		case found && row.Text == text:
			return SteerResult{Steering: steeringOf(row), Existing: true}, nil
		case found:
			return SteerResult{}, fmt.Errorf("request key %q was used for different guidance (%s): %w", key, row.ID, ErrInvalid)
		}
	}
	n, err := tx.CountSteering()
	if err != nil {
		return SteerResult{}, err
	}
	if n >= MaxSteeringMessages {
		return SteerResult{}, fmt.Errorf("the study has %d messages of guidance, the most it takes; "+
			"start a continuation phase (study --continue-from %s): %w", n, c.Dir, ErrInvalid)
	}
	row := store.SteeringRow{ID: newSteeringID(), RequestKey: key, Text: text, CreatedAt: now.Format(time.RFC3339Nano),
		TextSHA256: docHash([]byte(text))}
	if row.Seq, err = tx.AddSteering(row); err != nil {
		return SteerResult{}, err
	}
	return SteerResult{Steering: steeringOf(row)}, appendEvent(tx, SteeringQueuedPayload{ReportFormat: ReportFormat, ID: row.ID,
		Chars: utf8.RuneCountInString(text), RequestKey: key, SHA256: row.TextSHA256})
}

// checkNotEnded refuses guidance for a study that has ended or whose
// deadline has passed: only a continuation phase goes on from there.
func checkNotEnded(tx *store.Tx, c Campaign, now time.Time) error {
	st, err := getState(tx)
	if err != nil {
		return err
	}
	row, err := tx.GetStudy()
	if err != nil {
		return err
	}
	var k Contract
	if err := json.Unmarshal(row.ContractJSON, &k); err != nil {
		return fmt.Errorf("decode contract: %w", err)
	}
	ended := string(st.Status)
	if !terminal(st.Status) {
		if now.Before(k.Deadline) {
			return nil
		}
		ended = "past its deadline"
	}
	return fmt.Errorf("the study has ended (%s); guidance goes to a continuation phase: "+
		"simjecture study --campaign NEW --continue-from %s: %w", ended, c.Dir, ErrInvalid)
}

func newSteeringID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return "steer_" + hex.EncodeToString(b[:])
}

func steeringOf(r store.SteeringRow) Steering {
	s := Steering{ID: r.ID, Text: r.Text, CreatedAt: r.CreatedAt}
	if r.RequestKey != "" {
		s.RequestKey = &r.RequestKey
	}
	if r.DeliveredAt != "" {
		s.DeliveredAt = &r.DeliveredAt
	}
	return s
}

func steeringList(rows []store.SteeringRow) []Steering {
	out := make([]Steering, 0, len(rows))
	for _, r := range rows {
		out = append(out, steeringOf(r))
	}
	return out
}

// listSteering reads every message, oldest first.
func listSteering(tx *store.Tx) ([]Steering, error) {
	rows, err := tx.ListSteering()
	return steeringList(rows), err
}
