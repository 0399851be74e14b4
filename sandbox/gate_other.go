//go:build !amd64

package sandbox

// gateCode is empty where no start gate is written for the architecture:
// runs are then limited at the ptrace stop after the exec (tracegate.go).
var gateCode []byte
