package dashboard

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/plenumdb/plenum/core"
)

// pipelineKind begins the kind of every item of a pipeline (package
// pipeline's kindPrefix): the item of a step of the pipeline "squares" is
// of kind "pipeline:squares", whichever step it runs.
const pipelineKind = "pipeline:"

// pipelineStep is what the run tree reads of a pipeline item's payload:
// the step it runs, and its role there. The fields are those of package
// pipeline's item envelope; TestRun_TreeNamesPipelineSteps runs a
// pipeline to keep them the same.
type pipelineStep struct {
	Node string `json:"node"`
	// Role is "collapse" or "combine" for the join of an expand or a
	// divide, empty for the item that runs the node, whose Op says what
	// the node does: step, route, await, wait, repeat, expand or divide.
	Role string `json:"role"`
	Op   string `json:"op"`
}

// stepOf names the pipeline step an item runs and its role (expand,
// collapse, await, ...), or returns empty strings for an item that is no
// pipeline's, whose kind is then the best label.
func stepOf(it *core.Item) (name, role string) {
	if !strings.HasPrefix(it.Kind, pipelineKind) {
		return "", ""
	}
	var s pipelineStep
	if json.Unmarshal(it.Payload, &s) != nil {
		return "", ""
	}
	return s.Node, cmp.Or(s.Role, s.Op)
}
