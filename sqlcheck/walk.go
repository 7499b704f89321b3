package sqlcheck

import "reflect"

// collect returns every value of type T reachable from root, in the
// order a depth-first walk meets them. Both parsers' trees are plain Go
// structs, slices, maps and interfaces, so one reflective walk finds a
// node wherever the grammar put it (a CTE, a subquery in a WHERE, a
// derived table) without a visitor for every node type.
func collect[T any](root any) []T {
	var out []T
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if !v.IsValid() {
			return
		}
		if v.CanInterface() {
			if t, ok := v.Interface().(T); ok {
				out = append(out, t)
			}
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(root))
	return out
}
