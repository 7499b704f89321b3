package mysql

// ClaimSelect exports claimSelect to the package's external tests (the
// EXPLAIN test explains the very statement Claim runs).
var ClaimSelect = claimSelect
