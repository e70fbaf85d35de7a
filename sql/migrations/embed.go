// Package migrations embeds OML's numbered SQL migrations
// (NNNN_verb_noun.up.sql / .down.sql). sqlc reads the same files as the
// schema, so generated code and the database never disagree.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
