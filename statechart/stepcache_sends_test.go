// This file checks the sends of steps an actor system's cells take from
// the step cache: a recorded step that sends to a child must fail as on
// the general path once the child is gone, or in an actor where it never
// existed.

package statechart

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// sendsKidSrc is a child that answers PING with PONG to its parent.
const sendsKidSrc = `{"id":"kid","initial":"on","states":{"on":{"on":{
	"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`

// sendsMidSrc spawns the child "k" on SPAWN and stops it on KILL, sends it
// PING on PING and forwards it FWD; it counts the PONGs it gets, and the
// TICKs.
const sendsMidSrc = `{"id":"mid","initial":"a","context":{"pongs":0,"ticks":0},"states":{"a":{"on":{
	"SPAWN":{"actions":{"type":"xstate.spawnChild","params":{"src":"kid","id":"k"}}},
	"KILL":{"actions":{"type":"xstate.stopChild","params":{"id":"k"}}},
	"PING":{"actions":{"type":"xstate.sendTo","params":{"to":"k","event":{"type":"PING"}}}},
	"FWD":{"actions":{"type":"xstate.forwardTo","params":{"to":"k"}}},
	"TICK":{"actions":{"type":"xstate.assign","params":{"ticks":{"$inc":1}}}},
	"PONG":{"actions":{"type":"xstate.assign","params":{"pongs":{"$inc":1}}}}}}}}`

// sendsTopSrc invokes mid as "m" and forwards it SPAWN, KILL, PING, FWD
// and TICK; RESTART starts another mid in its place.
const sendsTopSrc = `{"id":"top","initial":"run","states":{"run":{
	"invoke":{"src":"mid","id":"m"},
	"on":{"RESTART":{"target":"run","reenter":true},
		"SPAWN":{"actions":{"type":"xstate.forwardTo","params":{"to":"m"}}},
		"KILL":{"actions":{"type":"xstate.forwardTo","params":{"to":"m"}}},
		"PING":{"actions":{"type":"xstate.forwardTo","params":{"to":"m"}}},
		"FWD":{"actions":{"type":"xstate.forwardTo","params":{"to":"m"}}},
		"TICK":{"actions":{"type":"xstate.forwardTo","params":{"to":"m"}}}}}}}`

// sendsMachines compiles top, with mid and kid; with general, none of
// them may use the step cache.
func sendsMachines(t *testing.T, general bool) *Machine {
	t.Helper()
	kid, err := Compile([]byte(sendsKidSrc), nil)
	if err != nil {
		t.Fatal(err)
	}
	mid, err := Compile([]byte(sendsMidSrc), &Options{Implementations: Implementations{Actors: map[string]ActorLogic{"kid": kid}}})
	if err != nil {
		t.Fatal(err)
	}
	top, err := Compile([]byte(sendsTopSrc), &Options{Implementations: Implementations{Actors: map[string]ActorLogic{"mid": mid}}})
	if err != nil {
		t.Fatal(err)
	}
	if general {
		// A machine with history states takes no step from the cache.
		kid.hasHistory, mid.hasHistory, top.hasHistory = true, true, true
	}
	return top
}

// sendBothJSON sends ev to the Actors general and cached and fails the
// test unless they return the same error and their snapshots, children
// included, have the same JSON; it returns the cached Actor's snapshot.
func sendBothJSON(t *testing.T, general, cached *Actor, ev Event, where string) *Snapshot {
	t.Helper()
	ctx := context.Background()
	errA, errB := general.Send(ctx, ev), cached.Send(ctx, ev)
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		t.Fatalf("%s: general path error %v, cached %v", where, errA, errB)
	}
	a, err := json.Marshal(general.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(cached.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("%s: general path\n%s\ncached\n%s", where, a, b)
	}
	return cached.Snapshot()
}

// TestStepCacheSendToMissingChild records steps of mid that send to its
// child k while k exists, then takes them again once k was stopped
// (KILL) or in a new mid that never spawned one (RESTART; the new cell
// may get the runner, and the step cache, of the one it replaces): the
// send must fail and put mid, and with it top, in error, as on the
// general path and in XState (sendTo throws for an actor it cannot
// resolve), instead of the event being dropped.
func TestStepCacheSendToMissingChild(t *testing.T) {
	ctx := context.Background()
	fast := 0
	for _, seq := range []string{
		"SPAWN TICK TICK PING FWD PING FWD PING FWD KILL TICK TICK TICK PING",
		"SPAWN TICK TICK FWD PING FWD PING FWD PING KILL TICK TICK TICK FWD",
		"SPAWN TICK TICK PING PING PING PING RESTART TICK TICK TICK PING",
		"SPAWN TICK TICK FWD FWD FWD FWD RESTART TICK TICK TICK FWD",
		"SPAWN PING PING PING PING RESTART SPAWN TICK TICK PING KILL TICK TICK TICK PING",
	} {
		general, cached := NewActor(sendsMachines(t, true), nil), NewActor(sendsMachines(t, false), nil)
		for _, a := range []*Actor{general, cached} {
			if err := a.Start(ctx); err != nil {
				t.Fatalf("%s: %v", seq, err)
			}
		}
		var s *Snapshot
		for i, typ := range strings.Fields(seq) {
			if e, ok := cached.sys.root.snap.x().children.get("m"); ok && e.cell != nil && e.cell.r != nil {
				fast += e.cell.r.cache.fast // the steps of mid so far
			}
			s = sendBothJSON(t, general, cached, Event{Type: typ}, fmt.Sprintf("%s: event %d (%s)", seq, i, typ))
		}
		if s.Status() != StatusError || !strings.Contains(fmt.Sprint(s.Err()), `no child with that id`) {
			t.Fatalf("%s: status %v, error %v; want the error of a send to a missing child", seq, s.Status(), s.Err())
		}
		cached.Stop()
		general.Stop()
	}
	if fast == 0 {
		t.Fatal("no event taken by fastStep: the test does not exercise it")
	}
}
