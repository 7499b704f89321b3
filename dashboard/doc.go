// Package dashboard is Plenum's web dashboard: an http.Handler that shows a
// store's queues, their flow control limits and lanes, items, pipeline runs,
// owners and stuck fan-ins, and, when enabled, revives, cancels, signals and
// sets or deletes limits through the store's own (fenced) API.
//
// Mount it in your own server, behind your own authentication:
//
//	h, err := dashboard.New(store, dashboard.Options{
//		Prefix:    "/admin/plenum",
//		Authorize: func(r *http.Request) error { return checkAdmin(r) },
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/admin/plenum/", h)
//
// or, with the prefix stripped by the mux (Options.Prefix left empty; links
// follow the request's own URI):
//
//	mux.Handle("/admin/plenum/", http.StripPrefix("/admin/plenum", h))
//
// "plenum dashboard --dialect NAME --dsn DSN" runs it alone, on 127.0.0.1.
//
// Given the program's pipeline definitions (Options.Pipelines, from
// pipeline.Engine.Graphs), it draws each as a graph, an inline SVG laid
// out on the server, and a run's page draws its steps' states over its
// pipeline's graph.
//
// # Safe by default
//
//   - Only the host names it serves: a request whose Host is not a
//     loopback name or address, nor listed in Options.AllowedHosts, is
//     refused with 421 before anything else runs, so that a name an
//     attacker's DNS rebinds to the dashboard's address gets nothing.
//     With an Authorize hook and no list, every name is served (the
//     application's credentials do not follow a rebound name); a hook
//     that trusts the network must list the names.
//   - Read-only unless Options.Actions is set. Read pages call only the
//     store's reads, so a database role with SELECT grants is enough.
//   - Actions need Options.Authorize (it runs on every request), unless
//     Options.AllowUnauthenticatedActions says the handler only listens on
//     loopback: New refuses the combination otherwise.
//   - Every action is confirmed on a page of its own and sent as a POST
//     that carries a CSRF token (an HMAC of a SameSite=Strict cookie under
//     a per-handler secret) and a same-origin Origin or Referer header.
//   - Pages are html/template (everything shown is escaped), every query
//     parameter is checked (a clear 400 page otherwise), unknown ids are 404,
//     and every response carries a Content-Security-Policy of 'self' only,
//     X-Frame-Options DENY, nosniff and a same-origin Referrer-Policy.
//   - No JavaScript and no network: the one stylesheet is embedded.
//
// # Audit trail
//
// Every action posted, done or refused, is one record on Options.Logger
// (slog.Default() unless set), message "dashboard action", with the
// action, its item or run (a signal's name and key too; a limit's queue,
// key and posted fields), the outcome
// (done, refused, forbidden, bad-request, not-found, error, aborted), the
// HTTP status, the message shown, the caller as Options.Caller names it
// and the remote address. To keep the trail apart from the application's
// log, give the dashboard a logger of its own:
//
//	audit := slog.New(slog.NewJSONHandler(auditFile, nil))
//	h, err := dashboard.New(store, dashboard.Options{
//		Authorize: checkAdmin,
//		Caller:    func(r *http.Request) string { return userOf(r) },
//		Logger:    audit,
//		Actions:   true,
//	})
//
// Records are logged with the request's context, so a slog.Handler can
// add what the application's middleware stored there (a request id).
//
// Times are shown relative to the database clock (Store.Now), the only clock
// Plenum trusts.
package dashboard
