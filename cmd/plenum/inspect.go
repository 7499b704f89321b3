package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

const inspectAbout = `
Shows what Plenum's tables hold: item counts by state for each queue, the
most recent barriers (expected, arrived, failed, fired), and the registered
owners with the age of their last heartbeat, measured on the database's
clock (the only clock Plenum trusts). It only reads. Names are printed as they are when every character in
them prints; any other name is shown quoted, with its control characters,
bidirectional overrides and invalid bytes escaped as in Go ("\x1b").

An SQLite file is named with --db; a server database with --dsn (or
--dsn-env, --dsn-file) and, where the DSN's form does not say which,
--dialect, as for every command.`

// inspectOptions configure an inspect run.
type inspectOptions struct {
	// Database names the database and the tables' prefix; without a
	// dialect or a DSN whose form names one, the database is an SQLite
	// file, which must exist.
	cmdline.Database
	Limit int // barriers and owners shown
}

func runInspectCmd(ctx context.Context, e env, args []string) error {
	o := inspectOptions{Limit: 20}
	fs := newFlags(e, "inspect", "inspect (--db FILE | [--dialect NAME] --dsn DSN) [flags]", inspectAbout)
	o.Register(fs, "", "to read")
	o.RegisterPrefix(fs)
	fs.IntVar(&o.Limit, "limit", o.Limit, "most barriers and owners to list")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	return runInspect(ctx, e.stdout, o)
}

// runInspect prints the state of the tables under o.Prefix in o.DB to w.
func runInspect(ctx context.Context, w io.Writer, o inspectOptions) error {
	if err := o.CheckPrefix(); err != nil {
		return err
	}
	if o.Limit < 1 || o.Limit > 10000 {
		return cmdline.Usagef("--limit %d: want 1 to 10,000", o.Limit)
	}
	db, d, where, v, st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	now, err := st.Now(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Plenum tables %s* in %s: schema version %d, database clock %s\n",
		o.Prefix, where, v, now.Format(time.RFC3339Nano))
	in := inspector{db: db, d: d, st: st, names: migrations.NamesFor(o.Prefix), now: now, limit: o.Limit, w: w}
	for _, f := range []func(context.Context) error{in.items, in.barriers, in.unfired, in.owners} {
		if err := f(ctx); err != nil {
			return err
		}
	}
	return nil
}

// openStore opens the database o names and a store on its tables under
// o.Prefix, which must exist: it migrates nothing. It returns where the
// database is (see open) and its schema version. The caller closes db.
func (o inspectOptions) openStore(ctx context.Context) (db *sql.DB, d dialect.Dialect, where string, version int, st *core.Store, err error) {
	db, d, where, err = o.open()
	if err != nil {
		return nil, nil, "", 0, nil, err
	}
	fail := func(err error) (*sql.DB, dialect.Dialect, string, int, *core.Store, error) {
		db.Close()
		return nil, nil, "", 0, nil, err
	}
	version, err = migrations.Version(ctx, db, d, o.Prefix)
	if err != nil {
		return fail(err)
	}
	if version == 0 {
		return fail(fmt.Errorf("%s has no Plenum tables under prefix %s (is --prefix right?)", where, o.Prefix))
	}
	st, err = core.Open(ctx, db, d, core.Options{Prefix: o.Prefix})
	if err != nil {
		return fail(err)
	}
	return db, d, where, version, st, nil
}

// open opens the database o names, and says where it is for the header:
// the file's path, or the dialect's name for a server (a DSN may hold a
// password, so it is not printed). An SQLite file must exist already:
// inspect only reads, and should not leave an empty file behind a typo.
func (o inspectOptions) open() (*sql.DB, dialect.Dialect, string, error) {
	if o.Dialect == "" && o.DSN == "" && o.DB == "" && o.DSNEnv == "" && o.DSNFile == "" {
		return nil, nil, "", cmdline.Usagef("inspect needs a database: --db FILE for an SQLite file, or --dialect NAME --dsn DSN for any database (dialects: %s)", strings.Join(cmdline.Openable(), ", "))
	}
	r, dsn, err := o.Resolve(sqlite.Name)
	if err != nil {
		return nil, nil, "", err
	}
	if r.DSN.File {
		db, err := openExisting(r, dsn)
		return db, r.Dialect, dsn, err
	}
	db, d, err := cmdline.OpenDialect(r.Dialect.Name(), dsn)
	if err != nil {
		return nil, nil, "", err
	}
	return db, d, "the " + d.Name() + " database", nil
}

