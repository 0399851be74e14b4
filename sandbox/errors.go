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

	// ErrMissingExecutable is returned when bwrap or proot cannot be found.
	ErrMissingExecutable = errors.New("missing executable")
)
