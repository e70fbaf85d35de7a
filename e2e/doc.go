// Package e2e holds the tests that build the real binaries and drive them
// against real Postgres and S3 through public clients: the MCP Go SDK
// client, plain HTTP and the oml CLI. It also holds the architecture test.
package e2e
