package fault

// Armed reports whether Hit looks past its first load in this process.
func Armed() bool { return active.Load() != nil }
