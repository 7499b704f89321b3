package sqlcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/cockroachdb-parser/pkg/sql/parser"
	"github.com/cockroachdb/cockroachdb-parser/pkg/sql/sem/tree"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// ParseCockroach parses sql, which must be one statement, with
// CockroachDB's own grammar (github.com/cockroachdb/cockroachdb-parser,
// the parser of the server, v25.2) and returns its tree: nil for an empty
// query (a comment alone, such as pgx's "-- ping"), which the server
// answers with an empty result.
func ParseCockroach(sql string) (tree.Statement, error) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return nil, err
	}
	if len(stmts) == 0 {
		return nil, nil
	}
	if len(stmts) != 1 {
		return nil, fmt.Errorf("%d statements, want one", len(stmts))
	}
	return stmts[0].AST, nil
}

// CheckCockroach parses sql with CockroachDB's grammar and, when it is a
// claim, checks that the claim locks what it takes with FOR UPDATE SKIP
// LOCKED. It reports whether sql is a claim.
func CheckCockroach(sql string) (claim bool, err error) {
	ast, err := ParseCockroach(sql)
	if err != nil || ast == nil {
		return false, err
	}
	return cockroachClaim(ast)
}

// cockroachClaim reports whether ast is a claim: an UPDATE whose rows come
// from a SELECT of the same table with ORDER BY and LIMIT (the candidates,
// wherever they stand: a CTE, a subquery). Every such SELECT must lock FOR
// UPDATE SKIP LOCKED: without SKIP LOCKED, claimers queue behind each
// other's locks; without the lock, two claimers take the same rows. A
// SELECT nested in the candidates of a SELECT that does lock them only
// names rows for it (a claim of lanes' first items: each lane's read,
// ordered and limited, inside the locking one, which checks the rows
// again once locked), and needs no lock of its own.
func cockroachClaim(ast tree.Statement) (bool, error) {
	up, ok := ast.(*tree.Update)
	if !ok {
		return false, nil
	}
	target := tableNames(up.Table)
	candidates := func(s *tree.Select) bool {
		sc, ok := s.Select.(*tree.SelectClause)
		return ok && s.Limit != nil && len(s.OrderBy) > 0 && overlaps(tableNames(sc.From.Tables), target)
	}
	selects := collect[*tree.Select](up)
	naming := map[*tree.Select]bool{}
	for _, s := range selects {
		if candidates(s) && lockedSkipping(s.Locking) {
			for _, in := range collect[*tree.Select](s.Select) {
				naming[in] = true
			}
		}
	}
	claim := false
	for _, s := range selects {
		if !candidates(s) {
			continue
		}
		claim = true
		if !lockedSkipping(s.Locking) && !naming[s] {
			return true, fmt.Errorf("the claim's candidates (SELECT ... ORDER BY ... LIMIT of %s) are not locked FOR UPDATE SKIP LOCKED: %s", strings.Join(target, ", "), tree.AsString(s))
		}
	}
	return claim, nil
}

// lockedSkipping reports whether the locking clause takes exclusive row
// locks and skips rows others hold.
func lockedSkipping(lc tree.LockingClause) bool {
	for _, it := range lc {
		if it.Strength == tree.ForUpdate && it.WaitPolicy == tree.LockWaitSkipLocked {
			return true
		}
	}
	return false
}

