// Package pipeline runs durable pipelines on Plenum's worker runtime:
// steps with JSON input and output, composed by Then (chain), Expand and
// ExpandStream (fan out over a list or a stream, then collapse), Divide
// (fixed parallel branches, then combine), Route (choose what runs next
// from the input) and Await (wait for a signal), nested to any depth.
package pipeline