type inspector struct {
	db    *sql.DB
	d     dialect.Dialect
	st    *core.Store
	names migrations.Names
	now   time.Time
	limit int
	w     io.Writer
}

var states = []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled}

func (in inspector) items(ctx context.Context) error {
	rows, err := in.db.QueryContext(ctx, "SELECT queue, state, COUNT(*) FROM "+in.names.Items+" GROUP BY queue, state")
	if err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	defer rows.Close()
	byQueue := map[string]map[core.State]int64{}
	for rows.Next() {
		var queue, state string
		var n int64
		if err := rows.Scan(&queue, &state, &n); err != nil {
			return fmt.Errorf("read items: %w", err)
		}
		if byQueue[queue] == nil {
			byQueue[queue] = map[core.State]int64{}
		}
		byQueue[queue][core.State(state)] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	queues := make([]string, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	sort.Strings(queues)

	fmt.Fprintf(in.w, "\nItems (%s)\n", cmdline.Plural(len(queues), "queue"))
	if len(queues) == 0 {
		return nil
	}
	// Queue names left-aligned, counts right-aligned: tabwriter aligns
	// every column one way, so the widths are measured here.
	cells := make([][]string, 0, len(queues)+1)
	head := []string{"queue"}
	for _, s := range states {
		head = append(head, string(s))
	}
	cells = append(cells, append(head, "total"))
	for _, q := range queues {
		var total int64
		row := []string{cmdline.Printable(q)}
		for _, s := range states {
			row = append(row, cmdline.Commas(byQueue[q][s]))
		}
		for _, n := range byQueue[q] {
			total += n // states this build does not know count too
		}
		cells = append(cells, append(row, cmdline.Commas(total)))
	}
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, row := range cells {
		fmt.Fprintf(in.w, "  %-*s", widths[0], row[0])
		for i, c := range row[1:] {
			fmt.Fprintf(in.w, "  %*s", widths[i+1], c)
		}
		fmt.Fprintln(in.w)
	}
	return nil
}

func (in inspector) barriers(ctx context.Context) error {
	var total int64
	if err := in.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+in.names.Barriers).Scan(&total); err != nil {
		return fmt.Errorf("read barriers: %w", err)
	}
	rows, err := in.db.QueryContext(ctx, "SELECT id, name, expected, arrived, failed, sealed, fired_at, join_item_id FROM "+
		in.names.Barriers+" ORDER BY created_at DESC, id DESC"+in.d.Limit(in.limit))
	if err != nil {
		return fmt.Errorf("read barriers: %w", err)
	}
	defer rows.Close()
	fmt.Fprintf(in.w, "\nBarriers (%s, newest first)\n", shown(total, in.limit))
	if total == 0 {
		return rows.Err()
	}
	tw := indented(in.w)
	fmt.Fprint(tw, "id\tname\texpected\tarrived\tfailed\tsealed\tfired\tjoin item\n")
	for rows.Next() {
		var (
			id                        uuid.UUID
			join                      uuid.NullUUID
			name                      string
			expected, arrived, failed int64
			sealed                    bool
			fired                     = dbTime{d: in.d}
		)
		if err := rows.Scan(&id, &name, &expected, &arrived, &failed, &sealed, &fired, &join); err != nil {
			return fmt.Errorf("read barriers: %w", err)
		}
		firedAt, joinID := "no", "-"
		if fired.valid {
			firedAt = fired.t.Format(time.RFC3339Nano)
		}
		if join.Valid {
			joinID = join.UUID.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", id, cmdline.Printable(name), cmdline.Commas(expected), cmdline.Commas(arrived), cmdline.Commas(failed), yesNo(sealed), firedAt, joinID)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read barriers: %w", err)
	}
	return tw.Flush()
}

// unfired lists the barriers that have not fired, oldest first: a fan-in
// that stays here long after its children should have finished is stuck.
func (in inspector) unfired(ctx context.Context) error {
	bs, err := in.st.UnfiredBarriers(ctx, core.UnfiredBarriersParams{Limit: in.limit})
	if err != nil {
		return fmt.Errorf("read unfired barriers: %w", err)
	}
	n := len(bs)
	more := ""
	if n == in.limit {
		more = "+"
	}
	fmt.Fprintf(in.w, "\nUnfired barriers (%s%s, oldest first; unsealed: dispatch unfinished, sealed: children pending)\n", cmdline.Commas(int64(n)), more)
	if n == 0 {
		return nil
	}
	tw := indented(in.w)
	fmt.Fprint(tw, "id\tname\tcreated\texpected\tarrived\tfailed\tsealed\n")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s ago\t%s\t%s\t%s\t%s\n", b.ID, cmdline.Printable(b.Name), in.age(dbTime{t: b.CreatedAt, valid: true}),
			cmdline.Commas(b.Expected), cmdline.Commas(b.Arrived), cmdline.Commas(b.Failed), yesNo(b.Sealed))
	}
	return tw.Flush()
}

