package ui

// This file defines the server: access (token, session cookie, Host,
// Origin and CSRF checks) and the routes.

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/chartgate/chartgate/internal/diagram"
	"github.com/chartgate/chartgate/mcpbind"
)

//go:embed static
var static embed.FS

// Options configure a [Server]. Gate and Chart are required.
type Options struct {
	// Gate is the gate of the project's workflow on its store.
	Gate *mcpbind.Gate
	// Chart is the drawing of the gate's machine.
	Chart *diagram.Chart
	// Poll is how often an open page's view is read from the store
	// (default 250 ms).
	Poll time.Duration
	// By is who approves, for the run history (default "ui"): the person
	// who started the server, to whom its login token was shown.
	By string
	// Authenticated reports that By is proven (the OS user who started
	// the server), not only claimed, for the run history.
	Authenticated bool
	// ApproverKey signs the page's grants (mcpbind.ApprovalToken); the
	// gate verifies them with its own Options.ApproverKey. Without it the
	// page shows approvals but cannot answer them.
	ApproverKey []byte
	// Logger logs refused requests and failed approvals (default: none).
	Logger *slog.Logger
}

// Server serves the page. Its methods are safe for concurrent use.
type Server struct {
	gate   *mcpbind.Gate
	svg    string
	poll   time.Duration
	by     string
	logger *slog.Logger
	token  string
	key    []byte
	authd  bool

	mu        sync.Mutex
	spent     bool   // the token was exchanged
	session   string // the session cookie's value, once logged in
	csrf      string
	hosts     map[string]bool // the Host headers accepted
	instructs map[string]string
}

// cookieName is the session cookie's name.
const cookieName = "chartgate_ui"

// New returns a server with a fresh one-time token.
func New(opts *Options) (*Server, error) {
	if opts == nil || opts.Gate == nil || opts.Chart == nil {
		return nil, errors.New("ui: Options.Gate and Options.Chart are required")
	}
	s := &Server{gate: opts.Gate, svg: opts.Chart.SVG(nil), poll: opts.Poll, by: opts.By, logger: opts.Logger,
		key: slices.Clone(opts.ApproverKey), authd: opts.Authenticated,
		token: secret(), instructs: map[string]string{}}
	if s.poll <= 0 {
		s.poll = 250 * time.Millisecond
	}
	if s.by == "" {
		s.by = "ui"
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	for _, sm := range opts.Gate.States() {
		if sm.Instructions != "" {
			s.instructs[sm.StateID] = sm.Instructions
		}
	}
	return s, nil
}

// secret returns 256 random bits in hex.
func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// LoginURL is the URL that exchanges the one-time token for a session,
// for a server listening on addr.
func (s *Server) LoginURL(addr net.Addr) string {
	return "http://" + addr.String() + "/login?token=" + s.token
}

// Serve serves on ln until ctx is done, then shuts down (open pages are
// disconnected). Requests must name ln's address or localhost with its
// port in their Host header.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.allowHosts(ln.Addr())
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	// The open pages' streams end with ctx (BaseContext); anything else
	// gets a moment, then is closed.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// allowHosts sets the Host headers accepted: the address itself, and
// localhost with its port.
func (s *Server) allowHosts(addr net.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts = map[string]bool{addr.String(): true}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		port := strconv.Itoa(tcp.Port)
		s.hosts["localhost:"+port] = true
		if tcp.IP.IsLoopback() {
			s.hosts[net.JoinHostPort(tcp.IP.String(), port)] = true
		}
	}
}

// Handler returns the server's handler, with every check. [Server.Serve]
// uses it; a caller that serves it otherwise must name the accepted Host
// headers with [Server.AllowHost] first, or every request is refused.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.login)
	mux.HandleFunc("GET /{$}", s.file("static/index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET /app.js", s.file("static/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /app.css", s.file("static/app.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET /api/session", s.sessionInfo)
	mux.HandleFunc("GET /api/chart", s.chart)
	mux.HandleFunc("GET /api/workflows", s.workflowsJSON)
	mux.HandleFunc("GET /api/workflow", s.workflowJSON)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /api/approve", s.approveHandler)
	return s.guard(mux)
}

// AllowHost adds a Host header value the server accepts (host:port).
func (s *Server) AllowHost(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts == nil {
		s.hosts = map[string]bool{}
	}
	s.hosts[host] = true
}

// guard applies the checks of the package documentation, "Access".
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		s.mu.Lock()
		hostOK := s.hosts[r.Host]
		s.mu.Unlock()
		if !hostOK {
			s.refuse(w, r, http.StatusForbidden, "this server answers to its own address only (Host "+strconv.Quote(r.Host)+")")
			return
		}
		if r.URL.Path == "/login" {
			next.ServeHTTP(w, r)
			return
		}
		if !s.loggedIn(r) {
			s.refuse(w, r, http.StatusUnauthorized, "not logged in: open the URL chartgate ui printed")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Method != http.MethodPost {
				s.refuse(w, r, http.StatusMethodNotAllowed, "method not allowed")
				return
			}
			if o := r.Header.Get("Origin"); o != "http://"+r.Host {
				s.refuse(w, r, http.StatusForbidden, "a request from another origin ("+strconv.Quote(o)+")")
				return
			}
			s.mu.Lock()
			csrf := s.csrf
			s.mu.Unlock()
			if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-CSRF-Token")), []byte(csrf)) != 1 {
				s.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	s.logger.Info("ui: refused", "method", r.Method, "path", r.URL.Path, "status", code, "reason", msg)
	http.Error(w, msg, code)
}

func (s *Server) loggedIn(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.session)) == 1
}

