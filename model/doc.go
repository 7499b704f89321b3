// Package model holds the model of Plenum's storage protocol for the SPIN
// model checker (plenum.pml) and its tests: the bounded check of every
// interleaving, the planted bugs each checked to give a counterexample,
// and the test that ties every statement of the catalog that writes a
// Plenum table to a step of the model. README.md says what is and is not
// modelled. The package has no API.
package model
