package fault

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Parse reads a spec of rules, the form in which the chaos harness hands
// faults to the worker processes it starts:
//
//	spec     = rule { ("," | " ") rule }
//	rule     = point "=" action { modifier }
//	action   = "error" | "panic" | "kill" | "stall:" duration | "hang:" duration
//	modifier = "@" probability | "+" skip | "*" times
//
// "stall" listens to its context, "hang" does not (Rule.IgnoreContext);
// durations are Go's (time.ParseDuration). For example
// "complete-before-arrival=kill@0.01" kills the process at one completion
// in a hundred, and "after-claim=hang:40s+10*1" stalls the eleventh claimed
// handler's start for 40 s, once. An empty spec gives no rules. A point
// named twice, an unknown point or action, or a bad number is an error.
func Parse(spec string) (map[Point]Rule, error) {
	rules := map[Point]Rule{}
	for _, text := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		p, r, err := parseRule(text)
		if err != nil {
			return nil, fmt.Errorf("plenum/fault: rule %q: %w", text, err)
		}
		if _, dup := rules[p]; dup {
			return nil, fmt.Errorf("plenum/fault: rule %q: point %s named twice", text, p)
		}
		rules[p] = r
	}
	return rules, nil
}

func parseRule(text string) (Point, Rule, error) {
	name, rest, ok := strings.Cut(text, "=")
	if !ok {
		return "", Rule{}, fmt.Errorf("want point=action")
	}
	p := Point(name)
	if !slices.Contains(Points(), p) {
		return "", Rule{}, fmt.Errorf("unknown point %q (known: %v)", name, Points())
	}
	end := strings.IndexAny(rest, "@+*")
	if end < 0 {
		end = len(rest)
	}
	r, err := parseAction(rest[:end])
	if err != nil {
		return "", Rule{}, err
	}
	for mods := rest[end:]; mods != ""; {
		op := mods[0]
		next := strings.IndexAny(mods[1:], "@+*")
		if next < 0 {
			next = len(mods) - 1
		}
		arg := mods[1 : 1+next]
		mods = mods[1+next:]
		switch op {
		case '@':
			r.Prob, err = strconv.ParseFloat(arg, 64)
		case '+':
			r.Skip, err = strconv.Atoi(arg)
		case '*':
			r.Times, err = strconv.Atoi(arg)
		}
		if err != nil {
			return "", Rule{}, fmt.Errorf("modifier %c%s: %w", op, arg, err)
		}
	}
	if r.Prob == 0 && strings.Contains(rest, "@") {
		return "", Rule{}, fmt.Errorf("probability 0 never fires: leave the rule out")
	}
	if err := r.validate(); err != nil {
		return "", Rule{}, err
	}
	return p, r, nil
}

func parseAction(text string) (Rule, error) {
	name, arg, hasArg := strings.Cut(text, ":")
	var r Rule
	switch name {
	case "error":
		r.Action = Error
	case "panic":
		r.Action = Panic
	case "kill":
		r.Action = Kill
	case "stall", "hang":
		if !hasArg {
			return r, fmt.Errorf("%s needs a duration, as in %s:30s", name, name)
		}
		d, err := time.ParseDuration(arg)
		if err != nil {
			return r, err
		}
		r.Action, r.Stall, r.IgnoreContext = Stall, d, name == "hang"
		return r, nil
	default:
		return r, fmt.Errorf("unknown action %q (error, panic, kill, stall:D, hang:D)", name)
	}
	if hasArg {
		return r, fmt.Errorf("%s takes no argument", name)
	}
	return r, nil
}

// String returns r in Parse's form (without the point): "kill@0.01",
// "hang:40s+10*1". A Call rule, which Parse cannot express, gives "call";
// an Error rule's own Err is not shown.
func (r Rule) String() string {
	var b strings.Builder
	b.WriteString(r.Action.String())
	if r.Action == Stall {
		if r.IgnoreContext {
			b.Reset()
			b.WriteString("hang")
		}
		b.WriteString(":" + r.Stall.String())
	}
	if r.Prob > 0 && r.Prob < 1 {
		b.WriteString("@" + strconv.FormatFloat(r.Prob, 'g', -1, 64))
	}
	if r.Skip > 0 {
		b.WriteString("+" + strconv.Itoa(r.Skip))
	}
	if r.Times > 0 {
		b.WriteString("*" + strconv.Itoa(r.Times))
	}
	return b.String()
}
