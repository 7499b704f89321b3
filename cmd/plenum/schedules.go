package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

const schedulesAbout = `
Schedules kept in the database, whose ticks every worker run with
StoredSchedules enqueues, each tick once however many run:

  list      every stored schedule: its timing, zone, queue and kind,
            whether it is paused, its watermark (the last tick passed) and
            its next tick
  set       create the schedule --name, or change it: --every or --cron
            (with --zone, an IANA time zone), the item's --queue, --kind,
            --payload, --priority and --max-attempts, --max-catch-up; a
            flag left out is left empty, not kept. A change of timing
            owes no tick from before the change
  pause     hold back its ticks (from the moment the command returns)
  resume    let it tick again from its next tick (the paused ones are
            passed over: backfill them if they are wanted)
  trigger   enqueue its item now, off its timing
  backfill  enqueue its ticks from --from to --to (RFC 3339) that are not
            in the queue, up to its watermark; a tick whose item
            retention deleted is enqueued again
  delete    delete it (items already enqueued stay)

The same from Go: core.Store's SetSchedule, Schedules, PauseSchedule,
ResumeSchedule, TriggerSchedule, BackfillSchedule and DeleteSchedule. Run
"plenum schedules <subcommand> -h" for its flags.`

// schedulesOptions configure a schedules subcommand.
type schedulesOptions struct {
	// Database names the database and the tables' prefix, which must
	// hold Plenum's tables already.
	cmdline.Database
	Name     string
	Spec     core.ScheduleSpec
	Payload  string
	From, To string
}

