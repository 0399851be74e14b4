package engine

import "errors"

// ErrInvalid marks invalid usage or input: exit 2, nothing written.
var ErrInvalid = errors.New("invalid input")

// ErrLocked is returned when another supervisor owns the campaign.
var ErrLocked = errors.New("another supervisor owns this study")

// ErrLab marks a lab call refused for its arguments or the study's state.
var ErrLab = errors.New("lab call refused")

// EndedError is a pause or cancel of a study that has already ended: it
// changes nothing (no event, no report rewrite). The CLI says so and exits
// 0 (docs/campaign.md, "Pause and cancel").
type EndedError struct {
	Dir    string // the campaign folder
	Status Status // its terminal status
}

func (e *EndedError) Error() string {
	return "study " + e.Dir + " has already ended (" + string(e.Status) + ")"
}
