package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	_ "github.com/plenumdb/plenum/browse" // exposes its statement templates
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/storesql"
)

// Statement is one statement a store can send, rendered exactly as the store
// sends it on its dialect: tables named under the prefix, the clock and lock
// clause expanded, placeholders rebound.
type Statement struct {
	// Name names the template ("lost", "item.get", "claim",
	// "browse.items", ...). One template may render to several statements at one size
	// (the dialect's claim, where it takes more than one).
	Name string
	// Size is the count the statement was rendered at (rows of an INSERT,
	// values of an IN list, branches of a CASE, a LIMIT): 0 for a template
	// that takes none.
	Size int
	// Kinds is the statement's second count: the kinds whose attempt
	// limits it carries (a claim with core.ClaimParams.MaxAttempts), or
	// the lanes a claim of keyed items reads the items of; 0 for others.
	Kinds int
	// SQL is the text as sent.
	SQL string
}

// LargestSize, passed to Catalog.Statements, renders each size-dependent
// statement at the largest size the store sends it at on the dialect
// (within the bind-parameter and IN-list limits, and the batch sizes the
// store splits its work into).
const LargestSize = -1

// Catalog is the enumeration of every statement template a store sends
// (core's, and the browse package's reads), for one dialect and one
// store's options. It exists so that a test can see
// every statement the store can send (to check it with a database's
// grammar, say), and tell whether a statement recorded on the wire is one
// of them. Statements the dialect writes itself (its Check, Begin, Lock and
// DDL) and the migrations package's are not in it; the claim statements
// are, as the dialect's Claim writes them, and so are the skip-locked
// probe's (ProveSkipLocked), which the migrator sends too.
//
// A Catalog is safe for concurrent use. It never touches a database: a
// dialect's Claim runs against a stand-in connection that records what it
// is sent.
type Catalog struct {
	templates []storesql.Template
	shapes    []shape // of templates, in order
	// mostKinds is, for each template name that takes kinds, the most.
	mostKinds map[string]int
	mu        sync.Mutex
	matched   map[string]match
	// lengths remembers the lengths of a template's statements at a
	// size (by template index, then size): Match's search by length
	// asks for the same few sizes of every template again and again,
	// and rendering one at its largest size builds thousands of
	// placeholders.
	lengths map[[2]int][]int
}

type match struct {
	st Statement
	ok bool
}

// New returns the catalog of the statements a store opened with d and
// opts sends: core's, and the browse package's. Only opts.Prefix and
// opts.ClockOffset change the text.
func New(d dialect.Dialect, opts core.Options) (*Catalog, error) {
	coreTemplates, ok := storesql.Exposed[storesql.CoreTemplates[core.Options, core.Item, core.Run, core.Barrier]]()
	if !ok {
		return nil, errors.New("plenum: catalog: core exposes no statement templates")
	}
	s, templates, err := coreTemplates(d, opts, recordClaims)
	if err != nil {
		return nil, err
	}
	browseTemplates, ok := storesql.Exposed[storesql.BrowseTemplates[core.Item, core.Run, core.Barrier]]()
	if !ok {
		return nil, errors.New("plenum: catalog: the browse package exposes no statement templates")
	}
	c := &Catalog{templates: append(templates, browseTemplates(s)...), matched: map[string]match{}, lengths: map[[2]int][]int{}, mostKinds: map[string]int{}}
	for _, t := range c.templates {
		c.shapes = append(c.shapes, shapeOf(t))
		if t.Kinds > 0 {
			c.mostKinds[t.Name] = max(c.mostKinds[t.Name], t.Kinds)
		}
	}
	return c, nil
}

// Statements renders every template: each fixed one once, and each
// size-dependent one at every size given (LargestSize for its largest; a
// size above a template's largest renders the largest). With no sizes, it
// renders them at 1, 2 and LargestSize. A template that also takes a
// count of kinds (Statement.Kinds) is rendered at those sizes for each
// count of kinds among the sizes too (LargestSize, or a size above the
// most, for the most). Sizes below 1 other than LargestSize are an
// *InputError.
func (c *Catalog) Statements(sizes ...int) ([]Statement, error) {
	if len(sizes) == 0 {
		sizes = []int{1, 2, LargestSize}
	}
	for i, n := range sizes {
		if n < 1 && n != LargestSize {
			return nil, &core.InputError{Field: fmt.Sprintf("sizes[%d]", i), Reason: fmt.Sprintf("%d: a size is at least 1, or LargestSize", n)}
		}
	}
	var out []Statement
	for _, e := range c.templates {
		if e.Kinds > 0 && !c.kindsAmong(e, sizes) {
			continue
		}
		if e.Largest == 0 {
			for _, q := range e.Render(0) {
				out = append(out, Statement{Name: e.Name, Kinds: e.Kinds, SQL: q})
			}
			continue
		}
		largest := e.Largest
		var done []int
		for _, n := range sizes {
			if n == LargestSize || n > largest {
				n = largest
			}
			if slices.Contains(done, n) {
				continue
			}
			done = append(done, n)
			for _, q := range e.Render(n) {
				out = append(out, Statement{Name: e.Name, Size: n, Kinds: e.Kinds, SQL: q})
			}
		}
	}
	return out, nil
}

