package scripted

import "errors"

// ErrLab reports a `lab` call that the harness answered with ok=false.
var ErrLab = errors.New("lab call refused")

// ErrProtocol reports output of `simjecture lab` that is not the expected envelope.
var ErrProtocol = errors.New("malformed lab response")

// ErrNoThreshold reports a claim whose text names no numerical threshold.
var ErrNoThreshold = errors.New("no numerical threshold found")

// ErrNoMetric reports an artifact set that holds no value of the metric.
var ErrNoMetric = errors.New("metric not found in artifacts")

// ErrEnv reports a missing or invalid environment variable.
var ErrEnv = errors.New("invalid environment")