// login exchanges the one-time token for the session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ok := !s.spent && subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("token")), []byte(s.token)) == 1
	if ok {
		s.spent = true
		s.session, s.csrf = secret(), secret()
	}
	session := s.session
	s.mu.Unlock()
	if !ok {
		s.refuse(w, r, http.StatusUnauthorized, "wrong or used token: each chartgate ui prints a link that works once")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A page that moves on, rather than a redirect: the next request is
	// then made by the page, same-site, with the cookie.
	_, _ = io.WriteString(w, `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/"><title>chartgate</title><a href="/">chartgate</a>`)
}

func (s *Server) file(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := fs.ReadFile(static, name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(data)
	}
}

func (s *Server) sessionInfo(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	csrf := s.csrf
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"csrf": csrf, "by": s.by})
}

func (s *Server) chart(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = io.WriteString(w, s.svg)
}

func (s *Server) workflowsJSON(w http.ResponseWriter, r *http.Request) {
	v, err := s.listView(r.Context())
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) workflowJSON(w http.ResponseWriter, r *http.Request) {
	ref, err := parseRef(r.URL.Query().Get("w"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	v, err := s.detailView(r.Context(), ref)
	if err != nil {
		writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, mcpbind.ErrUnknownWorkflow):
		return http.StatusNotFound
	case errors.Is(err, errNoKey), errors.Is(err, mcpbind.ErrApprovalToken):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// events sends the view of the list (no w) or of workflow w each time it
// changes, as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	var view func(context.Context) (any, error)
	if q := r.URL.Query().Get("w"); q != "" {
		ref, err := parseRef(q)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		view = func(ctx context.Context) (any, error) { return s.detailView(ctx, ref) }
	} else {
		view = func(ctx context.Context) (any, error) { return s.listView(ctx) }
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	ctx := r.Context()
	tick := time.NewTicker(s.poll)
	defer tick.Stop()
	var last []byte
	idle := 0
	for {
		v, err := view(ctx)
		if err != nil {
			v = map[string]string{"error": err.Error()}
		}
		data, _ := json.Marshal(v)
		switch {
		case string(data) != string(last):
			if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
				return
			}
			flusher.Flush()
			last, idle = data, 0
		case idle*int(s.poll) >= int(15*time.Second):
			// A comment now and then, so that a closed page is noticed.
			if _, err := io.WriteString(w, ": idle\n\n"); err != nil {
				return
			}
			flusher.Flush()
			idle = 0
		default:
			idle++
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

type approveRequest struct {
	Workflow string `json:"workflow"`
	Approve  bool   `json:"approve"`
}

func (s *Server) approveHandler(w http.ResponseWriter, r *http.Request) {
	var req approveRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not {\"workflow\", \"approve\"}: " + err.Error()})
		return
	}
	ref, err := parseRef(req.Workflow)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	tr, err := s.approve(r.Context(), ref, req.Approve)
	switch {
	case errors.Is(err, mcpbind.ErrNoPendingApproval):
		writeJSON(w, http.StatusConflict, map[string]string{"error": "workflow " + req.Workflow + " waits for no approval"})
		return
	case err != nil:
		s.logger.Warn("ui: approval failed", "workflow", req.Workflow, "error", err)
		writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"from": stateText(tr.From), "to": stateText(tr.To), "by": s.by})
}

// approve approves or rejects the approval a workflow waits for, with a
// grant signed by the approver key: the one call of the page to the
// gate's approval API.
func (s *Server) approve(ctx context.Context, ref mcpbind.Ref, approve bool) (*mcpbind.Transition, error) {
	if len(s.key) == 0 {
		return nil, errNoKey
	}
	pa, err := s.gate.Approval(ctx, ref)
	if err != nil {
		return nil, err
	}
	at := time.Now()
	return s.gate.Approve(ctx, ref, mcpbind.Grant{ID: pa.ID, Approve: approve, By: s.by, Authenticated: s.authd, Time: at,
		Token: mcpbind.ApprovalToken(s.key, pa.ID, approve, s.by, at), Channel: mcpbind.ChannelPage})
}

// errNoKey: the server was started without the approver key.
var errNoKey = errors.New("ui: this page has no approver key, so it cannot answer approvals: a person creates one with chartgate approve --init and restarts chartgate ui")

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
