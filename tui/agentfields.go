package tui

import (
	"fmt"

	"github.com/simjecture/simjecture/engine"
)

// formAgentFields ties each backend-dependent input of the new-study form
// to the request field it fills. The form shows an input only when the
// chosen agent backend takes its field (engine.AgentBackend.Needs).
var formAgentFields = []struct {
	input int
	field engine.Field
}{
	{fModel, engine.FieldModel},
	{fExecutable, engine.FieldExecutable},
	{fConnection, engine.FieldProviderConfig},
}

// agentFieldOf is the request field a form input fills, if it depends on
// the agent backend.
func agentFieldOf(input int) (engine.Field, bool) {
	for _, f := range formAgentFields {
		if f.input == input {
			return f.field, true
		}
	}
	return "", false
}

// labelOf is the form label of a request field ("" when the form has none).
func labelOf(field engine.Field) string {
	for _, f := range formAgentFields {
		if f.field == field {
			return fieldLabels[f.input]
		}
	}
	return ""
}

// errText is an error in the operator's words: an engine.FieldError names
// the form's label, not the engine's field (or a CLI flag).
func errText(err error) string {
	fe, ok := engine.AsFieldError(err)
	label := ""
	if ok {
		label = labelOf(fe.Field)
	}
	if label == "" {
		return err.Error()
	}
	switch fe.Problem {
	case engine.Missing:
		return fmt.Sprintf("%s is required for the %s backend", label, fe.Backend)
	case engine.Refused:
		return fmt.Sprintf("the %s backend takes no %s", fe.Backend, label)
	case engine.Invalid:
		return fmt.Sprintf("%s: %v", label, fe.Err)
	}
	return err.Error()
}
