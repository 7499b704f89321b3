package dashboard_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// records is a slog.Handler that keeps every record, its attributes
// flattened to text.
type records struct {
	mu   sync.Mutex
	list []record
}

// record is one kept record.
type record struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (*records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) WithAttrs([]slog.Attr) slog.Handler     { return h }
func (h *records) WithGroup(string) slog.Handler          { return h }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, rec)
	return nil
}

// take returns the records kept since the last take.
func (h *records) take() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.list
	h.list = nil
	return l
}

// TestActions_AuditLog: every action posted is one record on
// Options.Logger naming the caller (Options.Caller), the target and the
// outcome, refusals and forged posts included.
func TestActions_AuditLog(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		log := &records{}
		c := serve(t, newDashboard(t, st, dashboard.Options{
			Actions:   true,
			Authorize: allow,
			Caller:    func(r *http.Request) string { return "ops@example.com" },
			Logger:    slog.New(log),
		}), "")
		check := func(what string, want map[string]string, level slog.Level) {
			t.Helper()
			recs := log.take()
			if len(recs) != 1 {
				t.Fatalf("%s: %d audit records, want 1: %+v", what, len(recs), recs)
			}
			r := recs[0]
			if r.msg != "dashboard action" || r.level != level {
				t.Errorf("%s: record %q at %v, want %q at %v", what, r.msg, r.level, "dashboard action", level)
			}
			want["caller"] = "ops@example.com"
			for k, v := range want {
				if r.attrs[k] != v {
					t.Errorf("%s: %s = %q, want %q (record %v)", what, k, r.attrs[k], v, r.attrs)
				}
			}
			if r.attrs["remote_addr"] == "" {
				t.Errorf("%s: no remote_addr: %v", what, r.attrs)
			}
		}
		item := "/items/" + f.dead.String() + "/revive"
		token, _ := c.confirm(item)
		if recs := log.take(); len(recs) != 0 {
			t.Errorf("a confirm page is audited: %+v", recs)
		}
		c.post(item, url.Values{"csrf": {token}}, nil)
		check("revive", map[string]string{"action": "revive", "item": f.dead.String(), "outcome": "done", "status": "200"}, slog.LevelInfo)
		c.post(item, url.Values{"csrf": {token}}, nil)
		check("revive again", map[string]string{"action": "revive", "item": f.dead.String(), "outcome": "refused", "status": "409"}, slog.LevelInfo)
		c.post(item, url.Values{"csrf": {token}}, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") })
		check("cross-origin revive", map[string]string{"action": "revive", "item": f.dead.String(), "outcome": "forbidden", "status": "403"}, slog.LevelWarn)
		c.post("/runs/"+f.run.String()+"/signal", url.Values{"csrf": {token}, "name": {"approve"}, "key": {"k-9"}}, nil)
		check("signal", map[string]string{"action": "signal", "run": f.run.String(), "signal": "approve", "key": "k-9", "outcome": "done"}, slog.LevelInfo)
		c.post("/runs/"+f.halted.String()+"/steps/"+f.haltedDed.String()+"/revive", url.Values{"csrf": {token}}, nil)
		check("revive step", map[string]string{"action": "revive-step", "run": f.halted.String(), "item": f.haltedDed.String(), "outcome": "done"}, slog.LevelInfo)
		c.post("/runs/"+f.run.String()+"/cancel", url.Values{"csrf": {token}}, nil)
		check("cancel run", map[string]string{"action": "cancel-run", "run": f.run.String(), "outcome": "done"}, slog.LevelInfo)
	})
}
