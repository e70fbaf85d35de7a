package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/omlhub/oml/contexts/access/internal/app"
	"github.com/omlhub/oml/platform/errs"
	"github.com/omlhub/oml/platform/transport"
)

// Enrol serves the enrolment routes, which take no key: POST /v1/enrol and
// GET /v1/enrol/status (seed 002, issue 15).
type Enrol struct {
	e *app.Enroller
	// trust are the proxies whose X-Forwarded-For is honoured.
	trust []netip.Prefix
	// waiters bounds the status polls waiting at once.
	waiters chan struct{}
}

// maxWaiters bounds the status long-polls a replica holds at once.
const maxWaiters = 256

// NewEnrol returns the enrolment handlers.
func NewEnrol(e *app.Enroller, trust []netip.Prefix) *Enrol {
	return &Enrol{e: e, trust: trust, waiters: make(chan struct{}, maxWaiters)}
}

// Routes registers the routes at their full paths.
func (h *Enrol) Routes(r chi.Router) {
	r.Post("/v1/enrol", transport.Handler(h.enrol))
	r.Get("/v1/enrol/status", transport.Handler(h.status))
}

// MaxStatusWait bounds a status long-poll.
const MaxStatusWait = 30 * time.Second

func (h *Enrol) enrol(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Reason string `json:"reason"`
	}
	if err := transport.Decode(r, &in); err != nil {
		return err
	}
	out, err := h.e.Enrol(r.Context(), in.Reason, h.peer(r))
	if err != nil {
		return err
	}
	transport.WriteJSON(w, http.StatusCreated, map[string]any{
		"request_id": out.RequestID, "token": out.Token, "status": "pending", "expires_at": out.ExpiresAt,
	})
	return nil
}

// status is GET /v1/enrol/status?wait=N with the pending token as bearer:
// pending, approved (the token now works as a key) or refused; with wait,
// it answers the moment the request is decided (checked every second), or
// after N seconds (at most 30). At most maxWaiters polls wait at once on
// a replica; past that one is refused, retryable.
func (h *Enrol) status(w http.ResponseWriter, r *http.Request) error {
	token, ok := transport.Bearer(r.Header.Get("Authorization"))
	if !ok {
		return errs.New(errs.AuthMissing, "every call presents a bearer key; there is no anonymous call", "send Authorization: Bearer <the pending token>")
	}
	// The token first (401 before anything else, like every key), then
	// the query.
	st, err := h.e.Status(r.Context(), token)
	if err != nil {
		return err
	}
	q, err := transport.Query(r, "wait")
	if err != nil {
		return err
	}
	secs, err := transport.QueryInt(q, "wait")
	if err != nil {
		return err
	}
	if secs < 0 || secs > int(MaxStatusWait/time.Second) {
		return errs.Invalid("wait: 0–%d seconds, got %d", int(MaxStatusWait/time.Second), secs)
	}
	if st.Status == "pending" && secs > 0 {
		select {
		case h.waiters <- struct{}{}:
			defer func() { <-h.waiters }()
		default:
			return errs.Retry(errs.LimitRate, "enrolment status waits are bounded per replica", 5*time.Second,
				"too many status polls are waiting; retry in 5 s (or ask without wait)")
		}
		deadline := time.NewTimer(time.Duration(secs) * time.Second)
		defer deadline.Stop()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
	wait:
		for st.Status == "pending" {
			select {
			case <-r.Context().Done():
				return r.Context().Err()
			case <-deadline.C:
				break wait
			case <-tick.C:
				if st, err = h.e.Status(r.Context(), token); err != nil {
					return err
				}
			}
		}
	}
	out := map[string]any{"request_id": st.RequestID, "status": st.Status}
	if st.KeyID != "" {
		out["key_id"] = st.KeyID
	}
	if st.Note != "" {
		out["note"] = st.Note
	}
	transport.WriteJSON(w, http.StatusOK, out)
	return nil
}

// peer is who asks: the socket peer, or, when that is a trusted proxy,
// the nearest address in X-Forwarded-For (every line of it, read right to
// left) that is not one of the trusted proxies. IPv6 peers count by /64,
// which one host commonly holds whole.
func (h *Enrol) peer(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap().WithZone("")
	if h.trusted(addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			addr = a.Unmap().WithZone("")
			if !h.trusted(addr) {
				break
			}
		}
	}
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

func (h *Enrol) trusted(a netip.Addr) bool {
	for _, p := range h.trust {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
