package httpapi

import "time"

// noModTime leaves Last-Modified out: the ETag (the content digest) is
// the validator.
var noModTime time.Time
