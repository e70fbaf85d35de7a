// Command oml-server is the OML server: serve, migrate, keygen, bootstrap,
// reindex, subtree-index, and the master-key rotation (rotate-master-key,
// rewrap).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/omlhub/oml/contexts/attachments"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "oml-server:", err)
		}
		os.Exit(1)
	}
}

const usage = `usage: oml-server <command> [flags]

commands:
  serve                     serve HTTP and MCP on OML_LISTEN
  migrate [up|down N|status] apply, revert or show database migrations
  keygen --dir DIR          write a signing key and a master key; print their env lines
  rotate-master-key --dir DIR
                            write a new master key (and the address key kept from the
                            current one); print the env lines that roll replicas onto it
  rewrap [--check] [--batch N]
                            move stored data keys to the current master key, while
                            serving; print JSON; exit 1 while any is left on an old key
  bootstrap --tenant NAME   create a tenant, its universe and an admin key; print JSON
  reindex [--tenant ID] [--fts-language CONFIG] [--batch N]
                            re-embed entries with the configured embedder and re-parse
                            full text in the tenant's language, while serving; print JSON
  subtree-index --tenant ID --workarea ID|PATH [--drop]
                            build (or drop) an HNSW index of the tenant's entries under
                            the workarea's subtree, which recall inside it walks, while
                            serving; print JSON
  subtree-index --list [--tenant ID]
                            list subtree indexes (name, valid, bytes, predicate); print JSON
`

// pdfChildCommand runs one PDF parse as serve's sandbox child.
const pdfChildCommand = "extract-pdf"

// run is the only wiring point: everything it needs comes in as arguments.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stderr)
	case "migrate":
		return migrateCmd(ctx, rest, getenv, stdout)
	case "keygen":
		return keygen(rest, stdout, stderr)
	case "rotate-master-key":
		return rotateMasterKey(rest, getenv, stdout, stderr)
	case "rewrap":
		return rewrap(ctx, rest, getenv, stdout, stderr)
	case "bootstrap":
		return bootstrap(ctx, rest, getenv, stdout, stderr)
	case "reindex":
		return reindex(ctx, rest, getenv, stdout, stderr)
	case "subtree-index":
		return subtreeIndex(ctx, rest, getenv, stdout, stderr)
	case pdfChildCommand:
		// Hidden: the sandboxed PDF parser serve starts per review.
		return attachments.RunPDFChild(os.Stdin, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
