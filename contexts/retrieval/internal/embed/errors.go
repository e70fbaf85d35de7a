package embed

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrMalformedResponse marks an embeddings response that does not follow the
// API: bad JSON, a wrong number of vectors, missing or repeated indexes.
var ErrMalformedResponse = errors.New("malformed embeddings response")

// DimensionError says a provider returned vectors of another dimension than
// configured, typically after a model change on the server. Nothing of the
// call is returned: storing a mix of dimensions would break the index.
type DimensionError struct {
	Model string
	Want  int
	Got   int
}

func (e *DimensionError) Error() string {
	return fmt.Sprintf("embed: model %q returned %d-dimensional vectors, configured dimension is %d", e.Model, e.Got, e.Want)
}

// StatusError is a non-success HTTP answer from the provider. URL has its
// password redacted and Body is a short excerpt with the API key removed.
type StatusError struct {
	URL    string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("embed: POST %s: status %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}
