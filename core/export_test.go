package core

// CountBinds exports countBinds to the package's external tests (the
// bind counter checks the statements the store runs with it).
var CountBinds = countBinds
