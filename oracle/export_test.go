package oracle

// Internals the external tests check.
var (
	ClaimBlock = claimBlock
	ClaimRead  = claimRead
	SplitTop   = splitTop
	LockID     = lockID
)
