package dashboard_test

import (
	"fmt"
	"html"
	"net/url"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/pipeline/pipelinesuite"
)

// TestPipelineGraph_DrawsEverySuiteDefinition describes every definition
// the pipelines' suite registers, gives them to the dashboard, and checks
// that each one's page draws every node (and every join, and every
// flow's label), and that the suite covers every kind of node.
func TestPipelineGraph_DrawsEverySuiteDefinition(t *testing.T) {
	t.Parallel()
	var graphs []pipeline.Graph
	for _, d := range pipelinesuite.Definitions(t) {
		g, err := pipeline.Describe(d)
		if err != nil {
			t.Fatal(err)
		}
		graphs = append(graphs, g)
	}
	c := serve(t, newDashboard(t, openStore(t, databases[0]), dashboard.Options{Pipelines: graphs}), "")
	_, list := c.get("/pipelines")
	kinds := map[string]bool{}
	for _, g := range graphs {
		if !strings.Contains(list, fmt.Sprintf(`<tr data-name="%s">`, g.Pipeline)) {
			t.Errorf("the list of pipelines has no row for %s", g.Pipeline)
		}
		status, body := c.get("/pipelines/" + url.PathEscape(g.Pipeline))
		if status != 200 {
			t.Errorf("/pipelines/%s: status %d", g.Pipeline, status)
			continue
		}
		var walk func(n pipeline.GraphNode)
		walk = func(n pipeline.GraphNode) {
			kinds[n.Kind] = true
			if n.Kind != "chain" {
				if want := fmt.Sprintf(`data-node="%s" data-role="" data-kind="%s"`, n.Name, n.Kind); !strings.Contains(body, want) {
					t.Errorf("pipeline %s: no box %s", g.Pipeline, want)
				}
			}
			if n.Join != "" {
				if want := fmt.Sprintf(`data-node="%s" data-role="%s"`, n.Name, n.Join); !strings.Contains(body, want) {
					t.Errorf("pipeline %s: no join box %s", g.Pipeline, want)
				}
			}
			if n.Label != "" && !strings.Contains(body, `class="edge-label"`+" x=") || n.Label != "" && !strings.Contains(body, ">"+n.Label+"</text>") {
				t.Errorf("pipeline %s: no label %q on the flow of %s", g.Pipeline, n.Label, n.Name)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(g.Root)
	}
	for _, k := range []string{"step", "chain", "expand", "divide", "route", "await", "wait", "repeat", "sleep"} {
		if !kinds[k] {
			t.Errorf("no definition of the suite has a node of kind %s", k)
		}
	}
}

// TestPipelineGraph_UnknownKindAndNamesEscaped draws a graph with a kind
// the dashboard does not know (a plain box, its flow below it) and
// names that are markup, which show as text.
func TestPipelineGraph_UnknownKindAndNamesEscaped(t *testing.T) {
	t.Parallel()
	g := pipeline.Graph{Pipeline: "odd", Root: pipeline.GraphNode{Kind: "chain", Children: []pipeline.GraphNode{
		{Kind: "step", Name: `<script>alert(1)</script>`},
		{Kind: "someday", Name: "loop", Children: []pipeline.GraphNode{{Kind: "step", Name: "body", Label: `<i>again</i>`}}},
	}}}
	c := serve(t, newDashboard(t, openStore(t, databases[0]), dashboard.Options{Pipelines: []pipeline.Graph{g}}), "")
	status, body := c.get("/pipelines/odd")
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	for _, want := range []string{
		`<g class="box kind-other" data-node="loop" data-role="" data-kind="someday">`,
		`data-node="body" data-role="" data-kind="step"`,
		html.EscapeString(`<script>alert(1)</script>`),
		"&lt;i&gt;again&lt;/i&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>", "<i>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page has %s unescaped", bad)
		}
	}
	if status, _ := c.get("/pipelines/nope"); status != 404 {
		t.Errorf("an unknown pipeline: status %d, want 404", status)
	}
	if _, err := dashboard.New(openStore(t, databases[0]), dashboard.Options{Pipelines: []pipeline.Graph{g, g}}); err == nil || !strings.Contains(err.Error(), "Pipelines[1]") {
		t.Errorf("a pipeline given twice: %v, want an error naming Pipelines[1]", err)
	}
}
