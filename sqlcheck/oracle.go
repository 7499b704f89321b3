package sqlcheck

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/antlr4-go/antlr/v4"
	"github.com/bytebase/parser/plsql"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// errorList collects ANTLR's syntax errors.
type errorList struct {
	*antlr.DefaultErrorListener
	errs []string
}

func (l *errorList) SyntaxError(_ antlr.Recognizer, _ any, line, column int, msg string, _ antlr.RecognitionException) {
	l.errs = append(l.errs, fmt.Sprintf("%d:%d: %s", line, column, msg))
}

// OracleSyntax parses text, one or more statements each ended by ';' (a
// PL/SQL block ends with END;), with the PL/SQL grammar of
// github.com/bytebase/parser, and returns its syntax errors: none when it
// parses.
func OracleSyntax(text string) []string {
	// Two stages: SLL prediction, which ignores the parser's context,
	// decides most statements many times faster, and gives up at the
	// first error; only then does the full LL parse decide, and its
	// errors are the answer. A statement SLL accepts, LL accepts too.
	if oracleParsesSLL(text) {
		return nil
	}
	p, errs := newOracleParser(text)
	p.Sql_script()
	return errs.errs
}

// oracleParsesSLL reports whether text parses with SLL prediction and no
// error recovery (the first stage of OracleSyntax).
func oracleParsesSLL(text string) bool {
	p, errs := newOracleParser(text)
	bail := &bailStrategy{BailErrorStrategy: antlr.NewBailErrorStrategy()}
	p.SetErrorHandler(bail)
	p.GetInterpreter().SetPredictionMode(antlr.PredictionModeSLL)
	p.Sql_script()
	return !bail.failed && len(errs.errs) == 0
}

// newOracleParser returns a parser of text, with no parse tree, whose
// lexer's and parser's syntax errors go to the list it returns.
func newOracleParser(text string) (*plsql.PlSqlParser, *errorList) {
	lexer := plsql.NewPlSqlLexer(antlr.NewInputStream(text))
	p := plsql.NewPlSqlParser(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
	p.SetVersion12(true)
	errs := &errorList{DefaultErrorListener: antlr.NewDefaultErrorListener()}
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(errs)
	p.RemoveErrorListeners()
	p.AddErrorListener(errs)
	p.BuildParseTrees = false
	return p, errs
}

// bailStrategy ends the parse at its first error and remembers that
// there was one. antlr's BailErrorStrategy alone does not end it here:
// each rule clears the error it leaves after recovering, and its caller
// goes on parsing (and reports the cancellation as an error of its own,
// which the default reporting cannot describe). Consuming the input to
// its end stops every rule.
type bailStrategy struct {
	*antlr.BailErrorStrategy
	failed bool
}

func (b *bailStrategy) ReportError(antlr.Parser, antlr.RecognitionException) { b.failed = true }

func (b *bailStrategy) Recover(p antlr.Parser, e antlr.RecognitionException) {
	b.failed = true
	b.BailErrorStrategy.Recover(p, e)
	for p.GetTokenStream().LA(1) != antlr.TokenEOF {
		p.Consume()
	}
}

// CheckOracle checks one statement as the oracle dialect sends it (SQL
// without its ';', a PL/SQL block ending with END;) or as a generated file
// holds it: the PL/SQL grammar must parse it and the DDL each of its blocks
// runs with EXECUTE IMMEDIATE, and neither may hold a trap of OracleTraps.
func CheckOracle(stmt string) error {
	var errs []error
	for i, s := range append([]string{stmt}, OracleInnerDDL(stmt)...) {
		what := "the statement"
		if i > 0 {
			what = "the DDL its block runs"
		}
		text := strings.TrimSpace(s)
		if !strings.HasSuffix(text, ";") {
			text += ";"
		}
		if syn := OracleSyntax(text); len(syn) > 0 {
			errs = append(errs, fmt.Errorf("%s: the PL/SQL grammar refuses it: %s", what, strings.Join(syn, "; ")))
		}
		if traps := OracleTraps(s); len(traps) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s", what, strings.Join(traps, "; ")))
		}
	}
	return errors.Join(errs...)
}