// Statement returns the statement the template name renders at size
// with kinds kinds (0 for a template that takes none), as the store
// sends it, and whether the catalog has one: a fixed template's for any
// size, and, of a template that renders several statements (a claim of
// several), the first. A size above the template's largest is none.
func (c *Catalog) Statement(name string, size, kinds int) (Statement, bool) {
	for _, e := range c.templates {
		if e.Name != name || e.Kinds != kinds {
			continue
		}
		n := size
		if e.Largest == 0 {
			n = 0
		} else if size < 1 || size > e.Largest {
			continue
		}
		if qs := e.Render(n); len(qs) > 0 {
			return Statement{Name: name, Size: n, Kinds: kinds, SQL: qs[0]}, true
		}
	}
	return Statement{}, false
}

// kindsAmong reports whether e's count of kinds is one that sizes asks
// for: one of them, or the most for LargestSize and the sizes above it.
func (c *Catalog) kindsAmong(e storesql.Template, sizes []int) bool {
	most := c.mostKinds[e.Name]
	for _, n := range sizes {
		if n == LargestSize || n > most {
			n = most
		}
		if n == e.Kinds {
			return true
		}
	}
	return false
}

// Match returns the catalog statement whose text is exactly sql, at
// whatever size, and whether there is one. A statement of the dialect's own
// (Check, Begin, DDL) or of the migrations package is not matched. The
// answer for each text is remembered: Match is for tests that look up the
// statements of a run, many times each.
func (c *Catalog) Match(sql string) (Statement, bool) {
	c.mu.Lock()
	m, seen := c.matched[sql]
	c.mu.Unlock()
	if seen {
		return m.st, m.ok
	}
	m.st, m.ok = c.find(sql)
	c.mu.Lock()
	c.matched[sql] = m
	c.mu.Unlock()
	return m.st, m.ok
}

func (c *Catalog) find(sql string) (Statement, bool) {
	for k, e := range c.templates {
		if e.Largest == 0 {
			if slices.Contains(c.shapes[k].fixed, sql) {
				return Statement{Name: e.Name, Kinds: e.Kinds, SQL: sql}, true
			}
			continue
		}
		shaped := c.shapedAs(k, sql)
		if len(shaped) == 0 {
			continue
		}
		var tried []int
		renders := func(n int) bool {
			if slices.Contains(tried, n) {
				return false
			}
			tried = append(tried, n)
			return slices.Contains(c.render(k, n), sql)
		}
		// The numbers written in sql first (a LIMIT names its size), then
		// the size at which each statement of the shape is as long as sql.
		for _, n := range countsIn(sql) {
			if n >= 1 && n <= e.Largest && renders(n) {
				return Statement{Name: e.Name, Size: n, Kinds: e.Kinds, SQL: sql}, true
			}
		}
		// Most statements grow by the same text for each one more (a
		// placeholder and a comma): their size follows from their length
		// at 1 and 2 without a search.
		for _, i := range shaped {
			if n, ok := c.sizeIfEvenSteps(k, i, len(sql)); ok && renders(n) {
				return Statement{Name: e.Name, Size: n, Kinds: e.Kinds, SQL: sql}, true
			}
		}
		for _, i := range shaped {
			switch c.growth(k, i) {
			case growsEvenly:
				continue // its one size by length was tried above
			case growsInDigits:
				// Its size is written in it, as a number (tried above),
				// or not at all: then every size renders it.
				if renders(1) {
					return Statement{Name: e.Name, Size: 1, Kinds: e.Kinds, SQL: sql}, true
				}
				continue
			}
			if n := c.sizeByLength(k, i, len(sql)); renders(n) {
				return Statement{Name: e.Name, Size: n, Kinds: e.Kinds, SQL: sql}, true
			}
		}
	}
	return Statement{}, false
}

// shape is what an entry's renderings share, to pass over the entries a
// statement cannot be cheaply: a fixed entry's statements, or, for each
// statement a sized one renders, the text before and after what its size
// changes.
type shape struct {
	fixed    []string
	prefixes []string
	suffixes []string
	largest  int
}