func (in inspector) owners(ctx context.Context) error {
	var total int64
	if err := in.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+in.names.Processes).Scan(&total); err != nil {
		return fmt.Errorf("read owners: %w", err)
	}
	rows, err := in.db.QueryContext(ctx, "SELECT id, name, host, pid, started_at, last_heartbeat_at FROM "+
		in.names.Processes+" ORDER BY last_heartbeat_at, id"+in.d.Limit(in.limit))
	if err != nil {
		return fmt.Errorf("read owners: %w", err)
	}
	defer rows.Close()
	fmt.Fprintf(in.w, "\nOwners (%s, most silent first; ages on the database clock)\n", shown(total, in.limit))
	if total == 0 {
		return rows.Err()
	}
	tw := indented(in.w)
	fmt.Fprint(tw, "id\tname\thost\tpid\tstarted\tlast heartbeat\n")
	for rows.Next() {
		var (
			id        uuid.UUID
			name      sql.NullString // NULL when the owner registered none
			host      sql.NullString // Oracle stores an empty host as NULL
			pid       int64
			started   = dbTime{d: in.d}
			heartbeat = dbTime{d: in.d}
		)
		if err := rows.Scan(&id, &name, &host, &pid, &started, &heartbeat); err != nil {
			return fmt.Errorf("read owners: %w", err)
		}
		if name.String == "" {
			name.String = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s ago\t%s ago\n", id, cmdline.Printable(name.String), cmdline.Printable(host.String), pid, in.age(started), in.age(heartbeat))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read owners: %w", err)
	}
	return tw.Flush()
}

// age is how long before the database's now t was, rounded for reading.
func (in inspector) age(t dbTime) string {
	if !t.valid {
		return "?"
	}
	d := in.now.Sub(t.t)
	switch {
	case d < 10*time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// indented returns a tabwriter whose lines start two spaces in, like the
// other tables.
func indented(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&indentWriter{w: w}, 0, 0, 2, ' ', 0)
}

// indentWriter puts two spaces before every line it writes.
type indentWriter struct {
	w   io.Writer
	mid bool // inside a line
}

// Write writes p, indenting each new line.
func (iw *indentWriter) Write(p []byte) (int, error) {
	var out []byte
	for _, c := range p {
		if !iw.mid {
			out = append(out, ' ', ' ')
			iw.mid = true
		}
		out = append(out, c)
		if c == '\n' {
			iw.mid = false
		}
	}
	if _, err := iw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func shown(total int64, limit int) string {
	if total > int64(limit) {
		return fmt.Sprintf("%d of %s", limit, cmdline.Commas(total))
	}
	return cmdline.Commas(total)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// dbTime scans a time column through the dialect; NULL leaves it invalid.
type dbTime struct {
	d     dialect.Dialect
	t     time.Time
	valid bool
}

// Scan implements sql.Scanner.
func (v *dbTime) Scan(src any) error {
	if src == nil {
		v.valid = false
		return nil
	}
	t, err := v.d.ScanTime(src)
	if err != nil {
		return err
	}
	v.t, v.valid = t, true
	return nil
}
