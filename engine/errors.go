package engine

import "errors"

// ErrInvalid marks invalid usage or input: exit 2, nothing written.
var ErrInvalid = errors.New("invalid input")

// ErrLocked is returned when another supervisor owns the campaign.
var ErrLocked = errors.New("another supervisor owns this study")

// ErrLab marks a lab call refused for its arguments or the study's state.
var ErrLab = errors.New("lab call refused")
