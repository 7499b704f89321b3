package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
)

// csrfCookie is the cookie whose HMAC is the form token: a double-submit
// token that a cross-site page can neither read nor forge without the
// handler's secret.
const csrfCookie = "plenum_csrf"

// csrfField is the form field that carries the token.
const csrfField = "csrf"

// csrfKey is the per-handler HMAC key.
type csrfKey []byte

// token returns the form token for the cookie value v.
func (k csrfKey) token(v string) string {
	m := hmac.New(sha256.New, k)
	m.Write([]byte("plenum-dashboard-csrf\x00"))
	m.Write([]byte(v))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns the token for the request's cookie, setting a new cookie
// first when the request has none (or a malformed one).
func (h *handler) issue(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && validCookie(c.Value) {
		return h.csrf.token(c.Value)
	}
	b := make([]byte, 32)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	path := baseOf(r)
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: v, Path: path,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return h.csrf.token(v)
}

// validCookie reports whether v looks like a cookie issue made.
func validCookie(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 32
}

// checkCSRF says why a POST is refused, or "" when it may go on: it must come
// from this origin (Origin, or Referer when Origin is absent) and carry the
// token of its cookie.
func (h *handler) checkCSRF(r *http.Request) string {
	if reason := sameOrigin(r); reason != "" {
		return reason
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || !validCookie(c.Value) {
		return "the form's security cookie is missing: reload the page and try again"
	}
	got := r.PostFormValue(csrfField)
	if got == "" || !hmac.Equal([]byte(got), []byte(h.csrf.token(c.Value))) {
		return "the form's security token is missing or wrong: reload the page and try again"
	}
	return ""
}

// sameOrigin says why the request does not come from a page of this host,
// or "". A browser sends Origin with every POST; Referer is the fallback
// (the dashboard's Referrer-Policy keeps it for same-origin requests).
// Neither header at all is refused too: no browser form sends that.
func sameOrigin(r *http.Request) string {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return "the request came from another site"
	}
	from := r.Header.Get("Origin")
	what := "Origin"
	if from == "" || from == "null" {
		from, what = r.Header.Get("Referer"), "Referer"
	}
	if from == "" {
		return "the request has neither an Origin nor a Referer header"
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return "the request's " + what + " header is malformed"
	}
	if u.Host != r.Host {
		return "the request came from another origin (" + what + " " + clip(u.Host) + ", this host " + clip(r.Host) + ")"
	}
	return ""
}
