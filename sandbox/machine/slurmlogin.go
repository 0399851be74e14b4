package machine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/simjecture/simjecture/sandbox/slurm"
)

// A Slurm cluster driven through a login node: the Slurm clients run there
// and SHARED_DIR is reached there, both over the SSH workers' transport
// (one ControlMaster connection per login). sandbox/slurm does the work;
// these two types are its Commander and Files on the login node.

// loginTimeout bounds one file operation on the login node.
const loginTimeout = 2 * time.Minute

// exitMissing is the exit code our remote scripts use for a missing file.
const exitMissing = 3

// remoteShell starts a command line on the login node: sshTarget, or a
// local sh in the unit tests.
type remoteShell interface {
	command(ctx context.Context, remote string) (*exec.Cmd, error)
	explain(err error, stderr string) error
}

// login runs commands on the login node.
type login struct {
	sh   remoteShell
	host string
}

func newLogin(p Profile) login { return login{sh: sshTarget{p: p}, host: p.Host} }

// run runs remote with stdin and stdout; exitMissing is fs.ErrNotExist.
func (l login) run(ctx context.Context, remote string, stdin io.Reader, stdout io.Writer) error {
	cmd, err := l.sh.command(ctx, remote)
	if err != nil {
		return err
	}
	var errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == exitMissing {
		return fmt.Errorf("on %s: %w", l.host, fs.ErrNotExist)
	}
	if err != nil {
		return l.sh.explain(err, errb.String())
	}
	return nil
}

// loginExec runs the Slurm clients on the login node.
type loginExec struct{ l login }

// Output runs name with args (each one shell word) on the login node.
func (e loginExec) Output(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	if err := e.l.run(ctx, commandLine(name, args), nil, &out); err != nil {
		return out.String(), fmt.Errorf("%s on %s: %w", name, e.l.host, err)
	}
	return out.String(), nil
}

// commandLine is name and args as one shell command, every word quoted.
func commandLine(name string, args []string) string {
	return quoteWords(append([]string{name}, args...))
}

// quoteWords is words as shell words separated by spaces, each quoted.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quote(w)
	}
	return strings.Join(q, " ")
}

// loginFiles reaches SHARED_DIR on the login node.
type loginFiles struct{ l login }

// script runs a shell script on the login node with args as $1, $2, ….
func (f loginFiles) script(body string, stdin io.Reader, stdout io.Writer, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), loginTimeout)
	defer cancel()
	if err := f.l.run(ctx, "sh -c "+quote(body)+" sh "+quoteWords(args), stdin, stdout); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	return nil
}

// The scripts; $1 is always a SHARED_DIR path.
const (
	readScript   = `[ -e "$1" ] || exit 3; exec cat -- "$1"`
	sumScript    = `[ -e "$1" ] || exit 3; sha256sum -- "$1" | cut -c1-64`
	touchScript  = `touch -- "$1" 2>/dev/null || { mkdir -p -- "$(dirname -- "$1")" && touch -- "$1"; }`
	removeScript = `[ -e "$1" ] || exit 0; chmod -R u+rwX -- "$1" 2>/dev/null; rm -rf -- "$1"`
	// writeScript: $2 the mode, $3 the sha256 the bytes must have ("" = any).
	writeScript = `d=$(dirname -- "$1") && mkdir -p -- "$d" && t=$(mktemp "$d/.part-XXXXXX") || exit 1
if cat > "$t" && s=$(sha256sum -- "$t" | cut -c1-64) && { [ -z "$3" ] || [ "$s" = "$3" ] || { echo "sha256 mismatch: recorded $3, read $s" >&2; false; }; } &&
   chmod "$2" "$t" && mv -f -- "$t" "$1"; then exit 0; fi
rm -f -- "$t"; exit 1`
)

// ReadFile returns path's content on the login node.
func (f loginFiles) ReadFile(path string) ([]byte, error) {
	var out bytes.Buffer
	err := f.script(readScript, nil, &out, path)
	return out.Bytes(), err
}

// WriteFile replaces path atomically on the login node.
func (f loginFiles) WriteFile(path string, data []byte, mode os.FileMode) error {
	return f.script(writeScript, bytes.NewReader(data), io.Discard, path, fmt.Sprintf("%o", mode), "")
}

// RemoveAll removes path and what it holds on the login node.
func (f loginFiles) RemoveAll(path string) error {
	return f.script(removeScript, nil, io.Discard, path)
}

// Touch sets path's modification time on the login node.
func (f loginFiles) Touch(path string) error { return f.script(touchScript, nil, io.Discard, path) }

// Sum hashes path on the login node.
func (f loginFiles) Sum(path string) (string, error) {
	var out bytes.Buffer
	err := f.script(sumScript, nil, &out, path)
	return strings.TrimSpace(out.String()), err
}

// Put streams the local file src to dst; the login node checks its hash.
func (f loginFiles) Put(src, dst string, mode os.FileMode, want string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := f.script(writeScript, in, io.Discard, dst, fmt.Sprintf("%o", mode), want); err != nil {
		return fmt.Errorf("put %s: %w", src, err)
	}
	return nil
}

// Get streams src from the login node into the local file dst, checking
// the bytes that arrived against want.
func (f loginFiles) Get(src, dst string, mode os.FileMode, want string) error {
	err := slurm.WriteChecked(dst, mode, want, func(w io.Writer) error { return f.script(readScript, nil, w, src) })
	if err != nil {
		return fmt.Errorf("get %s: %w", src, err)
	}
	return nil
}
