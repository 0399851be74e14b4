package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// canonicalJSON encodes v with sorted keys and no HTML escaping: maps are
// sorted by encoding/json, so identities are built from maps.
func canonicalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("canonical json: " + err.Error()) // identities are built from plain values
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func decodeJSON(b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}
