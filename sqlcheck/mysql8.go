package sqlcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"vitess.io/vitess/go/vt/sqlparser"
)

// MySQLVersion is the server version whose grammar the MySQL checks use.
const MySQLVersion = "8.0.40"

// mysqlParser parses with vitess's MySQL grammar at MySQLVersion (version
// comments and version-gated syntax follow it).
var mysqlParser = func() *sqlparser.Parser {
	p, err := sqlparser.New(sqlparser.Options{MySQLServerVersion: MySQLVersion})
	if err != nil {
		panic(err)
	}
	return p
}()

// ParseMySQL8 parses sql, one statement, with the MySQL 8 grammar of
// vitess.io/vitess, strictly: vitess's plain Parse accepts a DDL statement
// it cannot read as a "partial DDL" and drops the rest silently (a
// WHERE on a CREATE INDEX, say); ParseStrictDDL refuses it.
func ParseMySQL8(sql string) (sqlparser.Statement, error) {
	return mysqlParser.ParseStrictDDL(sql)
}

// CheckMySQL8 parses sql with the MySQL 8 grammar and applies the rules of
// MySQL 8 that a grammar does not see: no system variable, function or
// information_schema table that MySQL 8 removed (removedInMySQL8), and no
// subquery that reads the table an UPDATE or DELETE changes (error 1093,
// ER_UPDATE_TABLE_USED). It also reports whether sql is a claim's locking
// SELECT, and refuses one that does not skip locked rows (mysqlClaim).
func CheckMySQL8(sql string) (claim bool, err error) {
	stmt, err := ParseMySQL8(sql)
	if err != nil {
		return false, err
	}
	claim, err = mysqlClaim(stmt)
	return claim, errors.Join(err, removedInMySQL8(stmt), targetTableInSubquery(stmt))
}

// mysqlClaim reports whether stmt is a claim's candidates: a SELECT that
// locks the rows it reads and takes the first of them in an order (ORDER
// BY and LIMIT). Without UPDATE ... RETURNING a claim is that SELECT, an
// UPDATE and a read-back; the SELECT must be FOR UPDATE SKIP LOCKED, or
// claimers queue behind each other's locks (a fence's lock, by key and
// without LIMIT, waits on purpose).
func mysqlClaim(stmt sqlparser.Statement) (bool, error) {
	sel, ok := stmt.(*sqlparser.Select)
	if !ok || sel.Lock == sqlparser.NoLock || sel.Limit == nil || len(sel.OrderBy) == 0 {
		return false, nil
	}
	if sel.Lock != sqlparser.ForUpdateLockSkipLocked {
		return true, fmt.Errorf("a claim's candidates (SELECT ... ORDER BY ... LIMIT with a lock) are locked %q, not FOR UPDATE SKIP LOCKED", strings.TrimSpace(sel.Lock.ToString()))
	}
	return true, nil
}

// removedVariables are system variables MySQL 8.0 removed that MariaDB
// (and MySQL 5.7) still have; a statement naming one fails with error
// 1193 (unknown system variable) on MySQL 8. Sources: the MySQL 8.0
// Reference Manual, "Features Removed in MySQL 8.0", and WL#9636 (the
// tx_* variables renamed transaction_*).
var removedVariables = map[string]string{
	"tx_isolation":                   "transaction_isolation",
	"tx_read_only":                   "transaction_read_only",
	"query_cache_type":               "",
	"query_cache_size":               "",
	"query_cache_limit":              "",
	"query_cache_min_res_unit":       "",
	"query_cache_wlock_invalidate":   "",
	"have_query_cache":               "",
	"log_warnings":                   "log_error_verbosity",
	"innodb_large_prefix":            "",
	"innodb_file_format":             "",
	"innodb_file_format_check":       "",
	"innodb_file_format_max":         "",
	"innodb_locks_unsafe_for_binlog": "READ COMMITTED",
	"innodb_support_xa":              "",
	"old_passwords":                  "",
	"secure_auth":                    "",
	"show_compatibility_56":          "",
	"date_format":                    "",
	"datetime_format":                "",
	"time_format":                    "",
	"max_tmp_tables":                 "",
	"sync_frm":                       "",
}

// removedTables are information_schema tables MySQL 8.0 removed (the
// variables and status moved to performance_schema; WL#8057).
var removedTables = []string{"global_variables", "session_variables", "global_status", "session_status"}

// removedFunctions are functions MySQL 8.0 removed.
var removedFunctions = []string{"password", "encrypt", "des_encrypt", "des_decrypt"}

