package sandbox

import "errors"

var (
	// ErrInvalidSpec is returned by Run when the Spec cannot be executed as given.
	ErrInvalidSpec = errors.New("invalid sandbox spec")

	// ErrUnprivileged is returned when a cooperative backend is used as root.
	ErrUnprivileged = errors.New("cooperative execution requires an unprivileged account")

	// ErrSealChanged is returned when a sealed file's content differs from the
	// hash recorded at submission, before anything was started.
	ErrSealChanged = errors.New("sealed file changed before isolated execution")

	// ErrUnknownBackend is returned by ParseBackend for a name it does not know.
	ErrUnknownBackend = errors.New("unknown execution backend")

	// ErrHelper is returned when the helper process failed to report a result.
	ErrHelper = errors.New("sandbox helper failed")

	// ErrRunnerLost (with ErrHelper) is returned when the sandbox runner
	// ended or stopped the run, not the experiment: it was killed, or told
	// to stop (SIGTERM, SIGINT, its host gone), and killed the run's tree.
	// The experiment did not fail on its own; the caller records it
	// interrupted.
	ErrRunnerLost = errors.New("the sandbox runner stopped the run")

	// ErrMissingExecutable is returned when bwrap or proot cannot be found.
	ErrMissingExecutable = errors.New("missing executable")
)