func shapeOf(e storesql.Template) shape {
	if e.Largest == 0 {
		return shape{fixed: e.Render(0)}
	}
	one, two := e.Render(1), e.Render(2)
	sh := shape{largest: e.Largest}
	for i := range min(len(one), len(two)) {
		p := sharedPrefix(one[i], two[i])
		q := sharedSuffix(one[i][p:], two[i][p:])
		sh.prefixes = append(sh.prefixes, one[i][:p])
		sh.suffixes = append(sh.suffixes, one[i][len(one[i])-q:])
	}
	return sh
}

// shapedAs returns the positions of the statements entry k renders
// whose shape sql has: the text before and after what the size changes.
func (c *Catalog) shapedAs(k int, sql string) []int {
	sh := c.shapes[k]
	var out []int
	for i := range sh.prefixes {
		if len(sql) >= len(sh.prefixes[i])+len(sh.suffixes[i]) && strings.HasPrefix(sql, sh.prefixes[i]) && strings.HasSuffix(sql, sh.suffixes[i]) {
			out = append(out, i)
		}
	}
	return out
}

// sizeByLength returns the smallest size at which the i-th statement of
// entry k is at least length long (a statement grows with its size).
func (c *Catalog) sizeByLength(k, i, length int) int {
	largest := c.shapes[k].largest
	at := func(n int) int {
		ls := c.lengthsAt(k, n)
		if i >= len(ls) {
			return -1
		}
		return ls[i]
	}
	hi := 1
	for hi < largest && at(hi) < length {
		hi = min(2*hi, largest)
	}
	lo := max(1, hi/2)
	for lo < hi {
		mid := (lo + hi) / 2
		if at(mid) < length {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return hi
}

// sizeIfEvenSteps returns the size at which the i-th statement of entry
// k is length long if each size adds to it what size 2 adds to size 1,
// and whether there is such a size within the entry's largest.
func (c *Catalog) sizeIfEvenSteps(k, i, length int) (int, bool) {
	one, two := c.lengthsAt(k, 1), c.lengthsAt(k, 2)
	if i >= len(one) || i >= len(two) || two[i] <= one[i] {
		return 0, false
	}
	step := two[i] - one[i]
	if length < one[i] || (length-one[i])%step != 0 {
		return 0, false
	}
	n := 1 + (length-one[i])/step
	return n, n <= c.shapes[k].largest
}

// How a statement's length follows its size, as far as its lengths at 1,
// 2 and its entry's largest size tell.
const (
	growsOtherwise = iota // found by a search on its length
	// growsEvenly: each size adds the same text (a placeholder and a
	// comma), so that sizeIfEvenSteps is the only size at which it is a
	// given length.
	growsEvenly
	// growsInDigits: the same length at 1 and 2, so that its size is
	// written in it as a number (a LIMIT) or not at all.
	growsInDigits
)

func (c *Catalog) growth(k, i int) int {
	largest := c.shapes[k].largest
	one, two, most := c.lengthsAt(k, 1), c.lengthsAt(k, 2), c.lengthsAt(k, largest)
	switch {
	case i >= len(one) || i >= len(two) || i >= len(most):
		return growsOtherwise
	case two[i] == one[i]:
		return growsInDigits
	case two[i] > one[i] && most[i] == one[i]+(largest-1)*(two[i]-one[i]):
		return growsEvenly
	}
	return growsOtherwise
}

// render renders entry k at size n, and remembers the statements'
// lengths for sizeByLength.
func (c *Catalog) render(k, n int) []string {
	qs := c.templates[k].Render(n)
	ls := make([]int, len(qs))
	for i, q := range qs {
		ls[i] = len(q)
	}
	c.mu.Lock()
	c.lengths[[2]int{k, n}] = ls
	c.mu.Unlock()
	return qs
}

// lengthsAt returns the lengths of entry k's statements at size n,
// rendering them only the first time.
func (c *Catalog) lengthsAt(k, n int) []int {
	c.mu.Lock()
	ls, ok := c.lengths[[2]int{k, n}]
	c.mu.Unlock()
	if ok {
		return ls
	}
	c.render(k, n)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lengths[[2]int{k, n}]
}

// countsIn are the numbers written in sql as words of their own (after a
// space or a parenthesis, as a LIMIT's), not those of numbered
// placeholders ($1, :1), which would make every placeholder a candidate.
func countsIn(sql string) []int {
	var out []int
	for i := 0; i < len(sql); i++ {
		if sql[i] < '0' || sql[i] > '9' || (i > 0 && sql[i-1] != ' ' && sql[i-1] != '(') {
			continue
		}
		j := i
		for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(sql[i:j]); err == nil {
			out = append(out, n)
		}
		i = j
	}
	return out
}

func sharedSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