// removedInMySQL8 refuses what stmt names that MySQL 8 no longer has.
func removedInMySQL8(stmt sqlparser.Statement) error {
	var errs []error
	for _, v := range collect[*sqlparser.Variable](stmt) {
		name := strings.ToLower(v.Name.String())
		if instead, ok := removedVariables[name]; ok {
			msg := fmt.Sprintf("system variable %s was removed in MySQL 8.0 (error 1193 there)", name)
			if instead != "" {
				msg += "; use " + instead
			}
			errs = append(errs, errors.New(msg))
		}
	}
	for _, t := range collect[sqlparser.TableName](stmt) {
		if strings.EqualFold(t.Qualifier.String(), "information_schema") && slices.Contains(removedTables, strings.ToLower(t.Name.String())) {
			errs = append(errs, fmt.Errorf("information_schema.%s was removed in MySQL 8.0; use performance_schema.%s", t.Name.String(), strings.ToLower(t.Name.String())))
		}
	}
	for _, f := range collect[*sqlparser.FuncExpr](stmt) {
		if slices.Contains(removedFunctions, f.Name.Lowered()) {
			errs = append(errs, fmt.Errorf("function %s() was removed in MySQL 8.0", f.Name.String()))
		}
	}
	return errors.Join(errs...)
}

// targetTableInSubquery refuses an UPDATE or DELETE with a subquery that
// reads a table the statement changes: MySQL refuses it with error 1093
// ("You can't specify target table ... for update in FROM clause"), which
// MariaDB does not always raise. The one exception MySQL documents is a
// derived table that is materialized rather than merged into the outer
// query (Restrictions on Subqueries, and Optimizing Derived Tables): one
// with LIMIT, DISTINCT, GROUP BY, HAVING, an aggregate, a UNION, or a
// NO_MERGE hint. A derived table that can be merged shields nothing.
func targetTableInSubquery(stmt sqlparser.Statement) error {
	var targets []string
	var clauses []sqlparser.SQLNode
	switch s := stmt.(type) {
	case *sqlparser.Update:
		targets = directTables(s.TableExprs)
		clauses = []sqlparser.SQLNode{s.Exprs, s.Where, s.OrderBy}
		// A subquery in a joined table expression (not a derived table)
		// is read too: the ON conditions.
		for _, te := range s.TableExprs {
			for _, j := range collect[*sqlparser.JoinTableExpr](te) {
				clauses = append(clauses, j.Condition)
			}
		}
	case *sqlparser.Delete:
		targets = directTables(s.TableExprs)
		clauses = []sqlparser.SQLNode{s.Where, s.OrderBy}
	default:
		return nil
	}
	var errs []error
	for _, c := range clauses {
		for _, sq := range collect[*sqlparser.Subquery](c) {
			for _, t := range readTables(sq.Select) {
				if slices.Contains(targets, t) {
					errs = append(errs, fmt.Errorf("a subquery reads %s, the table the statement changes, other than through a materialized derived table: MySQL refuses it with error 1093 (ER_UPDATE_TABLE_USED)", t))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// directTables returns the base tables of table expressions, not those
// inside derived tables.
func directTables(tes []sqlparser.TableExpr) []string {
	var out []string
	var walk func(te sqlparser.TableExpr)
	walk = func(te sqlparser.TableExpr) {
		switch t := te.(type) {
		case *sqlparser.AliasedTableExpr:
			if tn, ok := t.Expr.(sqlparser.TableName); ok {
				out = append(out, strings.ToLower(tn.Name.String()))
			}
		case *sqlparser.JoinTableExpr:
			walk(t.LeftExpr)
			walk(t.RightExpr)
		case *sqlparser.ParenTableExpr:
			for _, e := range t.Exprs {
				walk(e)
			}
		}
	}
	for _, te := range tes {
		walk(te)
	}
	return out
}

// readTables returns the base tables a query reads as MySQL executes it:
// those it names, those of its subqueries, and those of derived tables
// the optimizer may merge into it; not those of materialized derived
// tables.
func readTables(q sqlparser.TableStatement) []string {
	var out []string
	var walk func(n sqlparser.SQLNode)
	walk = func(n sqlparser.SQLNode) {
		_ = sqlparser.Walk(func(node sqlparser.SQLNode) (bool, error) {
			switch t := node.(type) {
			case *sqlparser.DerivedTable:
				if !materialized(t.Select) {
					walk(t.Select)
				}
				return false, nil
			case *sqlparser.ColName:
				// A column's qualifier names a table, but reading an outer
				// table's column from a correlated subquery is no read of
				// that table: only table references count.
				return false, nil
			case sqlparser.TableName:
				if !t.Name.IsEmpty() {
					out = append(out, strings.ToLower(t.Name.String()))
				}
			}
			return true, nil
		}, n)
	}
	walk(q)
	return out
}

// materialized reports whether MySQL must materialize a derived table
// with this query instead of merging it into the outer query.
func materialized(q sqlparser.TableStatement) bool {
	sel, ok := q.(*sqlparser.Select)
	if !ok {
		return true // a UNION is materialized
	}
	if sel.Limit != nil || sel.Distinct || sel.GroupBy != nil || sel.Having != nil {
		return true
	}
	if sel.Comments != nil && strings.Contains(strings.ToUpper(sqlparser.String(sel.Comments)), "NO_MERGE") {
		return true
	}
	return len(collect[sqlparser.AggrFunc](sel.SelectExprs)) > 0
}