// tableNames returns the names of the tables node reads directly (not
// through subqueries).
func tableNames(node any) []string {
	var names []string
	for _, a := range collect[*tree.AliasedTableExpr](node) {
		if tn, ok := a.Expr.(*tree.TableName); ok {
			names = append(names, string(tn.ObjectName))
		}
	}
	return names
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// CheckCockroachSchema checks the facts of the CockroachDB DDL stmts (the
// up statements of the migrations, in any order, with table names under
// prefix) against the schema they render (migrations.All and the
// migrations table): every table and index of the schema is created; a table
// keyed by one UUID column has a hash-sharded primary key (UUIDv7 keys grow
// with time and would put every insert on one range) and no other table
// has; an index is hash-sharded exactly when the schema marks it
// Sequential (led by a column that grows with time); an index is partial
// exactly when the schema gives it conditions, and its predicate names the
// columns of those conditions; uniqueness and columns are the schema's.
func CheckCockroachSchema(stmts []string, prefix string) error {
	tables := map[string]*tree.CreateTable{}
	indexes := map[string]*tree.CreateIndex{}
	for _, s := range stmts {
		ast, err := ParseCockroach(s)
		if err != nil {
			return fmt.Errorf("%w: %s", err, s)
		}
		switch n := ast.(type) {
		case *tree.CreateTable:
			tables[string(n.Table.ObjectName)] = n
		case *tree.CreateIndex:
			indexes[string(n.Name)] = n
		}
	}
	errs := []error{checkCockroachTable(tables[prefix+"migrations"], migrations.MigrationsTable(prefix))}
	// An index dropped and created again under its name (version 8's
	// items_claim) is checked as last created, as indexes holds it.
	type created struct {
		table string
		ix    dialect.Index
	}
	var names []string
	last := map[string]created{}
	for _, m := range migrations.All(prefix) {
		for _, c := range m.Changes {
			switch {
			case c.Table != nil:
				errs = append(errs, checkCockroachTable(tables[c.Table.Name], *c.Table))
			case c.Index != nil:
				if _, ok := last[c.Index.Name]; !ok {
					names = append(names, c.Index.Name)
				}
				last[c.Index.Name] = created{c.IndexTable, *c.Index}
			}
		}
	}
	for _, name := range names {
		errs = append(errs, checkCockroachIndex(indexes[name], last[name].table, last[name].ix))
	}
	return errors.Join(errs...)
}

func checkCockroachTable(ct *tree.CreateTable, t dialect.Table) error {
	if ct == nil {
		return fmt.Errorf("table %s: no CREATE TABLE", t.Name)
	}
	var pk *tree.UniqueConstraintTableDef
	for _, d := range ct.Defs {
		if u, ok := d.(*tree.UniqueConstraintTableDef); ok && u.PrimaryKey {
			pk = u
		}
	}
	if pk == nil {
		return fmt.Errorf("table %s: no PRIMARY KEY constraint", t.Name)
	}
	var cols []string
	for _, c := range pk.Columns {
		cols = append(cols, string(c.Column))
	}
	if !slices.Equal(cols, t.PrimaryKey) {
		return fmt.Errorf("table %s: primary key (%s), the schema's is (%s)", t.Name, strings.Join(cols, ", "), strings.Join(t.PrimaryKey, ", "))
	}
	c, _ := t.Column(t.PrimaryKey[0])
	wantHash := len(t.PrimaryKey) == 1 && c.Type == dialect.UUID
	if got := pk.Sharded != nil; got != wantHash {
		return fmt.Errorf("table %s: primary key hash-sharded: %v, want %v (a key of one UUID column is hash-sharded, no other)", t.Name, got, wantHash)
	}
	return nil
}

func checkCockroachIndex(ci *tree.CreateIndex, table string, ix dialect.Index) error {
	if ci == nil {
		return fmt.Errorf("index %s: no CREATE INDEX", ix.Name)
	}
	var errs []error
	if got := string(ci.Table.ObjectName); got != table {
		errs = append(errs, fmt.Errorf("on table %s, want %s", got, table))
	}
	var cols []string
	for _, c := range ci.Columns {
		cols = append(cols, string(c.Column))
	}
	if !slices.Equal(cols, ix.Columns) {
		errs = append(errs, fmt.Errorf("columns (%s), want (%s)", strings.Join(cols, ", "), strings.Join(ix.Columns, ", ")))
	}
	if ci.Unique != ix.Unique {
		errs = append(errs, fmt.Errorf("unique %v, want %v", ci.Unique, ix.Unique))
	}
	if got := ci.Sharded != nil; got != ix.Sequential {
		errs = append(errs, fmt.Errorf("hash-sharded (USING HASH) %v, but the schema's Sequential is %v", got, ix.Sequential))
	}
	if got, want := ci.Predicate != nil, len(ix.Where) > 0; got != want {
		errs = append(errs, fmt.Errorf("partial (WHERE) %v, want %v", got, want))
	} else if got {
		var named, want []string
		for _, n := range collect[*tree.UnresolvedName](ci.Predicate) {
			named = append(named, n.String())
		}
		for _, c := range ix.Where {
			want = append(want, c.Column)
		}
		slices.Sort(named)
		slices.Sort(want)
		named, want = slices.Compact(named), slices.Compact(want)
		if !slices.Equal(named, want) {
			errs = append(errs, fmt.Errorf("predicate %s names (%s), the schema's conditions (%s)", tree.AsString(ci.Predicate), strings.Join(named, ", "), strings.Join(want, ", ")))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("index %s: %w", ix.Name, err)
	}
	return nil
}
