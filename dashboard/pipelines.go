package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"github.com/plenumdb/plenum/pipeline"
)

// checkPipelines refuses Options.Pipelines with a graph of no name, or
// two of one name.
func checkPipelines(gs []pipeline.Graph) error {
	seen := map[string]bool{}
	for i, g := range gs {
		switch {
		case g.Pipeline == "":
			return fmt.Errorf("dashboard: Pipelines[%d] has no Pipeline name", i)
		case seen[g.Pipeline]:
			return fmt.Errorf("dashboard: Pipelines[%d]: pipeline %q is given twice", i, g.Pipeline)
		}
		seen[g.Pipeline] = true
	}
	return nil
}

// pipelinesPage is the data of the list of pipelines.
type pipelinesPage struct {
	Pipelines []pipelineRow
}

// pipelineRow is one pipeline of the list.
type pipelineRow struct {
	Name  string
	Nodes int
	Kinds []string
}

// pipelines lists the pipelines the program gave (Options.Pipelines).
func (h *handler) pipelines(w http.ResponseWriter, r *http.Request) {
	if q := newQuery(r.URL.RawQuery); !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	var p pipelinesPage
	for _, g := range h.opts.Pipelines {
		row := pipelineRow{Name: g.Pipeline}
		seen := map[string]bool{}
		var walk func(n pipeline.GraphNode)
		walk = func(n pipeline.GraphNode) {
			if n.Kind != "chain" {
				row.Nodes++
				if !seen[n.Kind] {
					seen[n.Kind] = true
					row.Kinds = append(row.Kinds, n.Kind)
				}
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(g.Root)
		p.Pipelines = append(p.Pipelines, row)
	}
	h.render(w, r, http.StatusOK, "pipelines", "Pipelines", time.Time{}, p)
}

// pipelinePage is the data of a pipeline's page.
type pipelinePage struct {
	Graph *graphView
}

// pipelineGraph draws one pipeline's definition.
func (h *handler) pipelineGraph(w http.ResponseWriter, r *http.Request) {
	if q := newQuery(r.URL.RawQuery); !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	g, ok := h.graph(r.PathValue("name"))
	if !ok {
		h.fail(w, r, http.StatusNotFound, "Not found", "The program gave the dashboard no pipeline of that name (Options.Pipelines).")
		return
	}
	h.render(w, r, http.StatusOK, "pipeline", "Pipeline "+g.Pipeline, time.Time{}, pipelinePage{Graph: layoutGraph(g, nil)})
}

// graph returns the pipeline named name, if the program gave it.
func (h *handler) graph(name string) (pipeline.Graph, bool) {
	for _, g := range h.opts.Pipelines {
		if g.Pipeline == name {
			return g, true
		}
	}
	return pipeline.Graph{}, false
}