// SplitOracleFile returns the statements of a generated Oracle migration
// file, each with its ';' (a PL/SQL block's END; included): the generator
// ends each statement with ';' at the end of a line and follows it with a
// blank line, and a block holds ';' of its own, so SplitFile's split at
// every ';' does not fit. Comment lines are left out.
func SplitOracleFile(content string) []string {
	var out []string
	for _, chunk := range strings.Split(content, ";\n\n") {
		var lines []string
		for _, l := range strings.Split(chunk, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			out = append(out, strings.TrimSuffix(s, ";")+";")
		}
	}
	return out
}

// executeImmediate finds the DDL text inside a block's EXECUTE IMMEDIATE
// '...' (quotes doubled).
var executeImmediate = regexp.MustCompile(`(?s)EXECUTE IMMEDIATE '((?:[^']|'')*)'`)

// OracleInnerDDL returns the DDL statements that the blocks in text run
// with EXECUTE IMMEDIATE, unquoted: the grammar sees the block's string,
// not the statement inside it.
func OracleInnerDDL(text string) []string {
	var out []string
	for _, m := range executeImmediate.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.ReplaceAll(m[1], "''", "'"))
	}
	return out
}

// lockingLimit finds a query block that both limits its rows and locks
// them: Oracle refuses FETCH FIRST with FOR UPDATE (ORA-02014), and a
// ROWNUM filter around a locking query locks every row it matches.
var lockingLimit = regexp.MustCompile(`(?is)(FETCH\s+(FIRST|NEXT)|ROWNUM|OFFSET\s+\S+\s+ROWS)[^;]*FOR\s+UPDATE|FOR\s+UPDATE[^;]*(FETCH\s+(FIRST|NEXT)|ROWNUM)`)

// OracleTraps returns the traps of Oracle that a grammar does not see in
// stmt: FOR UPDATE in a statement that limits rows with FETCH FIRST or
// ROWNUM, an IN list of more than 1,000 values (ORA-01795), an identifier
// longer than 128 bytes, and a column of a CREATE TABLE or an ALTER TABLE
// ... ADD named by a reserved word (the grammar takes some, as LEVEL, that the server
// refuses), and a bare bind in an INSERT ... SELECT list for a CLOB column.
func OracleTraps(stmt string) []string {
	var traps []string
	for _, col := range bareLOBBinds(stmt) {
		traps = append(traps, fmt.Sprintf("a bare bind in the SELECT list for CLOB column %q (a string over 4,000 bytes travels as LONG, refused in an expression: ORA-00997; bind a CLOB inside TO_CLOB)", col))
	}
	if lockingLimit.MatchString(stmt) {
		traps = append(traps, "FOR UPDATE with FETCH FIRST or ROWNUM (ORA-02014, or every matching row locked)")
	}
	for _, list := range inLists(stmt) {
		if list > 1000 {
			traps = append(traps, fmt.Sprintf("an IN list of %d values (ORA-01795 above 1,000)", list))
		}
	}
	for _, col := range tableColumns(stmt) {
		if oracleReserved[strings.ToUpper(col)] {
			traps = append(traps, fmt.Sprintf("column %q is an Oracle reserved word", col))
		}
	}
	for _, id := range identifier.FindAllString(stmt, -1) {
		if len(id) > 128 {
			traps = append(traps, fmt.Sprintf("identifier %q is %d bytes, over 128", id, len(id)))
		}
	}
	return traps
}

var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_$#]*`)

// inLists returns the number of values in each IN (...) list of stmt.
func inLists(stmt string) []int {
	var out []int
	up := strings.ToUpper(stmt)
	for i := 0; ; {
		j := strings.Index(up[i:], " IN (")
		if j < 0 {
			return out
		}
		start := i + j + len(" IN (")
		depth, n := 1, 1
		k := start
		for ; k < len(stmt) && depth > 0; k++ {
			switch stmt[k] {
			case '(':
				depth++
			case ')':
				depth--
			case ',':
				if depth == 1 {
					n++
				}
			}
		}
		out = append(out, n)
		i = k
	}
}

