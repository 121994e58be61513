// Package ui is the web page of `chartgate ui`: every workflow of a
// project's store with its state, phase instructions, call budgets, last
// move and pending approval; one workflow's statechart with its active
// states lit and updated live; its run history as a timeline; and Approve
// and Reject buttons for the transition it waits for.
//
//	srv, err := ui.New(&ui.Options{Gate: gate, Chart: diagram.New(machine, config)})
//	ln, err := net.Listen("tcp", "127.0.0.1:0")
//	fmt.Println("open", srv.LoginURL(ln.Addr()))
//	err = srv.Serve(ctx, ln)
//
// # Access
//
// The page is an approval channel: approving there must need something
// the agent does not have. [New] makes a one-time token (256 random bits)
// that lives in the server's memory only; the command prints it on the
// terminal that starts it, as the URL /login?token=T ([Server.LoginURL]).
// Opening that URL once exchanges the token for a session cookie
// (HttpOnly, SameSite=Strict, random, unrelated to the token) and spends
// the token: a second use is refused, and a new link needs a new server.
// Every other request without the cookie is refused with 401. The cookie
// has no expiry: the browser keeps it until it closes. What a program of
// the same user can read beyond the agent's tools (the terminal's
// scrollback, the browser's memory) needs OS isolation, not this page.
//
// Requests must name the bound address or localhost (with its port) in
// their Host header, or they are refused with 403: a page of another site
// that rebinds its DNS name to 127.0.0.1 sends its own name and gets
// nothing. State-changing requests are POST, with the Origin of the
// server itself and the session's CSRF token in the X-CSRF-Token header
// (the page reads it from /api/session, which another site's page cannot).
// Responses forbid framing and scripts from anywhere but the server
// (Content-Security-Policy), and are not cached.
//
// # Live updates
//
// The list shows every workflow [mcpbind.Gate.Workflows] returns; one
// known by its store key only (a session's workflow without a name) has
// its state and pending approval there, but no page of its own and no
// buttons, since the gate's methods name workflows by id or name.
//
// The page follows a workflow (and the list) with server-sent events: the
// server reads the store every [Options.Poll] (250 ms by default) for each
// open page and sends the view when it changed. It works on every store
// the gate works on; nothing but the gate's own methods is used.
//
// # Approvals
//
// Approve and Reject answer the pending approval by its id with a
// [mcpbind.Grant] signed with [Options.ApproverKey] (channel "page"), by
// [Options.By] (chartgate ui: the OS user who started it, to whom the
// login link was shown). The gate applies it only if the signature
// verifies with its own key: a page started without the key shows
// approvals and cannot answer them. The login token is what keeps the
// agent off the page: it is printed on the terminal that started the
// server and kept in memory only.
package ui
