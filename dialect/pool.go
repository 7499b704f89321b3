package dialect

// DefaultMaxOpenConns is how many connections the *sql.DB returned by a
// built-in dialect's Open (postgres, mysql, sqlite, oracle, cockroach)
// opens at most at once. database/sql's own default is no bound at all, so
// a burst of work (a dashboard's requests, a handler fanning out
// goroutines) could open connections until the server refused everyone
// (PostgreSQL's max_connections, SQLSTATE 53300), the application's
// workers included, or, on SQLite, until the process ran out of file
// handles. Beyond the bound, a caller waits in database/sql for a
// connection to come back.
//
// 25 fits a worker of the README's size (10 handlers need 17 connections
// on PostgreSQL: worker.MinOpenConns), a dashboard mounted beside it (4
// reads at once by default) and a few of the application's own calls,
// while four such processes stay within PostgreSQL's default
// max_connections of 100. Change it with db.SetMaxOpenConns before handing
// the *sql.DB to core.Open; worker.New refuses a pool too small for its
// settings.
const DefaultMaxOpenConns = 25
