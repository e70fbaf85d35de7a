// Command oml is the admin and agent CLI of OML: it manages workareas, keys
// and grants over the HTTP API, checks the journal, and calls MCP tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "oml:", err)
		os.Exit(1)
	}
}

const usage = `usage: oml [global flags] <command> [flags]

global flags (before the command):
  --url URL        server URL (env OML_URL, default http://127.0.0.1:8080)
  --key KEY        API key (env OML_API_KEY; else api_key in ~/.config/oml/config.toml, mode 0600)
  --json           print the server's JSON instead of the human form
  --timeout D      give up after D (default 30s)

commands:
  enrol --reason TEXT | --token T [--force]
                                    ask the server (oml --url URL enrol …) to let this agent in, no
                                    key needed; waits for an admin's decision in the inbox, then
                                    stores url and api_key in $XDG_CONFIG_HOME/oml/config.toml or
                                    ~/.config/oml/config.toml (mode 0600); --token waits again on a
                                    request already made
  workarea create --parent ID|PATH --name NAME [--status S] [crew flags] [--idempotency-key K]
                                    create a child workarea (admin)
  workarea show ID|PATH             show a workarea, its children and your effective verbs
  workarea list [--cursor C] [--limit N]
                                    the workareas you read, parents before children, paged
  workarea set ID|PATH [--status S] [crew flags | --clear-crew]
                                    change a workarea's status or crew (admin)
      S is development|committed|validated; crew flags are
      --crew-name X --crew-charter-uri Y --crew-external-manager Z
  key issue --principal NAME --role reader|writer|dreamer|admin|operator
                                    issue a key; its token is shown only once (admin)
  key list                          list the tenant's keys (admin)
  key revoke KEY_ID                 revoke a key (admin)
  grant add --key KEY_ID --workarea ID|PATH --scope SCOPE [--effect allow|deny] [--idempotency-key K]
                                    grant (or deny) SCOPE on a subtree (admin); SCOPE is
                                    reader|writer|dreamer.propose|dreamer.review|admin
  grant remove GRANT_ID             remove a grant (admin)
  grant list --workarea ID|PATH | --key KEY_ID [--epoch N] [--cursor C] [--limit N]
                                    grants bound to a workarea (admin on it) or given to a key
                                    (admin on universe), live now or in force at epoch N, paged
  artifact show ARTIFACT_ID         show one artifact as this key may see it
  artifact demote|erase ARTIFACT_ID --reason TEXT
                                    take a promoted claim out of recall, or erase a claim's
                                    text and attachments keeping a tombstone (admin)
  ban add --principal NAME --reason TEXT
                                    refuse a principal's submissions (admin)
  ban list                          list bans (admin)
  ban lift BAN_ID                   lift a ban (admin)
  attach FILE [--media-type T] [--part-size BYTES] [--limit-rate BYTES_PER_SECOND] [--no-progress]
                                    upload a file as an attachment (resumable: after a crash or
                                    Ctrl-C, run it again); prints the upload session to reference
                                    from oml_remember (--json: the session as JSON). No overall
                                    timeout unless --timeout is given.
  inbox [--workarea W] [--status S] [--since SEQ] [--wait SECONDS]
                                    the human's inbox: questions and approvals in what you read
                                    (--wait: up to 60 s for something after --since to land)
  inbox answer ID TEXT              answer a question (admin on its workarea)
  inbox decide ID approve|decline [--note TEXT] [--role R --grant WORKAREA:SCOPE …]
                                    decide an approval (admin on its workarea), or an
                                    enrol_request: approving gives the agent's token role R
                                    (reader, writer, dreamer) and the grants
  kb get PATH --workarea W [--version V]
                                    read a knowledge-base page: its promoted head (your own
                                    versions waiting for review listed), or an earlier version
  kb put PATH --workarea W [--file F|-] [--if-version V|absent] [--stale-after T]
                                    submit a page version from a file or standard input; held
                                    until someone else approves it
  kb list --workarea W [--prefix P] [--cursor C] [--limit N]
                                    the workarea's promoted pages
  kb history PATH --workarea W [--cursor C] [--limit N]
                                    the page's promoted versions, newest first
  kb revert PATH VERSION --workarea W [--if-version V]
                                    submit an earlier version's content as a new version
  kb delete PATH --workarea W [--if-version V]
                                    submit the page's deletion (held for review like a version)
  docs publish --workarea W --format html|markdown [--file F|-] [--title T] [--visibility V] [--password P]
                                    publish a document from a file or standard input (held for
                                    review); --update DOC_ID [--base-version V] for a new version
  docs get DOC_ID [--version V]     read a document
  docs list --workarea W [--session S] [--cursor C] [--limit N]
                                    the workarea's documents you may read
  search QUERY [--workarea W | --session S] [--limit N]
                                    search feed events, promoted knowledge-base pages and
                                    documents, and your own session brains
  review [--workarea W]             review interactively: serve the next item, show it (lineage,
                                    findings, attachment material), then approve, reject (with a
                                    reason), skip or quit; goes on until the queue is empty
  review next [--workarea W] [--skip ID,…]
                                    serve the next item and print it (--json: the serve, or null
                                    when nothing waits)
  review approve|reject SERVE_ID --reason TEXT
                                    give a serve its verdict (a rejection needs a reason)
  review release SERVE_ID           give a serve back unjudged
  review queue                      what waits for your review, per workarea
  web link                          print a one-time link that signs a browser in as this key
                                    (the link carries a code, valid 10 minutes, never the key)
  evidence export --workarea W [--from T] [--to T] [--out FILE]
                                    the signed evidence file of a subtree and time range (admin)
  evidence verify FILE --signing-key BASE64 [--previous-signing-key BASE64]...
                                    check it offline: every signature, record and journal link;
                                    exit 1 naming what fails
  whoami                            show the key's principal, role, tenant and root workarea
  tools                             list the MCP tools with their input schemas
  call TOOL [JSON|-]                call one MCP tool with a JSON object of arguments
                                    (- reads them from stdin)
  mcp                               serve MCP on stdin/stdout for stdio-only harnesses, forwarding
                                    every request to the server with the key
  admin journal verify              recompute the journal's hash chain; exit 1 if broken
  admin read-log --key KEY_ID | --workarea ID|PATH [--cursor C] [--limit N]
                                    who read what (recall, graph), newest first: a key's reads
                                    (admin on universe) or the reads scoped to a workarea (admin
                                    on it)
  admin quota show                  the tenant's write quota and the keys' request limits
  admin quota set --writes-per-minute N | --key KEY_ID --requests-per-minute N
                                    set them (0 clears; each replica enforces N/OML_REPLICAS)
  admin simulation create --workarea W --name NAME --audience KEY_ID,…
  admin simulation end SIMULATION_ID
  admin simulation list             simulations (D10): a workarea's subtree and an audience of
                                    keys (admin or operator), whose rows only that audience sees
  admin upload-limit [BYTES]        show the tenant's attachment size ceiling, or set it (at
                                    most the deployment's; 0 falls back to the deployment's)
  version                           show this CLI's build and the server's
  help                              show this text
`

