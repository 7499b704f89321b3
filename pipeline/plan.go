package pipeline

// How a run executes. Every item of a run executes one node: a step, an
// await, the choice of a route, the fan-out of a divide or an expand, or
// the fan-in (combine, collapse) of one, the last two being the join
// items of the barrier the fan-out opened. When an item's node is done
// with an output, the definition's tree says what follows (next): the
// next node of a chain, the end of a branch (the item completes, arriving
// at the barrier of the fan-out that made the branch), or the end of the
// run. The tree, not the items' ancestry, pairs a collapse with its
// expand: however the branches of a fan-out nest, its join is its own.

// after is what follows a node that finished.
type after struct {
	// start is the node to run next, with the output as its input, in an
	// item that takes the finished item's place at its barrier (a chain's
	// handover).
	start *node
	// arrive says the output ends a branch of a fan-out: the item
	// completes with it, and counts at the fan-out's barrier.
	arrive bool
	// finish says the output is the run's.
	finish bool
}

// next says what follows n once it has finished.
func next(n *node) after {
	for {
		p := n.parent
		switch {
		case p == nil:
			return after{finish: true}
		case p.kind == kindChain && n.pos+1 < len(p.seq):
			return after{start: entry(p.seq[n.pos+1])}
		case p.kind == kindChain, p.kind == kindRoute, p.kind == kindWaitUntil:
			n = p
		default: // a divide's branch or an expand's body
			return after{arrive: true}
		}
	}
}

// entry is the node whose item starts flow n: a chain starts with its
// first node; every other node has its own item.
func entry(n *node) *node {
	for n.kind == kindChain {
		n = n.seq[0]
	}
	return n
}
