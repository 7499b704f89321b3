package worker

import (
	"encoding/json"
	"fmt"

	"github.com/plenumdb/plenum/core"
)

// Codec seals the args and results of a kind at rest, and opens them:
// *seal.Keyring is one (AES-GCM under named, rotating keys). Seal must
// return a JSON document (core stores only JSON), and Open must return
// an error, never panic, for a value it cannot open. aad is the context
// the value is bound to (PayloadAAD, ResultAAD): a value sealed for one
// context must not open in another.
type Codec interface {
	Seal(aad, plain []byte) ([]byte, error)
	Open(aad, sealed []byte) ([]byte, error)
}

// PayloadAAD is the additional data a kind's payloads are sealed with:
// the kind's name, so that a sealed payload moved to an item of another
// kind does not open there. Not the item's id, which does not exist yet
// when the payload is sealed (Kind.Spec), nor the queue, which an item
// of the same kind may change between enqueues without its args
// changing meaning.
func PayloadAAD(kind string) []byte { return []byte("plenum:payload:" + kind) }

// ResultAAD is the additional data a kind's results are sealed with:
// the kind's name, set apart from its payloads', so that a result cannot
// be passed off as a payload, or as another kind's result.
func ResultAAD(kind string) []byte { return []byte("plenum:result:" + kind) }

// OpenResult returns the result of item, an item of a kind whose results
// c seals (KindConfig.Codec), opened: for the readers of a finished
// item's result (core.Store.Get). An item without a result gives nil.
func OpenResult(c Codec, item core.Item) (json.RawMessage, error) {
	if len(item.Result) == 0 || c == nil {
		return item.Result, nil
	}
	b, err := c.Open(ResultAAD(item.Kind), item.Result)
	if err != nil {
		return nil, fmt.Errorf("plenum/worker: open the result of %s (kind %q): %w", item.ID, item.Kind, err)
	}
	return b, nil
}

// sealArgs is b sealed as a payload of kind with c (b itself when c is
// nil).
func sealArgs(c Codec, kind string, b []byte) ([]byte, error) {
	if c == nil {
		return b, nil
	}
	return c.Seal(PayloadAAD(kind), b)
}

// codec is the Codec of r's kind, nil for none.
func (r *run) codec() Codec {
	if r.h == nil {
		return nil
	}
	return r.h.cfg.Codec
}