// oracleReserved are Oracle's SQL reserved words (SQL Language Reference,
// "Oracle SQL Reserved Words") and PL/SQL's (PL/SQL Language Reference,
// "PL/SQL Reserved Words").
var oracleReserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK
CLUSTER COLUMN COLUMN_VALUE COMMENT COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE
DESC DISTINCT DROP ELSE EXCLUSIVE EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED
IMMEDIATE IN INCREMENT INDEX INITIAL INSERT INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG
MAXEXTENTS MINUS MLSLABEL MODE MODIFY NESTED_TABLE_ID NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER
OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID
ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE TABLE THEN
TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH
AT BEGIN CASE CLUSTERS COLAUTH COLUMNS CRASH CURSOR DECLARE END EXCEPTION FETCH FUNCTION GOTO IF
INDEXES OVERLAPS PROCEDURE SQL SUBTYPE TABAUTH TYPE VIEWS WHEN`) {
		m[w] = true
	}
	return m
}()

// createTable finds the column list of a CREATE TABLE or of an ALTER
// TABLE ... ADD (...).
var createTable = regexp.MustCompile(`(?is)^\s*(?:CREATE\s+TABLE\s+\S+|ALTER\s+TABLE\s+\S+\s+ADD)\s*\((.*)\)`)

// tableColumns returns the names of the columns a CREATE TABLE defines or
// an ALTER TABLE adds (the first word of each top-level item that is not a
// constraint).
func tableColumns(stmt string) []string {
	m := createTable.FindStringSubmatch(stmt)
	if m == nil {
		return nil
	}
	var cols []string
	depth, from := 0, 0
	body := m[1]
	for i := 0; i <= len(body); i++ {
		if i < len(body) {
			switch body[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		f := strings.Fields(body[from:i])
		from = i + 1
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "PRIMARY", "CONSTRAINT", "UNIQUE", "CHECK", "FOREIGN":
			continue
		}
		cols = append(cols, f[0])
	}
	return cols
}

// lobColumns are the names of the schema's columns that Oracle stores as
// CLOB (Text and JSON), in any table.
var lobColumns = func() map[string]bool {
	m := map[string]bool{}
	add := func(c dialect.Column) {
		if c.Type == dialect.Text || c.Type == dialect.JSON {
			m[strings.ToLower(c.Name)] = true
		}
	}
	for _, v := range migrations.All("") {
		for _, c := range v.Changes {
			if c.Table != nil {
				for _, col := range c.Table.Columns {
					add(col)
				}
			}
			if c.Column != nil {
				add(*c.Column)
			}
		}
	}
	return m
}()

// insertSelect finds an INSERT INTO t (columns) SELECT list FROM.
var insertSelect = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+\S+\s*\(([^)]*)\)\s*SELECT\s+(.*?)\s+FROM\s`)

// bareBind is a bind alone: '?' as written, ':1' as the dialect sends it.
var bareBind = regexp.MustCompile(`^(\?|:\w+)$`)

// bareLOBBinds returns the CLOB columns that an INSERT ... SELECT fills
// from a bind standing alone in its SELECT list. There the bind is an
// expression, not a VALUES item: go-ora sends a string over 4,000 bytes as
// LONG, which Oracle refuses in an expression, so the bind must be a CLOB
// (TO_CLOB(?) with a Clob value), as {text?} and {json?} render it.
func bareLOBBinds(stmt string) []string {
	m := insertSelect.FindStringSubmatch(stmt)
	if m == nil {
		return nil
	}
	cols := strings.Split(m[1], ",")
	items := topLevelItems(m[2])
	var out []string
	for i, c := range cols {
		c = strings.ToLower(strings.TrimSpace(c))
		if i < len(items) && lobColumns[c] && bareBind.MatchString(strings.TrimSpace(items[i])) {
			out = append(out, c)
		}
	}
	return out
}

// topLevelItems splits a list at the commas outside parentheses.
func topLevelItems(list string) []string {
	var out []string
	depth, from := 0, 0
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, list[from:i])
				from = i + 1
			}
		}
	}
	return append(out, list[from:])
}
