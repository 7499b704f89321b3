module github.com/plenumdb/plenum/sqlcheck

go 1.26.0

require (
	github.com/antlr4-go/antlr/v4 v4.13.1
	github.com/bytebase/parser v0.0.0-20260417075056-57b6ef7a2640
	github.com/plenumdb/plenum v0.0.0-00010101000000-000000000000
	github.com/sijms/go-ora/v2 v2.9.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
)

replace github.com/plenumdb/plenum => ../

// The PL/SQL grammar is generated for bytebase's fork of the ANTLR runtime.
replace github.com/antlr4-go/antlr/v4 => github.com/bytebase/antlr/v4 v4.0.0-20240827034948-8c385f108920
