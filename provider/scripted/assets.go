package scripted

import _ "embed"

// Command is the hidden subcommand that runs the scripted agent:
// `simjecture __scripted-agent`.
const Command = "__scripted-agent"

// SourceName is the file name of the demo simulation in research/.
const SourceName = "kepler.py"

//go:embed assets/kepler.py
var keplerSource []byte

//go:embed assets/hypothesis.txt
var demoHypothesis string

//go:embed assets/instructions.txt
var demoInstructions string

// DemoHypothesis returns the hypothesis text of the bundled demo study.
func DemoHypothesis() string { return demoHypothesis }

// DemoInstructions returns the operator's instructions for the bundled demo study.
func DemoInstructions() string { return demoInstructions }

// KeplerSource returns a copy of the demo simulation (kepler.py).
func KeplerSource() []byte { return append([]byte(nil), keplerSource...) }
