package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

const limitsAbout = `
Flow control of a queue's items that carry a flow key (the items of one
key form a lane, which claims take in turn under the key's limits):

  list    the queue's default limit, and its lanes a page at a time in
          key order: each one's limit and where it comes from (its own,
          the queue's default, none), its slots in use (claimed items),
          its waiting items (available, due or not; counts stop at
          --count-cap, shown with a +) and its next turn on the database
          clock
  set     set the limit of --key, or the queue's default without --key:
          a key's own limit replaces the default as a whole, and a flag
          left out means no limit, not the old value
  delete  delete the limit of --key (the key follows the default again),
          or the queue's default without --key

A change applies from the next claim of the queue in every process; claims
already held are kept. The same from Go: core.Store's SetLimit,
DeleteLimit and Limits, and browse.Reader's Lanes. Run "plenum limits
<list|set|delete> -h" for their flags.`

// limitsOptions configure a limits subcommand.
type limitsOptions struct {
	// Database names the database and the tables' prefix, which must
	// hold Plenum's tables already.
	cmdline.Database
	Queue, Key string
	// After and Limit page list; CountCap bounds its counts.
	After    string
	Limit    int
	CountCap int64
	// Set is set's limit (Queue and Key are the flags').
	Set core.Limit
}

func runLimitsCmd(ctx context.Context, e env, args []string) error {
	usage := func() { fmt.Fprintf(e.stderr, "Usage: plenum limits <list|set|delete> [flags]\n%s\n", limitsAbout) }
	if len(args) == 0 {
		usage()
		return cmdline.ErrUsageShown
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help", "help":
		usage()
		return nil
	case "list", "set", "delete":
	default:
		return cmdline.Usagef("limits: unknown subcommand %q (want list, set or delete)", sub)
	}
	o := limitsOptions{Limit: browse.DefaultListLimit, CountCap: browse.DefaultCountCap}
	fs := newFlags(e, "limits "+sub, "limits "+sub+" (--db FILE | [--dialect NAME] --dsn DSN) --queue NAME [flags]", limitsAbout)
	o.Register(fs, "", map[string]string{"list": "to read", "set": "to change", "delete": "to change"}[sub])
	o.RegisterPrefix(fs)
	fs.StringVar(&o.Queue, "queue", "", "the `queue` (required)")
	switch sub {
	case "list":
		fs.StringVar(&o.After, "after", "", "list the lanes after this `key` (the page before's last)")
		fs.IntVar(&o.Limit, "limit", o.Limit, "most lanes to list")
		fs.Int64Var(&o.CountCap, "count-cap", o.CountCap, "where each lane's counts stop")
	default:
		fs.StringVar(&o.Key, "key", "", "the flow `key`; without it, the queue's default limit")
	}
	if sub == "set" {
		l := &o.Set
		fs.IntVar(&l.Concurrency, "concurrency", 0, "most items of a key claimed at once, across every process (0: no limit)")
		fs.IntVar(&l.PerProcess, "per-process", 0, "most items of a key one process holds at once (0: no limit)")
		fs.IntVar(&l.Rate, "rate", 0, "most claims of a key per --per, on the database clock (0: no limit)")
		fs.DurationVar(&l.Per, "per", 0, "the rate's `period`, 1ms to 24h; required with --rate")
		fs.IntVar(&l.Burst, "burst", 0, "claims of the rate taken at once after a quiet spell (0: 1)")
		fs.IntVar(&l.Weight, "weight", 0, "a key's share of a claim against the queue's other keys (0: 1)")
	}
	if err := cmdline.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if o.Queue == "" {
		return cmdline.Usagef("limits %s: --queue is required", sub)
	}
	if err := o.CheckPrefix(); err != nil {
		return err
	}
	db, _, _, _, st, err := inspectOptions{Database: o.Database}.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	switch sub {
	case "list":
		err = listLimits(ctx, e.stdout, browse.New(st), o)
	case "set":
		o.Set.Queue, o.Set.Key = o.Queue, o.Key
		if err = st.SetLimit(ctx, o.Set); err == nil {
			fmt.Fprintf(e.stdout, "Set %s: %s\n", limitName(o.Queue, o.Key), o.Set.String())
		}
	case "delete":
		if err = st.DeleteLimit(ctx, o.Queue, o.Key); err == nil {
			fmt.Fprintf(e.stdout, "Deleted %s (if it was set)\n", limitName(o.Queue, o.Key))
		}
	}
	return refusedAsUsage(err)
}

// refusedAsUsage makes input the store refuses (a negative limit, a rate
// without a period) a usage error, naming the field as the store does.
func refusedAsUsage(err error) error {
	if errors.Is(err, core.ErrInvalidInput) {
		return cmdline.Usagef("%s", strings.TrimPrefix(err.Error(), "plenum: "))
	}
	return err
}

// listLimits prints a page of the queue's lanes.
func listLimits(ctx context.Context, w io.Writer, r *browse.Reader, o limitsOptions) error {
	if o.Limit < 1 || o.Limit > browse.MaxListLimit {
		return cmdline.Usagef("--limit %d: want 1 to %d", o.Limit, browse.MaxListLimit)
	}
	page, err := r.Lanes(ctx, browse.LanesParams{Queue: o.Queue, After: o.After, Limit: o.Limit, CountCap: o.CountCap})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Queue %s, database clock %s", cmdline.Printable(o.Queue), page.Now.Format(time.RFC3339Nano))
	if page.Paused {
		fmt.Fprint(w, " (paused)")
	}
	fmt.Fprintln(w)
	def := "none"
	if page.DefaultSet {
		def = page.Default.String()
	}
	fmt.Fprintf(w, "Default limit: %s\n", def)
	if len(page.Lanes) == 0 {
		if o.After == "" {
			fmt.Fprintln(w, "No lanes: no item of the queue has carried a flow key, and no key has a limit.")
		} else {
			fmt.Fprintln(w, "No more lanes.")
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tLIMIT\tFROM\tSLOTS IN USE\tWAITING\tNEXT TURN")
	for _, l := range page.Lanes {
		slots := count(l.Claimed, l.ClaimedCapped)
		if l.Limit.Concurrency > 0 {
			slots += "/" + strconv.Itoa(l.Limit.Concurrency)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cmdline.Printable(l.Key), l.Limit.String(), l.Source,
			slots, count(l.Waiting, l.WaitingCapped), turnWords(page.Now, l))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.Next != "" {
		fmt.Fprintf(w, "More: --after %s\n", strconv.Quote(page.Next))
	}
	return nil
}

// limitName names a limit for a message.
func limitName(queue, key string) string {
	if key == "" {
		return "the default limit of queue " + cmdline.Printable(queue)
	}
	return "the limit of key " + cmdline.Printable(key) + " of queue " + cmdline.Printable(queue)
}

// turnWords says when a lane may next give work, as the dashboard does.
func turnWords(now time.Time, l browse.Lane) string {
	switch {
	case l.NextAt.IsZero() || l.Waiting == 0:
		return "no work"
	case !l.NextAt.After(now):
		return "now"
	}
	return "in " + l.NextAt.Sub(now).Round(time.Millisecond).String()
}

// count writes a capped count with a + when it stopped at the cap.
func count(n int64, capped bool) string {
	s := cmdline.Commas(n)
	if capped {
		s += "+"
	}
	return s
}
