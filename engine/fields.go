package engine

import "fmt"

// The fields of a request that every study has. Like the agent fields, a
// validation error names the field; the CLI renders it as its flag and the
// TUI in its own words.
const (
	FieldCampaign         Field = "campaign folder"
	FieldHypothesisFile   Field = "hypothesis file"
	FieldInstructionsFile Field = "instructions file"
	FieldAgentBackend     Field = "agent backend"
	FieldMode             Field = "mode"
	FieldCompletionPolicy Field = "completion policy"
	FieldWallSeconds      Field = "wall seconds"
	FieldTurnSeconds      Field = "turn seconds"
	FieldExecutionBackend Field = "execution backend"
	FieldCapabilities     Field = "capabilities folder"
	FieldContinueFrom     Field = "parent study"
	FieldInheritFile      Field = "inherited file"
	FieldWorkers          Field = "workers"
)

// StudyFields lists the request fields every study has, for front ends
// that render them (a test holds the CLI's flags to it).
func StudyFields() []Field {
	return []Field{FieldCampaign, FieldHypothesisFile, FieldInstructionsFile, FieldAgentBackend, FieldMode, FieldCompletionPolicy,
		FieldWallSeconds, FieldTurnSeconds, FieldExecutionBackend, FieldCapabilities, FieldContinueFrom, FieldInheritFile, FieldWorkers}
}

// missingField is a FieldError for a study field left empty.
func missingField(f Field) error { return &FieldError{Field: f, Problem: Missing} }

// badField is a FieldError for a study field whose value is wrong.
func badField(f Field, format string, args ...any) error {
	return &FieldError{Field: f, Problem: Invalid, Err: fmt.Errorf(format, args...)}
}
