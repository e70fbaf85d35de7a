package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
	"time"
)

// Sandbox parses a PDF where a parser that loops, recurses without end or
// exhausts memory cannot take the server down with it: it returns the
// material, or an error when the parser died or ctx ended first.
type Sandbox func(ctx context.Context, pdf []byte) (Material, error)

// Limits of the child process.
const (
	childStack  = 64 << 20 // a deeper recursion is a crafted file: the child dies, not the server
	childMemory = 1 << 30  // soft limit for the child's heap
	childAS     = 4 << 30  // hard limit on the child's address space
	childFiles  = 16       // open files
	// MaxSandboxes is how many children parse at once per replica.
	MaxSandboxes = 2
)

// Subprocess is a Sandbox that runs name with args (the server's own
// binary and its hidden extract-pdf command), the PDF on its stdin and
// the material as JSON on its stdout, with an environment of env alone
// (no secret of the server's reaches it) and at most MaxSandboxes at a
// time. The child is killed when ctx ends.
func Subprocess(env []string, name string, args ...string) Sandbox {
	slots := make(chan struct{}, MaxSandboxes)
	return func(ctx context.Context, pdf []byte) (Material, error) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return Material{}, ctx.Err()
		}
		defer func() { <-slots }()
		cmd := exec.CommandContext(ctx, name, args...)
		// The child dies with the server, even a server killed with
		// SIGKILL (and its CPU limit ends a loop if that fails).
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Env = append([]string{"GOMAXPROCS=1"}, env...)
		cmd.Stdin = bytes.NewReader(pdf)
		var out, errOut limitedBuffer
		out.max, errOut.max = 8*MaxText, 4<<10
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return Material{}, fmt.Errorf("%w: %s", err, bytes.TrimSpace(errOut.Bytes()))
		}
		var m Material
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			return Material{}, fmt.Errorf("child answer: %w", err)
		}
		return m, nil
	}
}

// RunChild is the child's side of [Subprocess]: it limits its own stack,
// heap and address space, reads one PDF (at most MaxPDF bytes) from in and
// writes its material as JSON to out.
func RunChild(in io.Reader, out io.Writer) error {
	debug.SetMaxStack(childStack)
	debug.SetMemoryLimit(childMemory)
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: childAS, Max: childAS})
	cpu := uint64(PDFTimeout/time.Second) + 1
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu})
	// stdin, stdout, stderr and the runtime's own: the parser opens none.
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: childFiles, Max: childFiles})
	data, err := io.ReadAll(io.LimitReader(in, MaxPDF+1))
	if err != nil {
		return err
	}
	if len(data) > MaxPDF {
		return errors.New("PDF too large")
	}
	return json.NewEncoder(out).Encode(PDFText(data))
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// ChildEnv names the environment variable that turns a test binary into
// the sandbox's child (tests of packages that run the sandbox).
const ChildEnv = "OML_EXTRACT_PDF_CHILD"

// MaybeChild runs the child and exits when the process was started as one
// (ChildEnv set); a test's TestMain calls it first.
func MaybeChild() {
	if os.Getenv(ChildEnv) == "" {
		return
	}
	if err := RunChild(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
