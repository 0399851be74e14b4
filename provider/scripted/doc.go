// Package scripted is the built-in scripted agent and the bundled demo study.
//
// The agent is an ordinary `command` agent (contract section 11): the
// simjecture binary starts itself as `simjecture __scripted-agent` for every
// turn, and [Main] dispatches on SIMJECTURE_ROLE.
//
// # Worker
//
// A worker turn is a fresh process in the campaign's research/ folder. It
// derives everything from `lab status` and the files it finds, takes the next
// steps of the demo plan through `$SIMJECTURE_BIN lab CALL` (exactly the path
// any external agent uses), leaves a note and exits. The plan: write
// kepler.py, measure forward Euler at the stated case, request a review with
// the disposition the measurement implies, and once root is falsified commit
// a symplectic repair, measure it at the stated case and at a harder
// challenge case, and request its review.
//
// # Reviewer
//
// A reviewer turn reads the review packet on stdin, re-hashes every artifact
// it names, reads the measured figures from the artifacts and compares them
// with the threshold parsed from the claim's acceptance criterion (or, for
// root, from the hypothesis text). No figure in a verdict is hard-coded. The
// verdict is the last line of stdout.
//
// # Demo science
//
// The embedded kepler.py integrates an eccentric Kepler orbit with forward
// Euler or leapfrog (python3 standard library only) and reports the maximum
// relative energy error. [DemoHypothesis] and [DemoInstructions] are the
// operator's files for the bundled demo.
package scripted
