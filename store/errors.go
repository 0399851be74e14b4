package store

import "errors"

// ErrNotFound is returned when a requested row does not exist.
var ErrNotFound = errors.New("not found")

// ErrNoStudy is returned by OpenExisting when the folder holds no study database.
var ErrNoStudy = errors.New("no study database")
