package core

import (
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// expansions are the placeholders the core's statements are written with,
// each followed by the text it stands for:
//
//	{items} {processes} {barriers}  the tables, under the store's prefix
//	{attempts} {queues} {schedules}
//	{runs} {signals} {lanes}
//	{runcontext} {itemmeta} {progress}
//	{now}                           the database clock
//	{now+?}                         the clock plus a bound number of microseconds
//	{lock}                          the dialect's row lock clause
//	{json?}                         a bound JSON value
//	{text?}                         a bound Text value used as an expression
//	                                (bind it with dialect.TextArg)
//
// A placeholder shows every bind parameter its text takes (the '?' of
// {now+?}, {json?} and {text?}), so that a statement as written in the core has as
// many '?' as it takes arguments: a test counts them for every statement.
func expansions(d dialect.Dialect, names migrations.Names, offset time.Duration) []string {
	now := d.Now(offset)
	return []string{
		"{items}", names.Items,
		"{processes}", names.Processes,
		"{barriers}", names.Barriers,
		"{schedules}", names.Schedules,
		"{attempts}", names.Attempts,
		"{queues}", names.Queues,
		"{runs}", names.Runs,
		"{signals}", names.Signals,
		"{lanes}", names.Lanes,
		"{runcontext}", names.RunContext,
		"{itemmeta}", names.ItemMeta,
		"{progress}", names.Progress,
		"{now+?}", d.AddMicros(now),
		"{now}", now,
		"{lock}", d.Capabilities().LockClause,
		"{json?}", d.Param(dialect.JSON),
		"{text?}", d.Param(dialect.Text),
	}
}
