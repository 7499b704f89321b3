package dashboard

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static/dashboard.css
var css []byte

// pages holds each page's template, parsed once with the layout.
var pages = parsePages()

func parsePages() map[string]*template.Template {
	names := []string{"overview", "items", "item", "runs", "run", "barrier", "owners", "stuck", "limits", "schedules", "pipelines", "pipeline", "confirm", "outcome", "error"}
	m := make(map[string]*template.Template, len(names))
	for _, n := range names {
		m[n] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/graph.html", "templates/"+n+".html"))
	}
	return m
}

// page is what every template gets: the layout's fields and the page's own
// data in Data.
type page struct {
	Title   string
	Site    string
	Base    string
	Nav     string
	Now     time.Time
	Actions bool
	Data    any
}

// render writes the page named name with status. The page is rendered into
// a buffer first so that a template error is a clean 500, not half a page.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, now time.Time, data any) {
	p := page{Title: title, Site: h.opts.Title, Base: baseOf(r), Nav: name, Now: now, Actions: h.opts.Actions, Data: data}
	var buf bytes.Buffer
	if err := pages[name].Execute(&buf, p); err != nil {
		h.log().Error("dashboard: template", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// errorPage is the data of the error template.
type errorPage struct {
	Status   int
	Heading  string
	Message  string
	Problems []string
}

// fail renders an error page.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, heading, msg string, problems ...string) {
	h.render(w, r, status, "error", heading, time.Time{}, errorPage{Status: status, Heading: heading, Message: msg, Problems: problems})
}

// css serves the embedded stylesheet.
func (h *handler) css(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write(css)
}
