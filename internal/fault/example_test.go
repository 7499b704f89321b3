package fault_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/plenumdb/plenum/internal/fault"
)

// A worker process of the chaos harness reads its rules from a spec and
// installs them for the whole process.
func ExampleParse() {
	rules, err := fault.Parse("complete-before-arrival=kill@0.01, after-claim=hang:40s+10*1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range fault.Points() {
		if r, ok := rules[p]; ok {
			fmt.Printf("%s=%s\n", p, r)
		}
	}
	// undo := fault.Install(rules); defer undo()
	// Output:
	// after-claim=hang:40s+10*1
	// complete-before-arrival=kill@0.01
}

// A test scopes a rule to the calls made with one context, so that tests
// running in parallel in one process see only their own faults.
func ExampleWith() {
	ctx := fault.With(context.Background(), fault.FireBeforeJoin, fault.Rule{Action: fault.Error, Times: 1})
	err := fault.Hit(ctx, fault.FireBeforeJoin) // where the core fires a barrier
	fmt.Println(errors.Is(err, fault.ErrInjected), err)
	fmt.Println(fault.Hit(ctx, fault.FireBeforeJoin))                  // Times: 1
	fmt.Println(fault.Hit(context.Background(), fault.FireBeforeJoin)) // another context
	// Output:
	// true plenum/fault: injected error at fire-before-join
	// <nil>
	// <nil>
}