func runSchedulesCmd(ctx context.Context, e env, args []string) error {
	usage := func() {
		fmt.Fprintf(e.stderr, "Usage: plenum schedules <list|set|pause|resume|trigger|backfill|delete> [flags]\n%s\n", schedulesAbout)
	}
	if len(args) == 0 {
		usage()
		return cmdline.ErrUsageShown
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help", "help":
		usage()
		return nil
	case "list", "set", "pause", "resume", "trigger", "backfill", "delete":
	default:
		return cmdline.Usagef("schedules: unknown subcommand %q (want list, set, pause, resume, trigger, backfill or delete)", sub)
	}
	var o schedulesOptions
	synopsis := "schedules " + sub + " (--db FILE | [--dialect NAME] --dsn DSN) --name NAME [flags]"
	if sub == "list" {
		synopsis = "schedules list (--db FILE | [--dialect NAME] --dsn DSN) [flags]"
	}
	fs := newFlags(e, "schedules "+sub, synopsis, schedulesAbout)
	purpose := "to change"
	if sub == "list" {
		purpose = "to read"
	}
	o.Register(fs, "", purpose)
	o.RegisterPrefix(fs)
	if sub != "list" {
		fs.StringVar(&o.Name, "name", "", "the schedule's `name` (required)")
	}
	sp := &o.Spec
	switch sub {
	case "set":
		fs.DurationVar(&sp.Every, "every", 0, "the `interval` between ticks, from the Unix epoch (or --cron)")
		fs.StringVar(&sp.Cron, "cron", "", "a five-field cron `expression` (or --every)")
		fs.StringVar(&sp.TimeZone, "zone", "", "the IANA time `zone` --cron is read in (default UTC)")
		fs.IntVar(&sp.MaxCatchUp, "max-catch-up", 0, "most ticks enqueued at once after downtime, the latest (0: 1)")
		fs.StringVar(&sp.Item.Queue, "queue", "", "the `queue` of each tick's item (required)")
		fs.StringVar(&sp.Item.Kind, "kind", "", "the `kind` of each tick's item")
		fs.StringVar(&o.Payload, "payload", "", "the item's payload, as `JSON`")
		fs.IntVar(&sp.Item.Priority, "priority", 0, "the item's priority")
		fs.IntVar(&sp.Item.MaxAttempts, "max-attempts", 0, "the item's attempts before it is dead (0: the store's default)")
	case "backfill":
		fs.StringVar(&o.From, "from", "", "the first `time` of the range, RFC 3339 (required)")
		fs.StringVar(&o.To, "to", "", "the last `time` of the range, RFC 3339 (default: the watermark)")
	}
	if err := cmdline.ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if sub != "list" && o.Name == "" {
		return cmdline.Usagef("schedules %s: --name is required", sub)
	}
	if err := o.CheckPrefix(); err != nil {
		return err
	}
	var from, to time.Time
	if sub == "backfill" {
		var err error
		if from, err = time.Parse(time.RFC3339Nano, o.From); err != nil {
			return cmdline.Usagef("schedules backfill: --from %q: want an RFC 3339 time (2026-03-08T00:00:00Z)", o.From)
		}
		to = time.Now().Add(core.MaxDelay)
		if o.To != "" {
			if to, err = time.Parse(time.RFC3339Nano, o.To); err != nil {
				return cmdline.Usagef("schedules backfill: --to %q: want an RFC 3339 time", o.To)
			}
		}
	}
	db, _, _, _, st, err := inspectOptions{Database: o.Database}.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	name := cmdline.Printable(o.Name)
	switch sub {
	case "list":
		err = listSchedules(ctx, e.stdout, st)
	case "set":
		sp.Name = o.Name
		if o.Payload != "" {
			sp.Item.Payload = json.RawMessage(o.Payload)
		}
		var created bool
		if created, err = st.SetSchedule(ctx, *sp); err == nil {
			verb := "Changed"
			if created {
				verb = "Created"
			}
			fmt.Fprintf(e.stdout, "%s schedule %s: %s\n", verb, name, timing(*sp))
		}
	case "pause":
		if err = st.PauseSchedule(ctx, o.Name); err == nil {
			fmt.Fprintf(e.stdout, "Paused schedule %s\n", name)
		}
	case "resume":
		if err = st.ResumeSchedule(ctx, o.Name); err == nil {
			fmt.Fprintf(e.stdout, "Resumed schedule %s from its next tick\n", name)
		}
	case "trigger":
		var tk core.Tick
		if tk, err = st.TriggerSchedule(ctx, o.Name); err == nil {
			fmt.Fprintf(e.stdout, "Triggered schedule %s: item %s\n", name, tk.ID)
		}
	case "backfill":
		var bf core.Backfill
		if bf, err = st.BackfillSchedule(ctx, o.Name, from, to); err == nil {
			fmt.Fprintf(e.stdout, "Backfilled schedule %s through %s: %d ticks enqueued, %d already in the queue\n",
				name, bf.Through.Format(time.RFC3339), len(bf.Enqueued), bf.Existed)
		}
	case "delete":
		if err = st.DeleteSchedule(ctx, o.Name); err == nil {
			fmt.Fprintf(e.stdout, "Deleted schedule %s (if it was stored)\n", name)
		}
	}
	return refusedAsUsage(err)
}

// timing says when a schedule ticks: "every 5m0s" or "cron 0 2 * * * in
// Europe/Paris".
func timing(sp core.ScheduleSpec) string {
	if sp.Cron == "" {
		return "every " + sp.Every.String()
	}
	return "cron " + sp.Cron + " in " + orDefault(sp.TimeZone, "UTC")
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// listSchedules prints every stored schedule.
func listSchedules(ctx context.Context, w io.Writer, st *core.Store) error {
	all, err := st.Schedules(ctx)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Fprintln(w, "No schedules stored in the database.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTIMING\tQUEUE\tKIND\tSTATE\tWATERMARK\tNEXT TICK")
	for _, sc := range all {
		state, next := "active", sc.Next.Format(time.RFC3339)
		if sc.Paused {
			state, next = "paused", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cmdline.Printable(sc.Name), strings.TrimSpace(timing(sc.ScheduleSpec)),
			cmdline.Printable(sc.Item.Queue), cmdline.Printable(orDefault(sc.Item.Kind, "-")), state, sc.Watermark.Format(time.RFC3339), next)
	}
	return tw.Flush()
}