// cli is what every command needs: the global flags and the streams.
type cli struct {
	// configFile is where `oml enrol` stores the key it was given.
	configFile string
	url        string
	key        string
	json       bool
	timeout    time.Duration
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
}

// run is the only wiring point: everything it needs comes in as arguments.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runIO(ctx, args, getenv, os.Stdin, stdout, stderr)
}

// runIO is run with stdin made explicit, so tests can feed `call TOOL -`.
func runIO(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := &cli{stdin: stdin, stdout: stdout, stderr: stderr, configFile: configPath(getenv)}
	fs := flag.NewFlagSet("oml", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&c.url, "url", envOr(getenv, "OML_URL", "http://127.0.0.1:8080"), "server URL")
	fs.StringVar(&c.key, "key", getenv("OML_API_KEY"), "API key")
	fs.BoolVar(&c.json, "json", false, "print raw JSON responses")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "overall timeout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	// The config file fills in what neither a flag nor the environment set.
	if c.key == "" || getenv("OML_URL") == "" {
		fc, err := loadConfig(configPath(getenv))
		if err != nil {
			return err
		}
		urlSet := getenv("OML_URL") != ""
		fs.Visit(func(f *flag.Flag) { urlSet = urlSet || f.Name == "url" })
		if !urlSet && fc.URL != "" {
			c.url = fc.URL
		}
		if c.key == "" {
			c.key = fc.Key
		}
	}
	timeoutSet := false
	fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	// An upload takes as long as the file needs; --timeout still bounds it
	// when given.
	// attach, mcp and a waiting inbox run as long as they need; --timeout
	// still bounds them when given.
	long := fs.Arg(0) == "attach" || fs.Arg(0) == "mcp" || fs.Arg(0) == "enrol" || (fs.Arg(0) == "review" && (fs.NArg() == 1 || strings.HasPrefix(fs.Arg(1), "-"))) || (fs.Arg(0) == "inbox" && slices.ContainsFunc(fs.Args(), func(a string) bool {
		return a == "--wait" || a == "-wait" || strings.HasPrefix(a, "--wait=") || strings.HasPrefix(a, "-wait=")
	}))
	if c.timeout > 0 && (!long || timeoutSet) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	err := c.dispatch(ctx, fs.Arg(0), fs.Args()[1:])
	// A command's -h has printed its flags; asking for help is not a failure.
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func (c *cli) dispatch(ctx context.Context, cmd string, args []string) error {
	switch cmd {
	case "workarea":
		return c.workarea(ctx, args)
	case "key":
		return c.keys(ctx, args)
	case "grant":
		return c.grants(ctx, args)
	case "whoami":
		return c.whoami(ctx, args)
	case "tools":
		return c.tools(ctx, args)
	case "mcp":
		return c.mcpProxy(ctx, args)
	case "inbox":
		return c.inbox(ctx, args)
	case "review":
		return c.review(ctx, args)
	case "web":
		return c.web(ctx, args)
	case "evidence":
		return c.evidenceCmd(ctx, args)
	case "call":
		return c.call(ctx, args)
	case "admin":
		return c.admin(ctx, args)
	case "artifact":
		return c.artifacts(ctx, args)
	case "ban":
		return c.bans(ctx, args)
	case "attach":
		return c.attach(ctx, args)
	case "version":
		return c.version(ctx, args)
	case "kb":
		return c.kb(ctx, args)
	case "search":
		return c.search(ctx, args)
	case "docs":
		return c.docs(ctx, args)
	case "enrol":
		return c.enrol(ctx, args)
	case "help", "-h", "--help":
		fmt.Fprint(c.stdout, usage)
		return nil
	}
	fmt.Fprint(c.stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// subcommand picks the verb of a command group ("workarea create" → create).
func (c *cli) subcommand(group string, args []string, verbs string) (string, []string, error) {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage)
		return "", nil, fmt.Errorf("%s: missing subcommand (want %s)", group, verbs)
	}
	return args[0], args[1:], nil
}

// unknownSubcommand refuses a verb the group does not have.
func (c *cli) unknownSubcommand(group, verb, verbs string) error {
	fmt.Fprint(c.stderr, usage)
	return fmt.Errorf("%s: unknown subcommand %q (want %s)", group, verb, verbs)
}

// flags returns a flag set for one subcommand whose -h prints synopsis.
func (c *cli) flags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "usage: oml %s %s\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses fs's flags wherever they stand among args and returns the
// positional arguments, so `oml workarea set ID --status committed` reads
// as the usage shows it (the flag package alone stops at ID). "--" ends
// the flags.
func parse(fs *flag.FlagSet, args []string, want int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if want >= 0 && len(pos) != want {
		fs.Usage()
		return nil, fmt.Errorf("%s: want %d argument(s), got %d", fs.Name(), want, len(pos))
	}
	return pos, nil
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}
