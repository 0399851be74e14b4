package installer

import "errors"

var (
	// ErrInvalid is returned for invalid input (a bad prefix or account
	// name); nothing was written. The command exits 2.
	ErrInvalid = errors.New("invalid install request")

	// ErrUnmanaged is returned when the prefix, its launcher or the account's
	// home already exists and is not ours (no marker, or a marker for another
	// account); it was left untouched. The command exits 1.
	ErrUnmanaged = errors.New("existing installation left unchanged")

	// ErrAccount is returned when an existing account of the requested name
	// cannot be used (uid 0, or another home folder).
	ErrAccount = errors.New("unusable account")

	// ErrStep is returned when a step of the installation failed; what was
	// installed before keeps working.
	ErrStep = errors.New("installation step failed")
)
